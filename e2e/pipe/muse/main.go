// Command muse stands in for Muse Code in the end-to-end tests, playing the
// official MSP golden transcripts (lines {"dir","raw"}).
//
//	muse serve
//
// is a Muse Session Protocol host on stdio that answers initialize,
// session/read and usage/read by folding the frames kept in the session's
// session.jsonl under $HOME/.muse; every start is appended to
// $MUSE_STANDIN_SERVE_LOG.
//
//	muse -transcript FILE -upto N [-received FILE] [-usage-reset-in D [-hold FILE]] [-approval FILE]
//
// is a person's interactive session in a terminal: it writes the
// transcript's first N lines into its session.jsonl (after the usage
// window, and once FILE exists when -hold is given), then for each line it
// reads (a person's or nudge's typing) records the line, writes a turn/start
// with it and the rest of the transcript. SIGUSR1 opens the approval of the
// -approval transcript, SIGUSR2 resolves it.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		serve()
		return
	}
	interactive()
}

// line is one transcript line.
type line struct {
	Dir string `json:"dir"`
	Raw string `json:"raw"`
}

// frame is the part of an MSP frame the stand-in reads.
type frame struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params map[string]any  `json:"params,omitempty"`
}

func museHome() string {
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".muse")
}

// ---- the interactive session ----

