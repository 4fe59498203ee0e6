// Package fakeresponses is a small stand-in for the OpenAI Responses API on
// 127.0.0.1, so a real Codex CLI can be driven into chosen failures
// (docs/agents/codex.md §9.2, §9.3) without leaving the machine.
//
// A scenario is a queue of answers ("500", "ok", …) consumed by main-loop
// requests: `POST /v1/responses` calls other than the TUI's background title
// request, which always succeeds so it does not eat the scenario. Once the
// queue is empty every main-loop request succeeds.
package fakeresponses

import (
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"nudge/e2e/fakeprovider"
)

// The scenario modes besides the plain HTTP failures.
const (
	// ModeOK answers with a streamed text success.
	ModeOK = fakeprovider.ModeOK
	// ModeUsageLimit answers 429 usage_limit_reached with the primary window
	// at 100 % and its reset time in the x-codex-* headers (§9.3).
	ModeUsageLimit = "usage-limit"
	// ModeTool answers with an exec_command call that needs approval
	// under approval_policy "on-request" (§9.2).
	ModeTool = "tool"
	// ModeSlow opens the stream and then only sends keepalives until the
	// client goes away: a turn that keeps working (§9.3 "cancel").
	ModeSlow = "slow"
	// ModeDrop opens the stream and drops the connection after its first
	// event: a stream cut before response.completed.
	ModeDrop = "drop"
)

// failure is one HTTP error answer with an OpenAI error body (§9.3).
type failure struct {
	status  int
	errType string
	code    any
	message string
}

