// Package fakeanthropic is a small stand-in for the Anthropic Messages API on
// 127.0.0.1, so a real Claude Code CLI can be driven into chosen failures
// (docs/agents/claude.md §10.3, §10.4) without leaving the machine.
//
// A scenario is a queue of answers ("500", "ok", …) consumed by main-loop
// requests, the `POST /v1/messages` calls that carry a non-empty `tools`
// array. ToolUse builds an answer that asks the CLI to call a tool; the
// request that carries its result back records the result's text. Side requests without tools always get a plain success, so they do
// not eat the scenario. Once the queue is empty every main-loop request
// succeeds.
package fakeanthropic

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"

	"nudge/e2e/fakeprovider"
)

// ModeOK answers with a streamed (or, for `stream:false`, a plain) text success.
const ModeOK = fakeprovider.ModeOK

// failure is one HTTP error answer: status, Anthropic `error.type` and message
// (docs/agents/claude.md §10.4).
type failure struct {
	status  int
	errType string
	message string
}

// failures maps a scenario mode to its error answer.
var failures = map[string]failure{
	"400": {http.StatusBadRequest, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum"},
	"401": {http.StatusUnauthorized, "authentication_error", "invalid x-api-key"},
	"403": {http.StatusForbidden, "permission_error", "Your API key does not have permission to use the specified resource."},
	"500": {http.StatusInternalServerError, "api_error", "Internal server error"},
	"502": {http.StatusBadGateway, "api_error", "Internal server error"},
	"503": {http.StatusServiceUnavailable, "api_error", "Internal server error"},
	"504": {http.StatusGatewayTimeout, "api_error", "Internal server error"},
	"529": {529, "overloaded_error", "Overloaded"},
}

// ReplyText is the assistant text of every success.
const ReplyText = "Hello from the fake server."

// api is the Messages API as the shared fake server plays it.
var api = fakeprovider.API{
	Name:     "fakeanthropic",
	Modes:    append([]string{ModeOK}, slices.Sorted(maps.Keys(failures))...),
	Serve:    serve,
	Scripted: func(mode string) bool { _, ok := toolCall(mode); return ok },
}

// toolUsePrefix starts a scenario mode that asks for a tool call.
const toolUsePrefix = "tool_use "

// ToolUse is the scenario mode that answers with a call of tool (its
// name as the CLI lists it, "mcp__nudge__wait") with input.
func ToolUse(tool string, input map[string]any) string {
	b, err := json.Marshal(toolUse{Name: tool, Input: input})
	if err != nil {
		panic(err) // input is the test's own literal
	}
	return toolUsePrefix + string(b)
}

// toolUse is the call a ToolUse mode asks for.
type toolUse struct {
	Name  string         `json:"name"`
	Input map[string]any `json:"input"`
}

// toolCall reads a ToolUse mode.
func toolCall(mode string) (toolUse, bool) {
	rest, ok := strings.CutPrefix(mode, toolUsePrefix)
	if !ok {
		return toolUse{}, false
	}
	var call toolUse
	if err := json.Unmarshal([]byte(rest), &call); err != nil || call.Name == "" {
		return toolUse{}, false
	}
	return call, true
}

// Server answers Messages API requests per its scenario and logs each one.
type Server = fakeprovider.Server

// Request is one logged request.
type Request = fakeprovider.Request

// New returns a server that plays scenario and appends its request log to
// logPath ("" keeps the log in memory only).
func New(scenario []string, logPath string) (*Server, error) {
	return fakeprovider.New(api, scenario, logPath)
}

// ParseScenario splits a comma-separated scenario ("500,ok") into modes and
// rejects unknown ones.
func ParseScenario(s string) ([]string, error) { return api.ParseScenario(s) }

// messagesBody is the part of a Messages API request the fake looks at.
type messagesBody struct {
	Model    string                 `json:"model"`
	Stream   bool                   `json:"stream"`
	Tools    []json.RawMessage      `json:"tools"`
	Messages []fakeprovider.Message `json:"messages"`
}

// serve answers one request.
func serve(s *Server, w http.ResponseWriter, r *http.Request) {
	rec := fakeprovider.NewRequest(r, "req_fake_")
	rec.RetryCount = r.Header.Get("X-Stainless-Retry-Count")
	var body messagesBody
	fakeprovider.DecodeBody(r, &body)
	rec.Model, rec.Stream, rec.Tools = body.Model, body.Stream, len(body.Tools)
	rec.LastUserText = fakeprovider.LastUserText(body.Messages, "text")
	rec.ToolResult = toolResults(body.Messages)
	if rec.Model == "" {
		rec.Model = "claude-opus-5-5"
	}
	w.Header().Set("request-id", rec.RequestID)

	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		rec.Mode, rec.Status = "count_tokens", http.StatusOK
		fakeprovider.WriteJSON(w, http.StatusOK, map[string]any{"input_tokens": 42})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		rec.Mode = "side"
		if rec.Tools > 0 {
			rec.Mode = s.Next()
		}
		rec.Status = answer(w, rec)
	default:
		rec.Mode, rec.Status = "not_found", http.StatusNotFound
		writeError(w, failure{http.StatusNotFound, "not_found_error", "Not found: " + r.URL.Path})
	}
	s.Record(rec)
}