func interactive() {
	transcript := flag.String("transcript", "", "golden transcript to play")
	upto := flag.Int("upto", -1, "lines written before the first input (-1: all)")
	received := flag.String("received", "received.log", "file that records every line received")
	usageIn := flag.Duration("usage-reset-in", 0, "write a usage window at 100 % that resets this far ahead")
	hold := flag.String("hold", "", "write the transcript only once this file exists")
	approval := flag.String("approval", "", "transcript whose approval SIGUSR1 opens and SIGUSR2 resolves")
	flag.Parse()

	lines := readTranscript(*transcript)
	if *upto < 0 || *upto > len(lines) {
		*upto = len(lines)
	}
	session := sessionOf(lines)
	cwd, _ := os.Getwd()
	dir := filepath.Join(museHome(), "sessions", "2026", "08", "07", session)
	must(os.MkdirAll(dir, 0o700))
	log, err := os.OpenFile(filepath.Join(dir, "session.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	must(err)
	rec, err := os.OpenFile(*received, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	must(err)
	var mu sync.Mutex
	write := func(ls ...line) {
		mu.Lock()
		defer mu.Unlock()
		for _, l := range ls {
			b, _ := json.Marshal(l)
			_, err := log.Write(append(b, '\n'))
			must(err)
		}
	}
	write(serverFrame("session/started", map[string]any{"session": map[string]any{
		"sessionId": session, "status": "idle", "turnCount": 0, "workspaceRoot": cwd, "activeTurnId": nil,
		"path": log.Name(), "createdAt": "2026-08-07T18:02:11.412Z", "updatedAt": "2026-08-07T18:02:11.412Z",
	}}))
	if *usageIn > 0 {
		write(serverFrame("usage/changed", map[string]any{
			"observedAtMs": time.Now().UnixMilli(), "tier": "stand-in",
			"window": map[string]any{"usedPercent": 100, "resetsAtMs": time.Now().Add(*usageIn).UnixMilli(), "windowDurationMins": 300},
			"weekly": map[string]any{"usedPercent": 40, "resetsAtMs": time.Now().Add(72 * time.Hour).UnixMilli()},
		}))
	}
	for *hold != "" {
		if _, err := os.Stat(*hold); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	write(lines[:*upto]...)
	rest := lines[*upto:]

	if *approval != "" {
		var open, resolve []line
		for _, l := range readTranscript(*approval) {
			switch methodOf(l) {
			case "approval/requested", "approval/request":
				open = append(open, l)
			case "approval/resolved":
				resolve = append(resolve, l)
			}
		}
		sigs := make(chan os.Signal, 2)
		signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGUSR2)
		go func() {
			for s := range sigs {
				if s == syscall.SIGUSR1 {
					write(open...)
					fmt.Println("muse> approval requested: write_file Cargo.toml")
				} else {
					write(resolve...)
					fmt.Println("muse> approval resolved")
				}
			}
		}()
	}

	fmt.Printf("muse stand-in, session %s\nmuse> ", session)
	in := bufio.NewScanner(os.Stdin)
	n := 0
	for in.Scan() {
		text := in.Text()
		fmt.Fprintln(rec, text)
		n++
		start := line{Dir: "client", Raw: mustJSON(map[string]any{"jsonrpc": "2.0", "id": 100 + n, "method": "turn/start", "params": map[string]any{
			"sessionId": session, "commandId": fmt.Sprintf("0198f0ab-0000-7000-8000-%012d", n),
			"input": []map[string]any{{"type": "text", "text": text}},
		}})}
		var reply []line
		for _, l := range rest {
			if l.Dir == "server" {
				reply = append(reply, l)
			}
		}
		write(append([]line{start}, reply...)...)
		rest = nil
		fmt.Printf("sent: %s\nmuse> ", text)
	}
}

func readTranscript(path string) []line {
	b, err := os.ReadFile(path)
	must(err)
	var out []line
	for _, s := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var l line
		must(json.Unmarshal([]byte(s), &l))
		out = append(out, l)
	}
	return out
}

func methodOf(l line) string {
	var f frame
	json.Unmarshal([]byte(l.Raw), &f)
	return f.Method
}

// sessionOf is the first session id a frame names.
func sessionOf(lines []line) string {
	for _, l := range lines {
		var f frame
		if json.Unmarshal([]byte(l.Raw), &f) == nil {
			if id, ok := f.Params["sessionId"].(string); ok && id != "" {
				return id
			}
		}
	}
	return "0198f0aa-1111-7000-8000-0000000000aa"
}

func serverFrame(method string, params map[string]any) line {
	return line{Dir: "server", Raw: mustJSON(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})}
}

// ---- the host ----

func serve() {
	if p := os.Getenv("MUSE_STANDIN_SERVE_LOG"); p != "" {
		if f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
			wd, _ := os.Getwd()
			fmt.Fprintf(f, "start pid %d in %s\n", os.Getpid(), wd)
			f.Close()
		}
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 16<<20)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				SessionID string `json:"sessionId"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || len(req.ID) == 0 {
			continue // notifications (initialized) need no answer
		}
		resp := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		switch req.Method {
		case "initialize":
			resp["result"] = map[string]any{
				"serverInfo": map[string]any{"name": "muse-stand-in", "version": "0.0.0"}, "museHome": museHome(),
				"platformFamily": "unix", "platformOs": "linux", "schema": map[string]any{"version": 1, "fingerprint": "sha256:stand-in"},
				"grantedCapabilities": []string{}, "experimentalApi": false, "sessionDurability": "durable",
			}
		case "session/read":
			if r, ok := sessionRead(req.Params.SessionID); ok {
				resp["result"] = r
			} else {
				resp["error"] = map[string]any{"code": -32020, "message": "session not found", "data": map[string]any{"kind": "sessionNotFound"}}
			}
		case "usage/read":
			resp["result"] = usageRead()
		default:
			resp["error"] = map[string]any{"code": -32601, "message": "method not found", "data": map[string]any{"kind": "methodNotFound"}}
		}
		out.WriteString(mustJSON(resp) + "\n")
		out.Flush()
	}
}

// sessionLogs lists the session.jsonl of session id, or of every session.
func sessionLogs(id string) []string {
	m, _ := filepath.Glob(filepath.Join(museHome(), "sessions", "*", "*", "*", id, "session.jsonl"))
	return m
}

// sessionRead folds a session's frames into a session/read result (MSP
// SessionReadResult): the session, lastTurn and pendingRequests.
func sessionRead(id string) (map[string]any, bool) {
	logs := sessionLogs(id)
	if len(logs) != 1 {
		return nil, false
	}
	info, err := os.Stat(logs[0])
	if err != nil {
		return nil, false
	}
	updated := info.ModTime().UTC().Format(time.RFC3339Nano)
	session := map[string]any{"sessionId": id, "status": "notLoaded", "turnCount": 0, "activeTurnId": nil, "path": logs[0],
		"createdAt": updated, "updatedAt": updated, "lastActivityAt": updated, "modelId": nil, "providerId": nil, "forkedFrom": nil, "workspaceRoot": nil}
	var lastTurn map[string]any
	pending := map[string]map[string]any{}
	var order []string
	n := 0
	for _, f := range frames(logs[0]) {
		n++
		p := f.Params
		switch f.Method {
		case "session/started":
			if s, ok := p["session"].(map[string]any); ok {
				session["workspaceRoot"] = s["workspaceRoot"]
			}
		case "turn/started":
			session["activeTurnId"] = p["turnId"]
		case "turn/completed":
			lastTurn = map[string]any{"turnId": p["turnId"], "terminal": p["terminal"]}
			for _, k := range []string{"error", "reason"} {
				if v, ok := p[k]; ok {
					lastTurn[k] = v
				}
			}
			if session["activeTurnId"] == p["turnId"] {
				session["activeTurnId"] = nil
			}
			session["turnCount"] = session["turnCount"].(int) + 1
		case "approval/request", "approval/requested":
			key, _ := p["approvalId"].(string)
			if _, ok := pending[key]; !ok {
				order = append(order, key)
			}
			pending[key] = map[string]any{"kind": "approval", "approvalId": key, "viewCursor": p["viewCursor"]}
		case "userInput/request", "userInput/requested":
			key, _ := p["userInputId"].(string)
			if _, ok := pending[key]; !ok {
				order = append(order, key)
			}
			pending[key] = map[string]any{"kind": "userInput", "userInputId": key, "viewCursor": p["viewCursor"]}
		case "approval/resolved":
			delete(pending, p["approvalId"].(string))
		case "userInput/settled":
			delete(pending, p["userInputId"].(string))
		}
	}
	open := []any{}
	for _, k := range order {
		if p, ok := pending[k]; ok {
			open = append(open, p)
		}
	}
	if session["activeTurnId"] != nil {
		session["status"] = "running"
	}
	r := map[string]any{"session": session, "pendingRequests": open, "viewCursor": fmt.Sprintf("v:%s:%d", id, n),
		"history": map[string]any{"mode": "none", "items": nil, "snapshot": nil, "noneReason": "excluded"}}
	if lastTurn != nil {
		r["lastTurn"] = lastTurn
	}
	return r, true
}

// usageRead is the latest usage/changed of any session: usage is per
// account, not per session.
func usageRead() map[string]any {
	var latest map[string]any
	for _, log := range sessionLogs("*") {
		for _, f := range frames(log) {
			if f.Method == "usage/changed" {
				latest = f.Params
			}
		}
	}
	if latest == nil {
		return map[string]any{}
	}
	return map[string]any{"usage": latest}
}

// frames reads the frames kept in a session log.
func frames(path string) []frame {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []frame
	for _, s := range strings.Split(string(b), "\n") {
		var l line
		var f frame
		if json.Unmarshal([]byte(s), &l) == nil && json.Unmarshal([]byte(l.Raw), &f) == nil && f.Method != "" {
			if f.Params == nil {
				f.Params = map[string]any{}
			}
			out = append(out, f)
		}
	}
	return out
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	must(err)
	return string(b)
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "muse stand-in:", err)
		os.Exit(1)
	}
}
