// Command fakeresponses serves a fake OpenAI Responses API on loopback for
// driving a real Codex CLI by hand:
//
//	fakeresponses -listen 127.0.0.1:18211 -scenario 500,ok -log requests.jsonl
//
// It prints the base URL for the provider's base_url and runs until
// interrupted.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"nudge/e2e/fakeresponses"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to bind (loopback only)")
	scenario := flag.String("scenario", "", `answers for main-loop requests, e.g. "500,ok"; then "ok"`)
	logPath := flag.String("log", "", "append one JSON line per request to this file")
	flag.Parse()

	modes, err := fakeresponses.ParseScenario(*scenario)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	srv, err := fakeresponses.New(modes, *logPath)
	if err != nil {
		slog.Error("start", "err", err)
		os.Exit(1)
	}
	url, stop, err := srv.Listen(*listen)
	if err != nil {
		slog.Error("start", "err", err)
		os.Exit(1)
	}
	fmt.Println(url)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	stop()
}