// failures maps a scenario mode to its error answer.
var failures = map[string]failure{
	"500": {http.StatusInternalServerError, "server_error", nil, "The server had an error while processing your request."},
	"503": {http.StatusServiceUnavailable, "server_error", nil, "Service temporarily unavailable"},
	"401": {http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: dummy. You can find your API key at https://platform.openai.com/account/api-keys."},
	"400": {http.StatusBadRequest, "invalid_request_error", "context_length_exceeded", "Your input exceeds the context window of this model."},
}

// ReplyText is the assistant text of every success.
const ReplyText = "Hello from the fake server."

// titleMarker is in the body of the TUI's background title request (§9.2).
const titleMarker = "Generate a concise, single-line task title"

// api is the Responses API as the shared fake server plays it; each Server
// sets Serve to its own answers.
var api = fakeprovider.API{
	Name:     "fakeresponses",
	Modes:    []string{ModeOK, ModeUsageLimit, ModeTool, ModeSlow, ModeDrop, "500", "503", "401", "400"},
	BasePath: "/v1",
}

// ParseScenario splits a comma-separated scenario ("500,ok") into modes and
// rejects unknown ones.
func ParseScenario(s string) ([]string, error) { return api.ParseScenario(s) }

// Request is one logged request.
type Request = fakeprovider.Request

// Server answers Responses API requests per its scenario and logs each one.
type Server struct {
	*fakeprovider.Server
	resetAt time.Time
	calls   atomic.Int64
}

// New returns a server that plays scenario and appends its request log to
// logPath ("" keeps the log in memory only). Usage limits reset an hour
// after New, to the second. Listen returns the base URL for the provider's
// base_url (ending in /v1).
func New(scenario []string, logPath string) (*Server, error) {
	s := &Server{resetAt: time.Now().Add(time.Hour).Truncate(time.Second)}
	a := api
	a.Serve = s.serve
	core, err := fakeprovider.New(a, scenario, logPath)
	if err != nil {
		return nil, err
	}
	s.Server = core
	return s, nil
}

// ResetAt is the reset time a usage-limit answer gives.
func (s *Server) ResetAt() time.Time { return s.resetAt }

// responsesBody is the part of a Responses API request the fake looks at.
type responsesBody struct {
	Input []fakeprovider.Message `json:"input"`
}

// serve answers one request.
func (s *Server) serve(core *fakeprovider.Server, w http.ResponseWriter, r *http.Request) {
	rec := fakeprovider.NewRequest(r, "req_")
	var body responsesBody
	raw := fakeprovider.DecodeBody(r, &body)
	w.Header().Set("x-request-id", rec.RequestID)
	switch {
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/models"):
		rec.Mode, rec.Status = "models", http.StatusOK
		fakeprovider.WriteJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/responses":
		rec.LastUserText = fakeprovider.LastUserText(body.Input, "input_text")
		rec.Mode = "title"
		if !strings.Contains(string(raw), titleMarker) {
			rec.Mode = core.Next()
		}
		rec.Status = http.StatusOK
		if f, ok := failures[rec.Mode]; ok {
			rec.Status = f.status
		} else if rec.Mode == ModeUsageLimit {
			rec.Status = http.StatusTooManyRequests
		}
		core.Record(rec) // logged before a slow answer starts
		s.answer(w, r, rec.Mode)
		return
	default:
		rec.Mode, rec.Status = "not_found", http.StatusNotFound
		writeError(w, failure{http.StatusNotFound, "invalid_request_error", nil, "Not found: " + r.URL.Path})
	}
	core.Record(rec)
}

// answer writes the reply for one POST /v1/responses.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, mode string) {
	if f, ok := failures[mode]; ok {
		writeError(w, f)
		return
	}
	if mode == ModeUsageLimit {
		s.rateHeaders(w, 100)
		fakeprovider.WriteJSON(w, http.StatusTooManyRequests, map[string]any{"error": map[string]any{
			"type": "usage_limit_reached", "message": "The usage limit has been reached", "plan_type": "plus",
			"resets_at": s.resetAt.Unix(), "resets_in_seconds": int(time.Until(s.resetAt).Seconds()),
		}})
		return
	}
	s.rateHeaders(w, 42)
	ev := fakeprovider.StartEvents(w)
	event := func(data map[string]any) { ev.Send(data["type"].(string), data) }
	id := strconv.FormatInt(s.calls.Add(1), 10)
	event(map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_" + id}})
	switch mode {
	case ModeDrop:
		panic(http.ErrAbortHandler) // the connection closes mid-stream
	case ModeSlow:
		for {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(time.Second):
				ev.Raw(": keepalive\n\n")
			}
		}
	case ModeTool:
		event(map[string]any{"type": "response.output_item.done", "output_index": 0, "item": map[string]any{
			"type": "function_call", "id": "fc_" + id, "call_id": "call_" + id, "name": "exec_command",
			"arguments": `{"cmd": "touch marker", "sandbox_permissions": "require_escalated", "justification": "test"}`,
		}})
	default:
		msg := "msg_" + id
		event(map[string]any{"type": "response.output_item.added", "output_index": 0, "item": map[string]any{
			"type": "message", "role": "assistant", "id": msg, "content": []any{}}})
		for _, part := range strings.SplitAfter(ReplyText, " ") {
			event(map[string]any{"type": "response.output_text.delta", "item_id": msg, "output_index": 0, "content_index": 0, "delta": part})
		}
		event(map[string]any{"type": "response.output_item.done", "output_index": 0, "item": map[string]any{
			"type": "message", "role": "assistant", "id": msg,
			"content": []any{map[string]any{"type": "output_text", "text": ReplyText, "annotations": []any{}}}}})
	}
	event(map[string]any{"type": "response.completed", "response": map[string]any{"id": "resp_" + id, "usage": map[string]any{
		"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 110}}})
}

// rateHeaders sets the x-codex-* rate-limit headers Codex turns into
// token_count.rate_limits (§9.2).
func (s *Server) rateHeaders(w http.ResponseWriter, primaryPercent float64) {
	h := w.Header()
	h.Set("x-codex-primary-used-percent", strconv.FormatFloat(primaryPercent, 'f', 1, 64))
	h.Set("x-codex-primary-window-minutes", "300")
	h.Set("x-codex-primary-reset-at", strconv.FormatInt(s.resetAt.Unix(), 10))
	h.Set("x-codex-secondary-used-percent", "12.0")
	h.Set("x-codex-secondary-window-minutes", "10080")
	h.Set("x-codex-secondary-reset-at", strconv.FormatInt(s.resetAt.Add(71*time.Hour).Unix(), 10))
}

// writeError writes an OpenAI error body (§9.2).
func writeError(w http.ResponseWriter, f failure) {
	fakeprovider.WriteJSON(w, f.status, map[string]any{"error": map[string]any{"message": f.message, "type": f.errType, "param": nil, "code": f.code}})
}
