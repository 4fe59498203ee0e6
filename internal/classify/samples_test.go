package classify

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// checkSamples reads every sample of an agent's EXPECTED.tsv (its files
// the glob below the scenario's folder) and checks its last turn ending,
// and the agent, session, project and id of every event.
func checkSamples(t *testing.T, samples, name, glob string) {
	t.Helper()
	agent, ok := Lookup(name)
	if !ok {
		t.Fatalf("%s not registered", name)
	}
	f, err := os.Open(filepath.Join(samples, "EXPECTED.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) != 4 || cols[0] == "scenario" {
			continue
		}
		rows++
		scenario, kind, class, reset := cols[0], cols[1], cols[2], cols[3]
		t.Run(scenario, func(t *testing.T) {
			files, err := filepath.Glob(filepath.Join(samples, scenario, glob))
			if err != nil || len(files) == 0 {
				t.Fatalf("%s: no file %s: %v", scenario, glob, err)
			}
			for _, file := range files {
				checkSample(t, agent, file, kind, class, reset)
			}
		})
	}
	if rows == 0 {
		t.Fatal("EXPECTED.tsv has no rows")
	}
}

// checkSample checks one sample file against its EXPECTED.tsv row.
func checkSample(t *testing.T, agent Agent, file, kind, class, reset string) {
	t.Helper()
	head, _ := os.ReadFile(file)
	if a, ok := Recognize(file, head[:min(len(head), 4096)]); !ok || a.Name != agent.Name {
		t.Errorf("%s not recognised as %s", file, agent.Title)
	}
	events, err := readFile(file, agent)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if e.Agent != agent.Name || agent.CheckSession(e.Session) != nil || e.Project != "/home/dev/project" || e.Time.IsZero() || e.ID == "" {
			t.Fatalf("%s: event %+v lacks agent, session, project, time or id", file, e)
		}
	}
	e := lastEnding(events)
	if kind == "open" {
		if e != nil && e.Time.After(lastUserMessage(events)) {
			t.Errorf("%s: turn still open, got %s", file, e.Kind)
		}
		return
	}
	if e == nil || string(e.Kind) != kind {
		t.Fatalf("%s: last ending %v, want %s", file, e, kind)
	}
	if at := lastUserMessage(events); at.After(e.Time) {
		t.Errorf("%s: a message to the agent at %v after the last ending, at %v", file, at, e.Time)
	}
	gotClass, gotReset := "-", "-"
	if f := e.Failure; f != nil {
		gotClass = string(f.Class)
		if !f.ResetAt.IsZero() {
			gotReset = f.ResetAt.Format(time.RFC3339)
		}
		if f.Class == Auth && f.Hint != agent.LoginHint {
			t.Errorf("%s: auth failure without the login hint", file)
		}
	}
	if gotClass != class || gotReset != reset {
		t.Errorf("%s: class %s reset %s, want %s %s (%+v)", file, gotClass, gotReset, class, reset, e.Failure)
	}
}

// lastUserMessage is the time of the last user message, or zero.
func lastUserMessage(events []Event) time.Time {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Kind == UserMessage {
			return events[i].Time
		}
	}
	return time.Time{}
}
