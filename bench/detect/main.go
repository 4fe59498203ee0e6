// Command detect measures nudge's detection latency end to end: it runs the
// real daemon on a temporary home, appends Claude Code records to a
// transcript one at a time, and compares each record's own timestamp with
// the moment the daemon stored its event (`nudge explain --json`).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

func main() {
	n := flag.Int("n", 300, "records to append")
	gap := flag.Duration("gap", 20*time.Millisecond, "pause between appends")
	nudge := flag.String("nudge", "", "nudge binary (default: build ./cmd/nudge)")
	flag.Parse()

	dir, err := os.MkdirTemp("", "nudge-bench-")
	check(err)
	defer os.RemoveAll(dir)
	if *nudge == "" {
		*nudge = filepath.Join(dir, "nudge")
		build := exec.Command("go", "build", "-o", *nudge, "./cmd/nudge")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		check(build.Run())
	}
	home := filepath.Join(dir, "home")
	env := append(os.Environ(), "HOME="+home, "NUDGE_DATA_DIR="+filepath.Join(dir, "data"), "NUDGE_NOTIFY_DESKTOP=false", "NUDGE_RETRY_ENABLED=false")
	daemon := exec.Command(*nudge, "run", "--headless", "--log-level", "warn")
	daemon.Env = env
	check(daemon.Start())
	defer func() { daemon.Process.Signal(os.Interrupt); daemon.Wait() }()
	waitReady(*nudge, env)

	project := filepath.Join(home, ".claude", "projects", "-bench")
	check(os.MkdirAll(project, 0o700))
	const session = "bbbbbbbb-0000-4000-8000-000000000000"
	f, err := os.OpenFile(filepath.Join(project, session+".jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	check(err)
	for i := range *n {
		rec := map[string]any{"type": "user", "sessionId": session, "cwd": "/bench", "isSidechain": false,
			"timestamp": time.Now().UTC().Format(time.RFC3339Nano), "promptSource": "typed", "origin": map[string]string{"kind": "human"},
			"message": map[string]any{"role": "user", "content": fmt.Sprintf("message %d", i)}}
		b, _ := json.Marshal(rec)
		_, err := f.Write(append(b, '\n'))
		check(err)
		time.Sleep(*gap)
	}
	f.Close()

	var lat []time.Duration
	deadline := time.Now().Add(30 * time.Second)
	for len(lat) < *n && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		lat = latencies(*nudge, env, session)
	}
	if len(lat) == 0 {
		log.Fatal("the daemon recorded no events")
	}
	slices.Sort(lat)
	pct := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	fmt.Printf("detection latency over %d records (append → stored event): p50 %v  p90 %v  p99 %v  max %v\n",
		len(lat), pct(0.50), pct(0.90), pct(0.99), lat[len(lat)-1])
}

// latencies reads each user_message event's record time and detection time.
func latencies(nudge string, env []string, session string) []time.Duration {
	cmd := exec.Command(nudge, "explain", "--json", session)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return nil
	}
	var tl struct {
		Events []struct {
			Kind       string
			Time       *time.Time
			DetectedAt time.Time `json:"detected_at"`
		}
	}
	check(json.Unmarshal(out, &tl))
	var lat []time.Duration
	for _, e := range tl.Events {
		if e.Kind == "user_message" && e.Time != nil {
			lat = append(lat, e.DetectedAt.Sub(*e.Time))
		}
	}
	return lat
}

func waitReady(nudge string, env []string) {
	for range 300 {
		cmd := exec.Command(nudge, "status", "--json")
		cmd.Env = env
		if out, err := cmd.Output(); err == nil {
			var st struct{ Daemon *struct{ Ready bool } }
			if json.Unmarshal(out, &st) == nil && st.Daemon != nil && st.Daemon.Ready {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	log.Fatal("the daemon did not become ready")
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
