// Package muse asks Muse's own host about a session: nudge starts one
// `muse serve` of its own on demand, speaks the Muse Session Protocol to it
// over stdio, and stops it once it has been idle (docs/agents/muse.md §A1:
// the host query). It reads a session without attaching to it, so the
// person's own `muse` keeps owning the session; it never parses Muse's
// session.jsonl.
package muse

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"
)

// Answer is one host query's result, as one record: the session/read result
// {session, lastTurn, pendingRequests, …} and the usage/read result
// {usage?} (the account's SubscriptionUsage), verbatim.
type Answer struct {
	SessionID string          `json:"sessionId"`
	Read      json.RawMessage `json:"read"`
	Usage     json.RawMessage `json:"usage,omitempty"`
}

// Defaults of Host.
const (
	// DefaultIdle is how long the host may sit unused before it is stopped.
	DefaultIdle = 2 * time.Minute
	// requestTimeout bounds one request, starting the host included.
	requestTimeout = 10 * time.Second
	// stopWait is how long a stopping host may take to exit after its
	// input closes, before it is killed.
	stopWait = 3 * time.Second
	// maxFrame caps one frame read from the host.
	maxFrame = 16 << 20
)

// ErrNoSession is a session the host does not know (sessionNotFound).
var ErrNoSession = errors.New("muse serve does not know the session")

// Host is nudge's own `muse serve`. It is safe for concurrent use; requests
// are answered one at a time.
type Host struct {
	// Program is Muse's executable ("muse"); the host is its `serve`.
	Program string
	// Dir is the host's working folder; Env its environment (nil: nudge's).
	Dir string
	Env []string
	// Idle (default DefaultIdle) stops a host unused for that long.
	Idle time.Duration
	Log  *slog.Logger

	mu     sync.Mutex
	proc   *process
	idle   *time.Timer
	starts atomic.Int64 // read without waiting for a request under way
}

// process is one running host and its stdio.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	nextID int
	dead   chan struct{}
}

// Read asks the host about session: session/read without items, then
// usage/read. It starts the host when none runs.
func (h *Host) Read(ctx context.Context, session string) (Answer, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	p, err := h.running(ctx)
	if err != nil {
		return Answer{}, err
	}
	a := Answer{SessionID: session}
	a.Read, err = h.call(ctx, p, "session/read", map[string]any{"sessionId": session, "excludeItems": true})
	if err != nil {
		return Answer{}, err
	}
	if a.Usage, err = h.call(ctx, p, "usage/read", map[string]any{}); err != nil {
		// Usage is per account and optional: the session's state stands alone.
		h.log().Debug("muse serve: usage/read failed", "err", err)
		a.Usage = nil
	}
	h.armIdle()
	return a, nil
}

// Starts counts the hosts started so far.
func (h *Host) Starts() int { return int(h.starts.Load()) }

// Close stops the host, if one runs.
func (h *Host) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.idle != nil {
		h.idle.Stop()
	}
	h.stop()
}

func (h *Host) log() *slog.Logger {
	if h.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return h.Log
}

// armIdle (re)starts the idle stop; called with h.mu held.
func (h *Host) armIdle() {
	idle := h.Idle
	if idle <= 0 {
		idle = DefaultIdle
	}
	if h.idle == nil {
		h.idle = time.AfterFunc(idle, func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.proc != nil {
				h.log().Debug("muse serve idle; stopping it")
				h.stop()
			}
		})
		return
	}
	h.idle.Reset(idle)
}

// running returns the running host, starting and initializing one when
// none runs or the last one died; called with h.mu held.
func (h *Host) running(ctx context.Context) (*process, error) {
	if p := h.proc; p != nil {
		select {
		case <-p.dead:
			h.stop()
		default:
			return p, nil
		}
	}
	if h.Program == "" {
		return nil, errors.New("muse serve: no program")
	}
	cmd := exec.Command(h.Program, "serve")
	cmd.Dir, cmd.Env = h.Dir, h.Env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("muse serve: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("muse serve: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s serve: %w", h.Program, err)
	}
	h.starts.Add(1)
	p := &process{cmd: cmd, stdin: stdin, out: bufio.NewReaderSize(stdout, 64<<10), dead: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		h.log().Debug("muse serve exited", "pid", cmd.Process.Pid, "err", err)
		close(p.dead)
	}()
	h.proc = p
	h.log().Info("started muse serve to read Muse sessions", "pid", cmd.Process.Pid)
	if _, err := h.call(ctx, p, "initialize", map[string]any{
		"clientInfo":   map[string]string{"name": "nudge", "version": "1"},
		"capabilities": map[string]any{"userInputDialogs": false},
	}); err != nil {
		h.stop()
		return nil, fmt.Errorf("muse serve initialize: %w", err)
	}
	if err := p.send(map[string]any{"jsonrpc": "2.0", "method": "initialized"}); err != nil {
		h.stop()
		return nil, fmt.Errorf("muse serve initialized: %w", err)
	}
	return p, nil
}

// stop ends the host: its input closes (the protocol's orderly end), then
// it is killed if it lingers; called with h.mu held.
func (h *Host) stop() {
	p := h.proc
	if p == nil {
		return
	}
	h.proc = nil
	p.stdin.Close()
	select {
	case <-p.dead:
	case <-time.After(stopWait):
		p.cmd.Process.Kill()
		<-p.dead
	}
}

// frame is a JSON-RPC 2.0 frame from the host.
type frame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    struct {
			Kind string `json:"kind"`
		} `json:"data"`
	} `json:"error"`
}

// call sends one request and waits for its response, skipping the
// notifications and server requests a host may send meanwhile.
func (h *Host) call(ctx context.Context, p *process, method string, params any) (json.RawMessage, error) {
	p.nextID++
	id := p.nextID
	if err := p.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, fmt.Errorf("muse serve %s: %w", method, err)
	}
	type reply struct {
		f   frame
		err error
	}
	got := make(chan reply, 1)
	go func() {
		for {
			line, err := readLine(p.out)
			if err != nil {
				got <- reply{err: err}
				return
			}
			var f frame
			if json.Unmarshal(line, &f) != nil || f.Method != "" || string(f.ID) != fmt.Sprint(id) {
				continue
			}
			got <- reply{f: f}
			return
		}
	}()
	select {
	case <-ctx.Done():
		// The reader goroutine is left blocked: the host is stopped,
		// which ends it.
		h.stop()
		return nil, fmt.Errorf("muse serve %s: %w", method, ctx.Err())
	case r := <-got:
		if r.err != nil {
			h.stop()
			return nil, fmt.Errorf("muse serve %s: %w", method, r.err)
		}
		if e := r.f.Error; e != nil {
			if e.Data.Kind == "sessionNotFound" {
				return nil, fmt.Errorf("%w: %s", ErrNoSession, e.Message)
			}
			return nil, fmt.Errorf("muse serve %s: error %d %s: %s", method, e.Code, e.Data.Kind, e.Message)
		}
		return r.f.Result, nil
	}
}

func (p *process) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = p.stdin.Write(append(b, '\n'))
	return err
}

// readLine reads one newline-terminated frame, refusing one over maxFrame.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxFrame {
			return nil, fmt.Errorf("frame over %d bytes", maxFrame)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return line, nil
	}
}
