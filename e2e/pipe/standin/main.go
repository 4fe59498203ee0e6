// Command standin plays a Claude Code session in a terminal for the
// end-to-end tests: it writes a Claude-format transcript and live registry
// as the real CLI does, answers each line it reads with the next scripted
// outcome, and records every line it receives. On a terminal it draws
// Claude Code's prompt box and takes keys in raw mode (prompt.go), so
// nudge reads its prompt as it reads the real one's.
//
// Outcomes: ok (the turn completes), 500 (the turn dies from a provider
// error), 400 (the provider rejects the request), limit (a usage limit with
// a reset time), box (a permission box opens; the next line answers it).
// SIGUSR1 opens a box by itself and SIGUSR2 closes it, as a person would at
// the keyboard. A line ending in [o1,o2,…] replaces the outcomes still to
// come with that list; once they run out, every line completes.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

type standin struct {
	mu         sync.Mutex
	session    string
	cwd        string
	transcript *os.File
	registry   string
	received   *os.File
	outcomes   []string
	boxOpen    bool
	resetAt    int64
}

func main() {
	home := flag.String("home", os.Getenv("HOME"), "the Claude config folder's parent")
	session := flag.String("session", "11111111-1111-4111-8111-111111111111", "session id")
	outcomes := flag.String("outcomes", "ok", "comma-separated outcomes, one per line received")
	received := flag.String("received", "received.log", "file that records every line received")
	resetIn := flag.Duration("reset-in", time.Hour, "usage limit: how far ahead the reset is")
	flag.Parse()

	cwd, _ := os.Getwd()
	project := filepath.Join(*home, ".claude", "projects", regexp.MustCompile(`[^A-Za-z0-9]`).ReplaceAllString(cwd, "-"))
	must(os.MkdirAll(project, 0o700))
	must(os.MkdirAll(filepath.Join(*home, ".claude", "sessions"), 0o700))
	tf, err := os.OpenFile(filepath.Join(project, *session+".jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	must(err)
	rf, err := os.OpenFile(*received, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	must(err)
	s := &standin{
		session: *session, cwd: cwd, transcript: tf, received: rf,
		registry: filepath.Join(*home, ".claude", "sessions", fmt.Sprintf("%d.json", os.Getpid())),
		outcomes: strings.Split(*outcomes, ","),
		resetAt:  time.Now().Add(*resetIn).Unix(),
	}
	defer os.Remove(s.registry)
	s.setStatus("idle", "")

	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		for v := range sig {
			switch v {
			case syscall.SIGUSR1:
				s.openBox()
			case syscall.SIGUSR2:
				s.closeBox()
			default:
				os.Remove(s.registry)
				os.Exit(0)
			}
		}
	}()

	next := lines(bufio.NewReader(os.Stdin))
	if onTerminal() {
		if p, err := newPrompt(); err == nil {
			next = p.line
		}
	}
	for {
		line, err := next()
		if err != nil {
			return
		}
		fmt.Fprintf(s.received, "%s\n", line)
		s.answer(line)
	}
}

// lines reads the lines of a pipe.
func lines(in *bufio.Reader) func() (string, error) {
	return func() (string, error) {
		line, err := in.ReadString('\n')
		return strings.TrimRight(line, "\r\n"), err
	}
}

func (s *standin) answer(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.boxOpen {
		// The line answered the box: whatever was typed, Enter picked the
		// highlighted choice and the tool ran.
		s.boxOpen = false
		s.write(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_standin", "content": "hi"}}}, "toolUseResult": map[string]any{"stdout": "hi"}})
		s.finish("ok")
		return
	}
	s.write(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": line}, "origin": map[string]any{"kind": "human"}, "promptSource": "typed", "turnOrigin": "human"})
	s.setStatusLocked("busy", "")
	time.Sleep(100 * time.Millisecond)
	if i := strings.LastIndexByte(line, '['); i >= 0 && strings.HasSuffix(line, "]") {
		s.outcomes = strings.Split(line[i+1:len(line)-1], ",")
	}
	outcome := "ok"
	if len(s.outcomes) > 0 {
		outcome, s.outcomes = s.outcomes[0], s.outcomes[1:]
	}
	s.finish(outcome)
}

// finish ends the turn with outcome; the caller holds s.mu.
func (s *standin) finish(outcome string) {
	switch outcome {
	case "500":
		s.write(synthetic(map[string]any{"error": "server_error", "apiErrorStatus": 500, "apiErrorType": "api_error", "requestId": "req_standin"},
			"API Error: 500 Internal server error. This is a server-side issue, usually temporary — try again in a moment."))
	case "400":
		s.write(synthetic(map[string]any{"error": "invalid_request", "apiErrorStatus": 400, "apiErrorType": "invalid_request_error", "requestId": "req_standin"},
			"API Error: 400 prompt is too long: 250000 tokens > 200000 maximum"))
	case "limit":
		limits := map[string]any{"status": "rejected", "resetsAt": s.resetAt, "rateLimitType": "five_hour", "overageStatus": "rejected"}
		s.write(synthetic(map[string]any{"error": "rate_limit", "apiErrorStatus": 429, "apiError": "usage_limit_reached", "quotaLimits": limits, "apiErrorParams": map[string]any{"rate_limit_info": limits}},
			"You've hit your 5-hour limit · resets "+time.Unix(s.resetAt, 0).UTC().Format("3:04pm")+" (UTC)"))
	case "box":
		s.write(map[string]any{"type": "assistant", "message": map[string]any{"id": "msg_standin_tool", "model": "claude-opus-5-5", "stop_reason": "tool_use", "content": []any{map[string]any{"type": "tool_use", "id": "toolu_standin", "name": "Bash", "input": map[string]any{"command": "echo hi > ~/x.txt"}}}}})
		s.boxOpen = true
		s.setStatusLocked("waiting", "permission prompt")
		return
	default:
		s.write(map[string]any{"type": "assistant", "message": map[string]any{"id": fmt.Sprintf("msg_standin_%d", time.Now().UnixNano()), "model": "claude-opus-5-5", "stop_reason": "end_turn", "content": []any{map[string]any{"type": "text", "text": "Done."}}}})
		s.write(map[string]any{"type": "system", "subtype": "turn_duration", "durationMs": 100, "messageCount": 2, "isMeta": false})
	}
	s.setStatusLocked("idle", "")
}

func synthetic(fields map[string]any, text string) map[string]any {
	rec := map[string]any{"type": "assistant", "isApiErrorMessage": true,
		"message": map[string]any{"model": "<synthetic>", "role": "assistant", "stop_reason": "stop_sequence", "stop_sequence": "", "content": []any{map[string]any{"type": "text", "text": text}}}}
	for k, v := range fields {
		rec[k] = v
	}
	return rec
}

func (s *standin) openBox() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.boxOpen = true
	s.setStatusLocked("waiting", "permission prompt")
}

func (s *standin) closeBox() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.boxOpen = false
	s.setStatusLocked("idle", "")
}

// write appends one transcript record with the fields every record carries.
func (s *standin) write(rec map[string]any) {
	rec["sessionId"], rec["cwd"], rec["isSidechain"], rec["version"] = s.session, s.cwd, false, "2.1.332"
	rec["timestamp"] = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	rec["uuid"] = fmt.Sprintf("standin-%d", time.Now().UnixNano())
	b, err := json.Marshal(rec)
	must(err)
	_, err = s.transcript.Write(append(b, '\n'))
	must(err)
}

func (s *standin) setStatus(status, waitingFor string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setStatusLocked(status, waitingFor)
}

// setStatusLocked rewrites the live registry the way the CLI does.
func (s *standin) setStatusLocked(status, waitingFor string) {
	reg := map[string]any{"pid": os.Getpid(), "sessionId": s.session, "cwd": s.cwd, "kind": "interactive", "entrypoint": "cli",
		"status": status, "updatedAt": time.Now().UnixMilli()}
	if waitingFor != "" {
		reg["waitingFor"] = waitingFor
	}
	if pane := os.Getenv("TMUX_PANE"); pane != "" {
		reg["tmux"] = "standin:@0." + pane
	}
	b, err := json.Marshal(reg)
	must(err)
	tmp := s.registry + ".tmp"
	must(os.WriteFile(tmp, b, 0o600))
	must(os.Rename(tmp, s.registry))
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "standin:", err)
		os.Exit(1)
	}
}
