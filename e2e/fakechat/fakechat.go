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
// Modes (bodies as in formats/kimi.md A11):
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

// The answer modes that are not HTTP errors.
const (
	ModeOK   = "ok"
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

// failures maps a scenario mode to its error answer (formats/kimi.md A11).
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

func knownMode(m string) bool {
	_, isFailure := failures[m]
	return isFailure || m == ModeOK || m == ModeDrop
}

// ParseScenario splits a comma-separated scenario ("500,ok") into modes and
// rejects unknown ones.
func ParseScenario(s string) ([]string, error) {
	var modes []string
	for _, m := range strings.Split(s, ",") {
		m = strings.TrimSpace(m)
		if m == "" {
			continue
		}
		if !knownMode(m) {
			return nil, fmt.Errorf("fakechat: unknown scenario mode %q (known: %s)", m, strings.Join(Modes(), ", "))
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
	// "side" for chat requests without tools, "models" or "not_found".
	Mode      string `json:"mode"`
	Status    int    `json:"status"` // 0 for "drop"
	RequestID string `json:"request_id"`
	Model     string `json:"model,omitempty"`
	Stream    bool   `json:"stream"`
	Tools     int    `json:"tools"`
	// LastUserText is the text of the last user message (up to 500 bytes).
	LastUserText string `json:"last_user_text,omitempty"`
	// LastRole is the role of the last message ("user", "tool", …).
	LastRole string `json:"last_role,omitempty"`
}

// Server answers chat-completions requests per its scenario and logs each one.
type Server struct {
	mu       sync.Mutex
	scenario []string
	log      *os.File
	requests []Request
}

// New returns a server that plays scenario and appends its request log to
// logPath ("" keeps the log in memory only). Unknown modes are refused.
func New(scenario []string, logPath string) (*Server, error) {
	for _, m := range scenario {
		if !knownMode(m) {
			return nil, fmt.Errorf("fakechat: unknown scenario mode %q", m)
		}
	}
	s := &Server{scenario: append([]string(nil), scenario...)}
	if logPath != "" {
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("fakechat: open request log: %w", err)
		}
		s.log = f
	}
	return s, nil
}

// Push appends modes to the scenario queue of a running server.
func (s *Server) Push(modes ...string) error {
	for _, m := range modes {
		if !knownMode(m) {
			return fmt.Errorf("fakechat: unknown scenario mode %q", m)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scenario = append(s.scenario, modes...)
	return nil
}

// Listen binds addr, a loopback IP and port (127.0.0.1:0 for a free port),
// and serves in the background. It returns the base URL ("http://127.0.0.1:N";
// clients append "/v1") and a function that stops the server.
func (s *Server) Listen(addr string) (baseURL string, stop func(), err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", nil, fmt.Errorf("fakechat: listen address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return "", nil, fmt.Errorf("fakechat: listen address %q is not a loopback IP", addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("fakechat: listen on %s: %w", addr, err)
	}
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("fakechat: serve", "err", err)
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			hs.Close()
			<-done
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.log != nil {
				s.log.Close()
				s.log = nil
			}
		})
	}
	return "http://" + l.Addr().String(), stop, nil
}

// Requests returns the requests answered so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// chatBody is the part of a chat-completions request the fake looks at.
type chatBody struct {
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
		Time:      time.Now().UTC(),
		Method:    r.Method,
		Path:      r.URL.RequestURI(),
		RequestID: "req-fake-" + randomHex(6),
	}
	var body chatBody
	raw, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err == nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, &body); err != nil {
			slog.Warn("fakechat: request body is not JSON", "path", rec.Path, "err", err)
		}
	}
	rec.Model, rec.Stream, rec.Tools = body.Model, body.Stream, len(body.Tools)
	rec.LastUserText, rec.LastRole = lastUserText(body), lastRole(body)
	if rec.Model == "" {
		rec.Model = ModelID
	}
	w.Header().Set("x-request-id", rec.RequestID)

	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions"):
		rec.Mode = ModeSide
		if rec.Tools > 0 {
			rec.Mode = s.next()
		}
		rec.Status = s.answer(w, rec)
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		rec.Mode, rec.Status = "models", http.StatusOK
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{
			map[string]any{"id": ModelID, "object": "model", "created": 1700000000, "owned_by": "fakechat"}}})
	default:
		rec.Mode, rec.Status = "not_found", http.StatusNotFound
		writeError(w, failure{status: http.StatusNotFound, errType: "not_found_error", message: "Not found: " + r.URL.Path})
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

// answer writes the reply for a chat request and returns its status (0 when
// the connection was dropped).
func (s *Server) answer(w http.ResponseWriter, rec Request) int {
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
	id := "chatcmpl-fake-" + randomHex(6)
	if !rec.Stream {
		writeJSON(w, http.StatusOK, map[string]any{
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
	w.Header().Set("content-type", "text/event-stream")
	w.Header().Set("cache-control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	created := time.Now().Unix()
	chunk := func(delta map[string]any, finish any, withUsage bool) {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		if withUsage {
			c["usage"] = usage()
		}
		b, err := json.Marshal(c)
		if err != nil {
			slog.Error("fakechat: encode chunk", "err", err)
			return
		}
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil, false)
	for _, part := range strings.SplitAfter(text, " ") {
		chunk(map[string]any{"content": part}, nil, false)
	}
	chunk(map[string]any{}, "stop", true)
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
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
	writeJSON(w, f.status, map[string]any{"error": e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("content-type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		slog.Warn("fakechat: write answer", "err", err)
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
		slog.Error("fakechat: encode log line", "err", err)
		return
	}
	if _, err := s.log.Write(append(b, '\n')); err != nil {
		slog.Error("fakechat: write log line", "err", err)
	}
}

// lastUserText returns the text of the last user message (up to 500 bytes):
// a string content, or its last text part.
func lastUserText(body chatBody) string {
	for i := len(body.Messages) - 1; i >= 0; i-- {
		m := body.Messages[i]
		if m.Role != "user" {
			continue
		}
		var text string
		if err := json.Unmarshal(m.Content, &text); err != nil {
			var parts []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if err := json.Unmarshal(m.Content, &parts); err != nil {
				return ""
			}
			for _, p := range parts {
				if p.Type == "text" {
					text = p.Text
				}
			}
		}
		return truncate(strings.TrimSpace(text), 500)
	}
	return ""
}

func lastRole(body chatBody) string {
	if n := len(body.Messages); n > 0 {
		return body.Messages[n-1].Role
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
		return nil, fmt.Errorf("fakechat: read request log: %w", err)
	}
	var reqs []Request
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var r Request
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("fakechat: request log line %d: %w", i+1, err)
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
