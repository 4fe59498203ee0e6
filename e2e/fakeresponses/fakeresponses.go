// Package fakeresponses is a small stand-in for the OpenAI Responses API on
// 127.0.0.1, so a real Codex CLI can be driven into chosen failures
// (formats/codex.md §9.2, §9.3) without leaving the machine.
//
// A scenario is a queue of answers ("500", "ok", …) consumed by main-loop
// requests: `POST /v1/responses` calls other than the TUI's background title
// request, which always succeeds so it does not eat the scenario. Once the
// queue is empty every main-loop request succeeds.
package fakeresponses

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The scenario modes besides the plain HTTP failures.
const (
	// ModeOK answers with a streamed text success.
	ModeOK = "ok"
	// ModeUsageLimit answers 429 usage_limit_reached with the primary window
	// at 100 % and its reset time in the x-codex-* headers (§9.3).
	ModeUsageLimit = "usage-limit"
	// ModeTool answers with an exec_command call that needs approval
	// under approval_policy "on-request" (§9.2).
	ModeTool = "tool"
	// ModeSlow opens the stream and then only sends keepalives until the
	// client goes away: a turn that keeps working (§9.3 "cancel").
	ModeSlow = "slow"
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

// ParseScenario splits a comma-separated scenario ("500,ok") into modes and
// rejects unknown ones.
func ParseScenario(s string) ([]string, error) {
	var modes []string
	for _, m := range strings.Split(s, ",") {
		m = strings.TrimSpace(m)
		if m == "" {
			continue
		}
		if _, ok := failures[m]; !ok && m != ModeOK && m != ModeUsageLimit && m != ModeTool && m != ModeSlow {
			return nil, fmt.Errorf("fakeresponses: unknown scenario mode %q", m)
		}
		modes = append(modes, m)
	}
	return modes, nil
}

// Request is one logged request, one JSON object per line in the log file.
type Request struct {
	Time   time.Time `json:"time"`
	Method string    `json:"method"`
	Path   string    `json:"path"`
	// Mode is the answer given: a scenario mode for main-loop requests,
	// "title" for the title request, "models" or "not_found".
	Mode      string `json:"mode"`
	Status    int    `json:"status"`
	RequestID string `json:"request_id"`
	// LastUserText is the text of the last user input item (up to 500 bytes).
	LastUserText string `json:"last_user_text,omitempty"`
}

// Server answers Responses API requests per its scenario and logs each one.
type Server struct {
	mu       sync.Mutex
	scenario []string
	resetAt  time.Time
	log      *os.File
	requests []Request
	calls    int
}

// New returns a server that plays scenario and appends its request log to
// logPath ("" keeps the log in memory only). Usage limits reset an hour
// after New, to the second.
func New(scenario []string, logPath string) (*Server, error) {
	s := &Server{scenario: append([]string(nil), scenario...), resetAt: time.Now().Add(time.Hour).Truncate(time.Second)}
	if logPath != "" {
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("fakeresponses: open request log: %w", err)
		}
		s.log = f
	}
	return s, nil
}

// ResetAt is the reset time a usage-limit answer gives.
func (s *Server) ResetAt() time.Time { return s.resetAt }

// Push appends modes to the scenario.
func (s *Server) Push(modes ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scenario = append(s.scenario, modes...)
}

// Listen binds addr, a loopback IP and port (127.0.0.1:0 for a free port),
// and serves in the background. It returns the base URL for the provider's
// base_url (ending in /v1) and a function that stops the server.
func (s *Server) Listen(addr string) (baseURL string, stop func(), err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", nil, fmt.Errorf("fakeresponses: listen address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return "", nil, fmt.Errorf("fakeresponses: listen address %q is not a loopback IP", addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("fakeresponses: listen on %s: %w", addr, err)
	}
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("fakeresponses: serve", "err", err)
		}
	}()
	stop = func() {
		hs.Close()
		<-done
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.log != nil {
			s.log.Close()
			s.log = nil
		}
	}
	return "http://" + l.Addr().String() + "/v1", stop, nil
}

