// Package fakeprovider is the machinery the fake model providers share: a
// server on 127.0.0.1 that plays a scenario, a queue of answer modes
// consumed by main-loop requests, and records every request it answers, in
// memory and as JSON lines in a file. Each provider package (fakeanthropic,
// fakechat, fakeresponses) adds only its wire format and its modes.
package fakeprovider

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
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// ModeOK answers a main-loop request with a text success; every protocol
// knows it, and it is the answer once the scenario is used up.
const ModeOK = "ok"

// API is one provider protocol as the shared server sees it.
type API struct {
	// Name prefixes log lines and errors ("fakechat").
	Name string
	// Modes lists every scenario mode, ModeOK among them.
	Modes []string
	// BasePath is appended to the listen URL Listen returns ("/v1").
	BasePath string
	// Serve answers one request and records it with Server.Record.
	Serve func(s *Server, w http.ResponseWriter, r *http.Request)
	// Scripted, if set, accepts modes built at run time (a tool call with
	// its input) besides Modes.
	Scripted func(mode string) bool
}

func (a API) known(mode string) bool {
	return slices.Contains(a.Modes, mode) || a.Scripted != nil && a.Scripted(mode)
}

func (a API) check(modes []string) error {
	for _, m := range modes {
		if !a.known(m) {
			return fmt.Errorf("%s: unknown scenario mode %q (known: %s)", a.Name, m, strings.Join(a.Modes, ", "))
		}
	}
	return nil
}

// ParseScenario splits a comma-separated scenario ("500,ok") into modes and
// rejects unknown ones.
func (a API) ParseScenario(s string) ([]string, error) {
	var modes []string
	for _, m := range strings.Split(s, ",") {
		if m = strings.TrimSpace(m); m != "" {
			modes = append(modes, m)
		}
	}
	if err := a.check(modes); err != nil {
		return nil, err
	}
	return modes, nil
}

// Request is one answered request, one JSON object per line in the log file.
type Request struct {
	Time   time.Time `json:"time"`
	Method string    `json:"method"`
	Path   string    `json:"path"`
	// Mode is the answer given: a scenario mode for main-loop requests,
	// else what the protocol calls the request ("side", "title",
	// "count_tokens", "models", "not_found").
	Mode      string `json:"mode"`
	Status    int    `json:"status"` // 0 when the connection was dropped
	RequestID string `json:"request_id"`
	Model     string `json:"model,omitempty"`
	Stream    bool   `json:"stream,omitempty"`
	Tools     int    `json:"tools,omitempty"`
	// LastUserText is the text of the last user message (up to 500 bytes).
	LastUserText string `json:"last_user_text,omitempty"`
	// LastRole is the role of the last message ("user", "tool", …).
	LastRole string `json:"last_role,omitempty"`
	// ToolResult is the text of the tool results the last user message
	// carries back (after a scripted tool call).
	ToolResult string `json:"tool_result,omitempty"`
	RetryCount string `json:"retry_count,omitempty"`
}

// NewRequest starts the record of r; its id is idPrefix and random hex.
func NewRequest(r *http.Request, idPrefix string) Request {
	return Request{Time: time.Now().UTC(), Method: r.Method, Path: r.URL.RequestURI(), RequestID: idPrefix + RandomHex(6)}
}

// Server plays a scenario for one API and records each request.
type Server struct {
	api      API
	mu       sync.Mutex
	scenario []string
	log      *os.File
	requests []Request
}

// New returns a server that plays scenario and appends its request log to
// logPath ("" keeps the log in memory only). Unknown modes are refused.
func New(api API, scenario []string, logPath string) (*Server, error) {
	if err := api.check(scenario); err != nil {
		return nil, err
	}
	s := &Server{api: api, scenario: slices.Clone(scenario)}
	if logPath != "" {
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("%s: open request log: %w", api.Name, err)
		}
		s.log = f
	}
	return s, nil
}

// Push appends modes to the scenario of a running server.
func (s *Server) Push(modes ...string) error {
	if err := s.api.check(modes); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scenario = append(s.scenario, modes...)
	return nil
}

