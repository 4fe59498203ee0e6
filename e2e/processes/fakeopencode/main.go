// Command fakeopencode stands in for `opencode serve` where a test needs a
// server of another user, or one whose every request is seen. Run under the
// name opencode as `opencode [flags] serve --port P`, it listens on
// 127.0.0.1:P (a free port for 0), replays the /global/event frames of a
// file on every stream it serves, answers the API calls nudge makes as an
// idle server, and appends "METHOD PATH" of every request to a log.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

func main() {
	frames := flag.String("frames", "", "file of /global/event frames, one JSON object a line")
	logPath := flag.String("log", "", "file the requests are appended to")
	flag.Parse()
	port := "0"
	for i, a := range flag.Args() {
		if a == "--port" && i+1 < len(flag.Args()) {
			port = flag.Args()[i+1]
		}
	}
	replay, err := os.ReadFile(*frames)
	if err != nil {
		fail(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		fail(err)
	}
	// As `opencode serve` does (docs/agents/opencode.md §9.3).
	fmt.Printf("opencode server listening on http://%s\n", ln.Addr())
	var mu sync.Mutex
	seen := func(r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		f, err := os.OpenFile(*logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fail(err)
		}
		fmt.Fprintf(f, "%s %s\n", r.Method, r.URL.Path)
		f.Close()
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /global/event", func(w http.ResponseWriter, r *http.Request) {
		seen(r)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"payload\":{\"type\":\"server.connected\",\"properties\":{}}}\n\n")
		sc := bufio.NewScanner(bytes.NewReader(replay))
		sc.Buffer(nil, 8<<20)
		for sc.Scan() {
			fmt.Fprintf(w, "data: %s\n\n", sc.Bytes())
		}
		w.(http.Flusher).Flush()
		tick := time.NewTicker(10 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
				fmt.Fprint(w, "data: {\"payload\":{\"type\":\"server.heartbeat\",\"properties\":{}}}\n\n")
				w.(http.Flusher).Flush()
			}
		}
	})
	mux.HandleFunc("GET /session/status", func(w http.ResponseWriter, r *http.Request) { seen(r); w.Write([]byte("{}")) })
	mux.HandleFunc("GET /permission", func(w http.ResponseWriter, r *http.Request) { seen(r); w.Write([]byte("[]")) })
	mux.HandleFunc("GET /question", func(w http.ResponseWriter, r *http.Request) { seen(r); w.Write([]byte("[]")) })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		seen(r)
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		http.NotFound(w, r)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fail(srv.Serve(ln))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "fakeopencode:", err)
	os.Exit(1)
}