// Requests returns the requests answered so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Main returns the main-loop requests answered so far (title requests and
// other calls left out).
func (s *Server) Main() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Method == http.MethodPost && r.Mode != "title" && r.Mode != "not_found" {
			out = append(out, r)
		}
	}
	return out
}

// responsesBody is the part of a Responses API request the fake looks at.
type responsesBody struct {
	Input []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"input"`
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := Request{Time: time.Now().UTC(), Method: r.Method, Path: r.URL.RequestURI(), RequestID: "req_" + randomHex(8)}
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	w.Header().Set("x-request-id", rec.RequestID)
	switch {
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/models"):
		rec.Mode, rec.Status = "models", http.StatusOK
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/responses":
		var body responsesBody
		if err := json.Unmarshal(raw, &body); err != nil {
			slog.Warn("fakeresponses: request body is not JSON", "err", err)
		}
		rec.LastUserText = lastUserText(body)
		rec.Mode = "title"
		if !strings.Contains(string(raw), titleMarker) {
			rec.Mode = s.next()
		}
		rec.Status = http.StatusOK
		if f, ok := failures[rec.Mode]; ok {
			rec.Status = f.status
		} else if rec.Mode == ModeUsageLimit {
			rec.Status = http.StatusTooManyRequests
		}
		s.record(rec) // logged before a slow answer starts
		s.answer(w, r, rec.Mode)
		return
	default:
		rec.Mode, rec.Status = "not_found", http.StatusNotFound
		writeError(w, failure{http.StatusNotFound, "invalid_request_error", nil, "Not found: " + r.URL.Path})
	}
	s.record(rec)
}

// next pops the next scenario mode.
func (s *Server) next() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.scenario) == 0 {
		return ModeOK
	}
	m := s.scenario[0]
	s.scenario = s.scenario[1:]
	return m
}

// answer writes the reply for one POST /v1/responses.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, mode string) {
	if f, ok := failures[mode]; ok {
		writeError(w, f)
		return
	}
	if mode == ModeUsageLimit {
		s.rateHeaders(w, 100)
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"error": map[string]any{
			"type": "usage_limit_reached", "message": "The usage limit has been reached", "plan_type": "plus",
			"resets_at": s.resetAt.Unix(), "resets_in_seconds": int(time.Until(s.resetAt).Seconds()),
		}})
		return
	}
	s.rateHeaders(w, 42)
	w.Header().Set("content-type", "text/event-stream")
	w.Header().Set("cache-control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	event := func(data map[string]any) {
		b, err := json.Marshal(data)
		if err != nil {
			slog.Error("fakeresponses: encode event", "err", err)
			return
		}
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", data["type"], b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	s.mu.Lock()
	s.calls++
	id := strconv.Itoa(s.calls)
	s.mu.Unlock()
	event(map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_" + id}})
	switch mode {
	case ModeSlow:
		for {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(time.Second):
				fmt.Fprint(w, ": keepalive\n\n")
				if flusher != nil {
					flusher.Flush()
				}
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
	writeJSON(w, f.status, map[string]any{"error": map[string]any{"message": f.message, "type": f.errType, "param": nil, "code": f.code}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("content-type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		slog.Warn("fakeresponses: write answer", "err", err)
	}
}

// record appends rec to the memory and file logs.
func (s *Server) record(rec Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, rec)
	if s.log == nil {
		return
	}
	b, err := json.Marshal(rec)
	if err != nil {
		slog.Error("fakeresponses: encode log line", "err", err)
		return
	}
	if _, err := s.log.Write(append(b, '\n')); err != nil {
		slog.Error("fakeresponses: write log line", "err", err)
	}
}

// lastUserText returns the text of the last user message in the input (up
// to 500 bytes): the prompt just typed.
func lastUserText(body responsesBody) string {
	for i := len(body.Input) - 1; i >= 0; i-- {
		in := body.Input[i]
		if in.Role != "user" {
			continue
		}
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(in.Content, &parts) != nil {
			return ""
		}
		text := ""
		for _, p := range parts {
			if p.Type == "input_text" {
				text = p.Text
			}
		}
		if len(text) > 500 {
			text = text[:500]
		}
		return strings.TrimSpace(text)
	}
	return ""
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never returns an error (crypto/rand docs)
	return hex.EncodeToString(b)
}