// Next pops the next scenario mode; ModeOK once the scenario is used up.
func (s *Server) Next() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.scenario) == 0 {
		return ModeOK
	}
	m := s.scenario[0]
	s.scenario = s.scenario[1:]
	return m
}

// ServeHTTP answers one request through the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.api.Serve(s, w, r) }

// Listen binds addr, a loopback IP and port (127.0.0.1:0 for a free port),
// and serves in the background. It returns the base URL (with the API's
// BasePath) and a function that stops the server.
func (s *Server) Listen(addr string) (baseURL string, stop func(), err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", nil, fmt.Errorf("%s: listen address %q: %w", s.api.Name, addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return "", nil, fmt.Errorf("%s: listen address %q is not a loopback IP", s.api.Name, addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("%s: listen on %s: %w", s.api.Name, addr, err)
	}
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error(s.api.Name+": serve", "err", err)
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
	return "http://" + l.Addr().String() + s.api.BasePath, stop, nil
}

// Record appends rec to the memory and file logs.
func (s *Server) Record(rec Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, rec)
	if s.log == nil {
		return
	}
	b, err := json.Marshal(rec)
	if err != nil {
		slog.Error(s.api.Name+": encode log line", "err", err)
		return
	}
	if _, err := s.log.Write(append(b, '\n')); err != nil {
		slog.Error(s.api.Name+": write log line", "err", err)
	}
}

// Requests returns the requests answered so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Main returns the main-loop requests answered so far: those answered
// with a scenario mode, not side, title or other calls.
func (s *Server) Main() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if s.api.known(r.Mode) {
			out = append(out, r)
		}
	}
	return out
}

// ReadLog reads a request log written by a Server.
func ReadLog(path string) ([]Request, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("fakeprovider: read request log: %w", err)
	}
	var reqs []Request
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var r Request
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("fakeprovider: request log line %d: %w", i+1, err)
		}
		reqs = append(reqs, r)
	}
	return reqs, nil
}

// DecodeBody reads r's body (up to 64 MiB) into v, logging a body that is
// not JSON, and returns the raw bytes.
func DecodeBody(r *http.Request, v any) []byte {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil || len(raw) == 0 {
		return raw
	}
	if err := json.Unmarshal(raw, v); err != nil {
		slog.Warn("fakeprovider: request body is not JSON", "path", r.URL.Path, "err", err)
	}
	return raw
}

// Message is one conversation message of a request: a role and a content
// that is a string or a list of typed parts.
type Message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// LastUserText returns the last part of type partType of the last user
// message (or its string content), trimmed and cut to 500 bytes: the
// prompt just typed, after any reminders the CLI puts before it.
func LastUserText(msgs []Message, partType string) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
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
				if p.Type == partType {
					text = p.Text
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

// WriteJSON writes v as a JSON answer with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("content-type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		slog.Warn("fakeprovider: write answer", "err", err)
	}
}

// Events is a streamed (text/event-stream) success answer.
type Events struct {
	w       http.ResponseWriter
	flusher http.Flusher
}

// StartEvents sends the header of a streamed 200 answer.
func StartEvents(w http.ResponseWriter) *Events {
	w.Header().Set("content-type", "text/event-stream")
	w.Header().Set("cache-control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	return &Events{w: w, flusher: flusher}
}

// Send writes one event: data as JSON, under an `event:` line when name
// is not "".
func (e *Events) Send(name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		slog.Error("fakeprovider: encode event", "event", name, "err", err)
		return
	}
	if name != "" {
		fmt.Fprintf(e.w, "event: %s\n", name)
	}
	e.Raw(fmt.Sprintf("data: %s\n\n", b))
}

// Raw writes text as it is (a comment, a keepalive, a [DONE] line) and
// flushes it.
func (e *Events) Raw(text string) {
	fmt.Fprint(e.w, text)
	if e.flusher != nil {
		e.flusher.Flush()
	}
}

// RandomHex returns n random bytes in hex.
func RandomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never returns an error (crypto/rand docs)
	return hex.EncodeToString(b)
}
