// Package fakechat is a small stand-in for an OpenAI-compatible
// chat-completions provider on 127.0.0.1, so real agent CLIs that speak that
// protocol (Kimi Code, OpenCode) can be driven into chosen failures without
// leaving the machine.
//
// It answers `POST <any prefix>/chat/completions` (for example
// `/v1/chat/completions`, or `/ok/v1/chat/completions` when a test puts a
// label in the base URL path), streamed as SSE for `"stream":true` and as one
// JSON object otherwise, and `GET <any prefix>/models` with the one model it
// knows. Every other request gets 404.
//
// A scenario is a queue of modes consumed by main-loop requests, the chat
// requests that carry a non-empty `tools` array. Requests without tools
// (title or summary side calls) always get a plain success, so they do not
// eat the scenario. Once the queue is empty every main-loop request
// succeeds; Push appends modes while the server runs.
//
// Modes (bodies as in docs/agents/kimi.md A11):
//
//	ok           200, the text ReplyText (finish_reason "stop", usage in the last chunk)
//	400          400 invalid_request_error, a context-length message
//	401          401 invalid_authentication_error "Invalid Authentication"
//	404          404 not_found_error, model not found
//	500          500 server_error "fake internal server error"
//	502          502 server_error "bad gateway"
//	503          503 engine_overloaded_error "The engine is currently overloaded, …"
//	529          529 overloaded_error "Overloaded"
//	429-rate     429 rate_limit_reached_error "… max RPM …", header Retry-After: 1
//	429-quota    429 OpenAI insufficient_quota ("You exceeded your current quota, …", code insufficient_quota)
//	429-balance  429 Kimi exceeded_current_quota_error ("… suspended due to insufficient balance, …")
//	drop         the connection is closed without an answer
//
// Every answer carries an `x-request-id` header (req-fake-<hex>), which
// clients report as the failing request's id.
package fakechat

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"nudge/e2e/fakeprovider"
)

// The answer modes that are not HTTP errors.
const (
	ModeOK   = fakeprovider.ModeOK
	ModeDrop = "drop"
	// ModeSide is logged for chat requests without tools; it is not a
	// scenario mode.
	ModeSide = "side"
)

// ReplyText is the assistant text of every success.
const ReplyText = "Hello from the fake chat server."

// ModelID is the model listed by GET /models; any requested model is answered.
const ModelID = "fake-model"

// failure is one HTTP error answer: status, OpenAI-style error type, code and
// message, and an optional Retry-After header.
type failure struct {
	status     int
	errType    string
	code       string
	message    string
	retryAfter string
}

// failures maps a scenario mode to its error answer (docs/agents/kimi.md A11).
var failures = map[string]failure{
	"400":         {status: 400, errType: "invalid_request_error", message: "Invalid request: the prompt exceeds the model's maximum context length"},
	"401":         {status: 401, errType: "invalid_authentication_error", message: "Invalid Authentication"},
	"404":         {status: 404, errType: "not_found_error", code: "model_not_found", message: "Not found the model fake-model or Permission denied"},
	"500":         {status: 500, errType: "server_error", message: "fake internal server error"},
	"502":         {status: 502, errType: "server_error", message: "bad gateway"},
	"503":         {status: 503, errType: "engine_overloaded_error", message: "The engine is currently overloaded, please try again later"},
	"529":         {status: 529, errType: "overloaded_error", message: "Overloaded"},
	"429-rate":    {status: 429, errType: "rate_limit_reached_error", retryAfter: "1", message: "Your account org-fake request reached organization max RPM: 3, please try again after 1 seconds"},
	"429-quota":   {status: 429, errType: "insufficient_quota", code: "insufficient_quota", message: "You exceeded your current quota, please check your plan and billing details."},
	"429-balance": {status: 429, errType: "exceeded_current_quota_error", message: "Your account org-fake is suspended due to insufficient balance, please recharge your account or check your plan and billing details"},
}

// Modes lists every scenario mode, in the order of the package doc.
func Modes() []string {
	return []string{ModeOK, "400", "401", "404", "500", "502", "503", "529", "429-rate", "429-quota", "429-balance", ModeDrop}
}

// api is the chat-completions protocol as the shared fake server plays it.
var api = fakeprovider.API{Name: "fakechat", Modes: Modes(), Serve: serve}

// Server answers chat-completions requests per its scenario and logs each one.
type Server = fakeprovider.Server

