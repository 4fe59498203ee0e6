package muse

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"
)

// The test binary doubles as the host: run as `<test binary> serve` with
// envHost set, it answers the protocol on stdio.
const envHost = "NUDGE_MUSE_TEST_HOST"

func TestMain(m *testing.M) {
	if os.Getenv(envHost) != "" && len(os.Args) > 1 && os.Args[1] == "serve" {
		serveForTest()
		return
	}
	os.Exit(m.Run())
}

// serveForTest answers initialize, session/read and usage/read; session
// "gone" is unknown, session "die" makes the host exit.
func serveForTest() {
	in := bufio.NewScanner(os.Stdin)
	initialized := false
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				SessionID    string `json:"sessionId"`
				ExcludeItems bool   `json:"excludeItems"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil {
			continue
		}
		if req.Method == "initialized" {
			initialized = true
			continue
		}
		var resp string
		switch {
		case req.Method == "initialize":
			resp = `"result":{"serverInfo":{"name":"test"},"museHome":"/h/.muse"}`
		case !initialized:
			resp = `"error":{"code":-32002,"message":"not initialized","data":{"kind":"notInitialized"}}`
		case req.Method == "session/read" && req.Params.SessionID == "die":
			os.Exit(1)
		case req.Method == "session/read" && req.Params.SessionID == "gone":
			resp = `"error":{"code":-32020,"message":"no such session","data":{"kind":"sessionNotFound"}}`
		case req.Method == "session/read":
			// A notification first: the client must skip it.
			fmt.Printf(`{"jsonrpc":"2.0","method":"session/statusChanged","params":{"sessionId":%q,"status":"idle"}}`+"\n", req.Params.SessionID)
			resp = fmt.Sprintf(`"result":{"session":{"sessionId":%q,"activeTurnId":null},"lastTurn":{"turnId":"t","terminal":"completed"},"pendingRequests":[],"excluded":%v}`,
				req.Params.SessionID, req.Params.ExcludeItems)
		case req.Method == "usage/read":
			resp = `"result":{"usage":{"window":{"usedPercent":7,"resetsAtMs":1}}}`
		default:
			resp = `"error":{"code":-32601,"message":"method not found","data":{"kind":"methodNotFound"}}`
		}
		fmt.Printf(`{"jsonrpc":"2.0","id":%s,%s}`+"\n", req.ID, resp)
	}
}

func testHost(t *testing.T, idle time.Duration) *Host {
	t.Helper()
	t.Setenv(envHost, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h := &Host{Program: exe, Dir: t.TempDir(), Idle: idle}
	t.Cleanup(h.Close)
	return h
}

// One host answers every read, after initialize and initialized, skipping
// what it sends meanwhile; an unknown session is ErrNoSession and keeps the
// host.
func TestHostReads(t *testing.T) {
	h := testHost(t, time.Hour)
	ctx := context.Background()
	for _, s := range []string{"s-1", "s-2"} {
		a, err := h.Read(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Session  struct{ SessionID string }
			LastTurn struct{ Terminal string }
			Excluded bool
		}
		if err := json.Unmarshal(a.Read, &r); err != nil || a.SessionID != s || r.Session.SessionID != s || r.LastTurn.Terminal != "completed" || !r.Excluded {
			t.Errorf("answer %+v (%s), want session/read of %s without items", a, a.Read, s)
		}
		if string(a.Usage) != `{"usage":{"window":{"usedPercent":7,"resetsAtMs":1}}}` {
			t.Errorf("usage = %s", a.Usage)
		}
	}
	if _, err := h.Read(ctx, "gone"); !errors.Is(err, ErrNoSession) {
		t.Errorf("unknown session: err = %v, want ErrNoSession", err)
	}
	if _, err := h.Read(ctx, "s-3"); err != nil {
		t.Fatal(err)
	}
	if n := h.Starts(); n != 1 {
		t.Errorf("hosts started: %d, want 1", n)
	}
}

// An idle host is stopped; the next read starts a new one. A host that dies
// is replaced on the next read.
func TestHostStopsWhenIdleAndRestarts(t *testing.T) {
	h := testHost(t, 100*time.Millisecond)
	ctx := context.Background()
	if _, err := h.Read(ctx, "s-1"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for h.holds() {
		if time.Now().After(deadline) {
			t.Fatal("the idle host was not stopped")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := h.Read(ctx, "s-1"); err != nil {
		t.Fatal(err)
	}
	if n := h.Starts(); n != 2 {
		t.Errorf("hosts started: %d, want 2 (one after the idle stop)", n)
	}
	if _, err := h.Read(ctx, "die"); err == nil {
		t.Fatal("a read whose host died succeeded")
	}
	if _, err := h.Read(ctx, "s-1"); err != nil {
		t.Fatalf("after the host died: %v", err)
	}
	if n := h.Starts(); n != 3 {
		t.Errorf("hosts started: %d, want 3", n)
	}
}

// A program that cannot start is an error, not a hang.
func TestHostMissingProgram(t *testing.T) {
	h := &Host{Program: "/nonexistent/muse"}
	if _, err := h.Read(context.Background(), "s"); err == nil {
		t.Fatal("no error for a missing program")
	}
}

// holds reports whether a host process is held.
func (h *Host) holds() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.proc != nil
}
