// Package fakeanthropic is a small stand-in for the Anthropic Messages API on
// 127.0.0.1, so a real Claude Code CLI can be driven into chosen failures
// (formats/claude.md §10.3, §10.4) without leaving the machine.
//
// A scenario is a queue of answers ("500", "ok", …) consumed by main-loop
// requests, the `POST /v1/messages` calls that carry a non-empty `tools`
// array. Side requests without tools always get a plain success, so they do
// not eat the scenario. Once the queue is empty every main-loop request
// succeeds.
package fakeanthropic

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
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// ModeOK answers with a streamed (or, for `stream:false`, a plain) text success.
const ModeOK = "ok"

// failure is one HTTP error answer: status, Anthropic `error.type` and message
// (formats/claude.md §10.4).
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

// ParseScenario splits a comma-separated scenario ("500,ok") into modes and
// rejects unknown ones.
func ParseScenario(s string) ([]string, error) {
	var modes []string
	for _, m := range strings.Split(s, ",") {
		m = strings.TrimSpace(m)
		if m == "" {
			continue
		}
		if _, ok := failures[m]; !ok && m != ModeOK {
			return nil, fmt.Errorf("fakeanthropic: unknown scenario mode %q", m)
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
	// "side" for /v1/messages without tools, "count_tokens" or "not_found".
	Mode      string `json:"mode"`
	Status    int    `json:"status"`
	RequestID string `json:"request_id"`
	Model     string `json:"model,omitempty"`
	Stream    bool   `json:"stream"`
	Tools     int    `json:"tools"`
	// LastUserText is the text of the last user message (up to 500 bytes).
	LastUserText string `json:"last_user_text,omitempty"`
	RetryCount   string `json:"retry_count,omitempty"`
}

// Server answers Messages API requests per its scenario and logs each one.
type Server struct {
	mu       sync.Mutex
	scenario []string
	log      *os.File
	requests []Request
}

// New returns a server that plays scenario and appends its request log to
// logPath ("" keeps the log in memory only).
func New(scenario []string, logPath string) (*Server, error) {
	s := &Server{scenario: append([]string(nil), scenario...)}
	if logPath != "" {
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("fakeanthropic: open request log: %w", err)
		}
		s.log = f
	}
	return s, nil
}

// Listen binds addr, a loopback IP and port (127.0.0.1:0 for a free port),
// and serves in the background. It returns the base URL for
// ANTHROPIC_BASE_URL and a function that stops the server.
func (s *Server) Listen(addr string) (baseURL string, stop func(), err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", nil, fmt.Errorf("fakeanthropic: listen address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return "", nil, fmt.Errorf("fakeanthropic: listen address %q is not a loopback IP", addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("fakeanthropic: listen on %s: %w", addr, err)
	}
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("fakeanthropic: serve", "err", err)
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
	return "http://" + l.Addr().String(), stop, nil
}

// Requests returns the requests answered so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// messagesBody is the part of a Messages API request the fake looks at.
type messagesBody struct {
	Model    string            `json:"model"`
	Stream   bool              `json:"stream"`
	Tools    []json.RawMessage `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := Request{
		Time:       time.Now().UTC(),
		Method:     r.Method,
		Path:       r.URL.RequestURI(),
		RequestID:  "req_fake_" + randomHex(6),
		RetryCount: r.Header.Get("X-Stainless-Retry-Count"),
	}
	var body messagesBody
	raw, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err == nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, &body); err != nil {
			slog.Warn("fakeanthropic: request body is not JSON", "path", rec.Path, "err", err)
		}
	}
	rec.Model, rec.Stream, rec.Tools = body.Model, body.Stream, len(body.Tools)
	rec.LastUserText = lastUserText(body)
	if rec.Model == "" {
		rec.Model = "claude-opus-5-5"
	}
	w.Header().Set("request-id", rec.RequestID)

	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		rec.Mode, rec.Status = "count_tokens", http.StatusOK
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": 42})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		rec.Mode = "side"
		if rec.Tools > 0 {
			rec.Mode = s.next()
		}
		rec.Status = s.answer(w, rec)
	default:
		rec.Mode, rec.Status = "not_found", http.StatusNotFound
		writeError(w, failure{http.StatusNotFound, "not_found_error", "Not found: " + r.URL.Path})
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

// answer writes the reply for a /v1/messages request and returns its status.
func (s *Server) answer(w http.ResponseWriter, rec Request) int {
	if f, ok := failures[rec.Mode]; ok {
		writeError(w, f)
		return f.status
	}
	if !rec.Stream {
		writeJSON(w, http.StatusOK, map[string]any{
			"id": "msg_fake_" + randomHex(6), "type": "message", "role": "assistant", "model": rec.Model,
			"content":     []any{map[string]any{"type": "text", "text": ReplyText}},
			"stop_reason": "end_turn", "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": 10, "output_tokens": 5},
		})
		return http.StatusOK
	}
	streamText(w, rec.Model, ReplyText)
	return http.StatusOK
}

// streamText writes a streamed text success (formats/claude.md §10.3).
func streamText(w http.ResponseWriter, model, text string) {
	w.Header().Set("content-type", "text/event-stream")
	w.Header().Set("cache-control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	event := func(name string, data any) {
		b, err := json.Marshal(data)
		if err != nil {
			slog.Error("fakeanthropic: encode event", "event", name, "err", err)
			return
		}
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_fake_" + randomHex(6), "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
	}})
	event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
		"content_block": map[string]any{"type": "text", "text": ""}})
	event("ping", map[string]any{"type": "ping"})
	for _, part := range strings.SplitAfter(text, " ") {
		event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": part}})
	}
	event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 12}})
	event("message_stop", map[string]any{"type": "message_stop"})
}

// writeError writes an Anthropic error body (formats/claude.md §10.3).
func writeError(w http.ResponseWriter, f failure) {
	writeJSON(w, f.status, map[string]any{"type": "error",
		"error": map[string]any{"type": f.errType, "message": f.message}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("content-type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		slog.Warn("fakeanthropic: write answer", "err", err)
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
		slog.Error("fakeanthropic: encode log line", "err", err)
		return
	}
	if _, err := s.log.Write(append(b, '\n')); err != nil {
		slog.Error("fakeanthropic: write log line", "err", err)
	}
}

// lastUserText returns the last text block of the last user message (up to
// 500 bytes): the prompt just typed, after any reminders the CLI prepends.
func lastUserText(body messagesBody) string {
	for i := len(body.Messages) - 1; i >= 0; i-- {
		m := body.Messages[i]
		if m.Role != "user" {
			continue
		}
		var text string
		if err := json.Unmarshal(m.Content, &text); err != nil {
			var blocks []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if err := json.Unmarshal(m.Content, &blocks); err != nil {
				return ""
			}
			for _, b := range blocks {
				if b.Type == "text" {
					text = b.Text
				}
			}
		}
		return truncate(strings.TrimSpace(text), 500)
	}
	return ""
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ReadLog reads a request log written by a Server.
func ReadLog(path string) ([]Request, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("fakeanthropic: read request log: %w", err)
	}
	var reqs []Request
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var r Request
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("fakeanthropic: request log line %d: %w", i+1, err)
		}
		reqs = append(reqs, r)
	}
	return reqs, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never returns an error (crypto/rand docs)
	return hex.EncodeToString(b)
}