// Request is one logged request.
type Request = fakeprovider.Request

// New returns a server that plays scenario and appends its request log to
// logPath ("" keeps the log in memory only). Unknown modes are refused.
func New(scenario []string, logPath string) (*Server, error) {
	return fakeprovider.New(api, scenario, logPath)
}

// ParseScenario splits a comma-separated scenario ("500,ok") into modes and
// rejects unknown ones.
func ParseScenario(s string) ([]string, error) { return api.ParseScenario(s) }

// chatBody is the part of a chat-completions request the fake looks at.
type chatBody struct {
	Model    string                 `json:"model"`
	Stream   bool                   `json:"stream"`
	Tools    []json.RawMessage      `json:"tools"`
	Messages []fakeprovider.Message `json:"messages"`
}

// serve answers one request.
func serve(s *Server, w http.ResponseWriter, r *http.Request) {
	rec := fakeprovider.NewRequest(r, "req-fake-")
	var body chatBody
	fakeprovider.DecodeBody(r, &body)
	rec.Model, rec.Stream, rec.Tools = body.Model, body.Stream, len(body.Tools)
	rec.LastUserText = fakeprovider.LastUserText(body.Messages, "text")
	if n := len(body.Messages); n > 0 {
		rec.LastRole = body.Messages[n-1].Role
	}
	if rec.Model == "" {
		rec.Model = ModelID
	}
	w.Header().Set("x-request-id", rec.RequestID)

	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions"):
		rec.Mode = ModeSide
		if rec.Tools > 0 {
			rec.Mode = s.Next()
		}
		rec.Status = answer(w, rec)
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		rec.Mode, rec.Status = "models", http.StatusOK
		fakeprovider.WriteJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{
			map[string]any{"id": ModelID, "object": "model", "created": 1700000000, "owned_by": "fakechat"}}})
	default:
		rec.Mode, rec.Status = "not_found", http.StatusNotFound
		writeError(w, failure{status: http.StatusNotFound, errType: "not_found_error", message: "Not found: " + r.URL.Path})
	}
	s.Record(rec)
}

// answer writes the reply for a chat request and returns its status (0 when
// the connection was dropped).
func answer(w http.ResponseWriter, rec Request) int {
	if f, ok := failures[rec.Mode]; ok {
		writeError(w, f)
		return f.status
	}
	if rec.Mode == ModeDrop {
		hj, ok := w.(http.Hijacker)
		if !ok {
			slog.Error("fakechat: cannot drop the connection: no hijacker")
			return 0
		}
		conn, _, err := hj.Hijack()
		if err != nil {
			slog.Error("fakechat: drop the connection", "err", err)
			return 0
		}
		conn.Close()
		return 0
	}
	id := "chatcmpl-fake-" + fakeprovider.RandomHex(6)
	if !rec.Stream {
		fakeprovider.WriteJSON(w, http.StatusOK, map[string]any{
			"id": id, "object": "chat.completion", "created": time.Now().Unix(), "model": rec.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": ReplyText}}},
			"usage": usage(),
		})
		return http.StatusOK
	}
	streamText(w, id, rec.Model, ReplyText)
	return http.StatusOK
}

func usage() map[string]any {
	return map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
}

// streamText writes a streamed text success: a role chunk, content chunks, a
// last chunk with finish_reason "stop" and usage, then [DONE].
func streamText(w http.ResponseWriter, id, model, text string) {
	ev := fakeprovider.StartEvents(w)
	created := time.Now().Unix()
	chunk := func(delta map[string]any, finish any, withUsage bool) {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		if withUsage {
			c["usage"] = usage()
		}
		ev.Send("", c)
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil, false)
	for _, part := range strings.SplitAfter(text, " ") {
		chunk(map[string]any{"content": part}, nil, false)
	}
	chunk(map[string]any{}, "stop", true)
	ev.Raw("data: [DONE]\n\n")
}

// writeError writes an OpenAI-style error body.
func writeError(w http.ResponseWriter, f failure) {
	if f.retryAfter != "" {
		w.Header().Set("retry-after", f.retryAfter)
	}
	e := map[string]any{"message": f.message, "type": f.errType}
	if f.code != "" {
		e["param"], e["code"] = nil, f.code
	}
	fakeprovider.WriteJSON(w, f.status, map[string]any{"error": e})
}
