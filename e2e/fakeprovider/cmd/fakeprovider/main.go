// Command fakeprovider serves one of the fake model providers on loopback
// for driving a real agent CLI by hand:
//
//	fakeprovider -api anthropic -listen 127.0.0.1:18111 -scenario 500,ok -log requests.jsonl
//
// -api picks the protocol: anthropic (Messages API, for ANTHROPIC_BASE_URL),
// chat (OpenAI-compatible chat completions; clients append "/v1") or
// responses (OpenAI Responses API; the URL ends in /v1) or gemini (the Gemini
// API, for GOOGLE_GEMINI_BASE_URL). It prints the base
// URL and runs until interrupted.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"nudge/e2e/fakeanthropic"
	"nudge/e2e/fakechat"
	"nudge/e2e/fakegemini"
	"nudge/e2e/fakeresponses"
)

// listener is a fake provider's server.
type listener interface {
	Listen(addr string) (baseURL string, stop func(), err error)
}

// open parses scenario for api and returns its server.
func open(api, scenario, logPath string) (listener, error) {
	switch api {
	case "anthropic":
		return build(fakeanthropic.ParseScenario, fakeanthropic.New, scenario, logPath)
	case "chat":
		return build(fakechat.ParseScenario, fakechat.New, scenario, logPath)
	case "responses":
		return build(fakeresponses.ParseScenario, fakeresponses.New, scenario, logPath)
	case "gemini":
		return build(fakegemini.ParseScenario, fakegemini.New, scenario, logPath)
	}
	return nil, fmt.Errorf("unknown -api %q (anthropic, chat, responses or gemini)", api)
}

// build parses scenario and makes a server that plays it.
func build[S listener](parse func(string) ([]string, error), newServer func([]string, string) (S, error),
	scenario, logPath string) (listener, error) {
	modes, err := parse(scenario)
	if err != nil {
		return nil, err
	}
	return newServer(modes, logPath)
}

func main() {
	api := flag.String("api", "", "the protocol: anthropic, chat, responses or gemini")
	listen := flag.String("listen", "127.0.0.1:0", "address to bind (loopback only)")
	scenario := flag.String("scenario", "", `answers for main-loop requests, e.g. "500,ok"; then "ok"`)
	logPath := flag.String("log", "", "append one JSON line per request to this file")
	flag.Parse()

	srv, err := open(*api, *scenario, *logPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
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
