package classify

import (
	"path/filepath"
	"testing"
)

// lastFailure is the last dead turn of the sample file, its provider
// attributed as the daemon does.
func lastFailure(t *testing.T, agentName, path string) Failure {
	t.Helper()
	agent, ok := Lookup(agentName)
	if !ok {
		t.Fatalf("agent %s is not registered", agentName)
	}
	events, err := readFile(path, agent)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(events) - 1; i >= 0; i-- {
		if e := events[i]; e.Kind == TurnFailed {
			agent.Attribute(&e)
			return *e.Failure
		}
	}
	t.Fatalf("%s: no dead turn", path)
	return Failure{}
}

// Each dead turn names the provider and model the agent's records say it
// failed against, else the agent's own provider.
func TestFailureNamesItsProvider(t *testing.T) {
	for _, c := range []struct {
		agent, path               string
		provider, endpoint, model string
	}{
		{"claude", filepath.Join(claudeSamples, "resume-after-500-print.jsonl"), "anthropic", "127.0.0.1:18111", "claude-opus-5-5"},
		{"claude", filepath.Join(claudeSamples, "usage-limit-5h-oauth-print.jsonl"), "anthropic", "", "claude-sonnet-5-5"},
		{"codex", filepath.Join(codexSamples, "api500.jsonl"), "fake", "", "gpt-5.5"},
		{"opencode", filepath.Join("testdata", "samples", "opencode", "e500_giveup.sse_event.jsonl"), "fake", "", "fake-model"},
		{"gemini", filepath.Join(geminiSamples, "stream503", "tmp", "project", "chats", "session-2026-12-04T01-43-fc6d4f77.jsonl"), "google", "", ""},
	} {
		f := lastFailure(t, c.agent, c.path)
		if f.Provider != c.provider || f.Endpoint != c.endpoint || f.Model != c.model {
			t.Errorf("%s: provider %q endpoint %q model %q, want %q %q %q", filepath.Base(c.path), f.Provider, f.Endpoint, f.Model, c.provider, c.endpoint, c.model)
		}
	}
}

// A record that names a provider keeps it; one that names none gets the
// agent's own.
func TestAttribute(t *testing.T) {
	a := Agent{Provider: "moonshot"}
	ev := Event{Kind: TurnFailed, Failure: &Failure{Class: ProviderError}}
	a.Attribute(&ev)
	if ev.Failure.Provider != "moonshot" {
		t.Errorf("provider %q, want the agent's", ev.Failure.Provider)
	}
	ev.Failure.Provider = "openrouter"
	a.Attribute(&ev)
	if ev.Failure.Provider != "openrouter" {
		t.Errorf("provider %q, want the record's", ev.Failure.Provider)
	}
	if got := ProviderTitle("anthropic"); got != "Anthropic" {
		t.Errorf("title %q", got)
	}
	if got := ProviderTitle("fake"); got != "fake" {
		t.Errorf("title of an unknown id %q", got)
	}
}

// On names the provider as people write it, then the endpoint and model
// when known.
func TestOn(t *testing.T) {
	for _, c := range []struct {
		f    Failure
		want string
	}{
		{Failure{}, ""},
		{Failure{Provider: "openai"}, "on OpenAI"},
		{Failure{Provider: "anthropic", Model: "claude-opus-5-5"}, "on Anthropic, model claude-opus-5-5"},
		{Failure{Provider: "anthropic", Endpoint: "127.0.0.1:9", Model: "m"}, "on Anthropic at 127.0.0.1:9, model m"},
	} {
		if got := c.f.On(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.f, got, c.want)
		}
	}
}