// answer writes the reply for a /v1/messages request and returns its status.
func answer(w http.ResponseWriter, rec Request) int {
	if f, ok := failures[rec.Mode]; ok {
		writeError(w, f)
		return f.status
	}
	if call, ok := toolCall(rec.Mode); ok {
		answerToolUse(w, rec, call)
		return http.StatusOK
	}
	if !rec.Stream {
		fakeprovider.WriteJSON(w, http.StatusOK, map[string]any{
			"id": "msg_fake_" + fakeprovider.RandomHex(6), "type": "message", "role": "assistant", "model": rec.Model,
			"content":     []any{map[string]any{"type": "text", "text": ReplyText}},
			"stop_reason": "end_turn", "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": 10, "output_tokens": 5},
		})
		return http.StatusOK
	}
	streamText(w, rec.Model, ReplyText)
	return http.StatusOK
}

// streamText writes a streamed text success (docs/agents/claude.md §10.3).
func streamText(w http.ResponseWriter, model, text string) {
	ev := fakeprovider.StartEvents(w)
	event := func(data map[string]any) { ev.Send(data["type"].(string), data) }
	event(map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_fake_" + fakeprovider.RandomHex(6), "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
	}})
	event(map[string]any{"type": "content_block_start", "index": 0,
		"content_block": map[string]any{"type": "text", "text": ""}})
	event(map[string]any{"type": "ping"})
	for _, part := range strings.SplitAfter(text, " ") {
		event(map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": part}})
	}
	event(map[string]any{"type": "content_block_stop", "index": 0})
	event(map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 12}})
	event(map[string]any{"type": "message_stop"})
}

// writeError writes an Anthropic error body (docs/agents/claude.md §10.3).
func writeError(w http.ResponseWriter, f failure) {
	fakeprovider.WriteJSON(w, f.status, map[string]any{"type": "error",
		"error": map[string]any{"type": f.errType, "message": f.message}})
}

// answerToolUse writes an assistant turn that stops to call a tool.
func answerToolUse(w http.ResponseWriter, rec Request, call toolUse) {
	id := "toolu_fake_" + fakeprovider.RandomHex(6)
	input, _ := json.Marshal(call.Input)
	if !rec.Stream {
		fakeprovider.WriteJSON(w, http.StatusOK, map[string]any{
			"id": "msg_fake_" + fakeprovider.RandomHex(6), "type": "message", "role": "assistant", "model": rec.Model,
			"content":     []any{map[string]any{"type": "tool_use", "id": id, "name": call.Name, "input": call.Input}},
			"stop_reason": "tool_use", "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": 10, "output_tokens": 5},
		})
		return
	}
	ev := fakeprovider.StartEvents(w)
	event := func(data map[string]any) { ev.Send(data["type"].(string), data) }
	event(map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_fake_" + fakeprovider.RandomHex(6), "type": "message", "role": "assistant", "model": rec.Model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
	}})
	event(map[string]any{"type": "content_block_start", "index": 0,
		"content_block": map[string]any{"type": "tool_use", "id": id, "name": call.Name, "input": map[string]any{}}})
	event(map[string]any{"type": "content_block_delta", "index": 0,
		"delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
	event(map[string]any{"type": "content_block_stop", "index": 0})
	event(map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": "tool_use", "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 12}})
	event(map[string]any{"type": "message_stop"})
}

// toolResults is the text of the tool_result blocks of the last message
// when it is the user's (a string content or text blocks each).
func toolResults(msgs []fakeprovider.Message) string {
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != "user" {
		return ""
	}
	var blocks []struct {
		Type    string          `json:"type"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(msgs[len(msgs)-1].Content, &blocks) != nil {
		return ""
	}
	var texts []string
	for _, b := range blocks {
		if b.Type != "tool_result" {
			continue
		}
		var s string
		if json.Unmarshal(b.Content, &s) == nil {
			texts = append(texts, s)
			continue
		}
		var parts []struct{ Type, Text string }
		json.Unmarshal(b.Content, &parts)
		for _, p := range parts {
			if p.Type == "text" {
				texts = append(texts, p.Text)
			}
		}
	}
	return strings.Join(texts, "\n")
}
