package classify

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const geminiSamples = "testdata/samples/gemini"

// geminiChats are the chat files of a sample scenario.
func geminiChats(t testing.TB, scenario string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(geminiSamples, scenario, "tmp", "*", "chats", "session-*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: no chat file: %v", scenario, err)
	}
	return files
}

// TestGeminiExpected reads every sample (EXPECTED.tsv) and checks its last
// turn ending, its agent, session and project.
func TestGeminiExpected(t *testing.T) {
	agent, ok := Lookup(geminiName)
	if !ok {
		t.Fatal("gemini not registered")
	}
	f, err := os.Open(filepath.Join(geminiSamples, "EXPECTED.tsv"))
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
		name, kind, class, reset := cols[0], cols[1], cols[2], cols[3]
		t.Run(name, func(t *testing.T) {
			for _, file := range geminiChats(t, name) {
				head, _ := os.ReadFile(file)
				if a, ok := Recognize(file, head[:min(len(head), 4096)]); !ok || a.Name != geminiName {
					t.Errorf("%s not recognised as Gemini CLI", file)
				}
				events, err := readFile(file, agent)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range events {
					if agent.CheckSession(e.Session) != nil || e.Project != "/home/dev/project" || e.Time.IsZero() || e.ID == "" {
						t.Fatalf("%s: event %+v lacks session, project, time or id", file, e)
					}
				}
				e := lastEnding(events)
				if kind == "open" {
					if e != nil && e.Time.After(lastUserMessage(events)) {
						t.Errorf("%s: turn still open, got %s", file, e.Kind)
					}
					continue
				}
				if e == nil || string(e.Kind) != kind {
					t.Fatalf("%s: last ending %v, want %s", file, e, kind)
				}
				if at := lastUserMessage(events); at.After(e.Time) {
					t.Errorf("%s: a message to the agent at %v after the last ending, at %v", file, at, e.Time)
				}
				gotClass, gotReset := "-", "-"
				if e.Failure != nil {
					gotClass = string(e.Failure.Class)
					if !e.Failure.ResetAt.IsZero() {
						gotReset = e.Failure.ResetAt.Format(time.RFC3339)
					}
				}
				if gotClass != class || gotReset != reset {
					t.Errorf("%s: class %s reset %s, want %s %s (%+v)", file, gotClass, gotReset, class, reset, e.Failure)
				}
			}
		})
	}
	if rows == 0 {
		t.Fatal("EXPECTED.tsv has no rows")
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

// geminiLine is a message record as the CLI writes one.
func geminiLine(typ, content string) []byte {
	return fmt.Appendf(nil, `{"id":"m1","timestamp":"2026-12-04T01:40:27.881Z","type":%q,"content":%s}`, typ, content)
}

// TestGeminiFailures: each text the CLI records for a failed turn
// (docs/agents/gemini.md §4) reads as its class.
func TestGeminiFailures(t *testing.T) {
	cases := []struct {
		text string
		want Class
		code string
	}{
		{`[API Error: {"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT"}}]`, Rejected, "400/INVALID_ARGUMENT"},
		{`[API Error: {"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}]`, Auth, "401/UNAUTHENTICATED"},
		{"[API Error: You have exhausted your daily quota on this model.]\nPlease wait and try again later.", UsageLimit, ""},
		{"[API Error: The model is overloaded. Please try again later.]", ProviderError, ""},
		{`[API Error: got status: UNAVAILABLE. {"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}]`, ProviderError, "503/UNAVAILABLE"},
		{`[API Error: got status: INTERNAL. {"error":{"code":500,"message":"An internal error has occurred.","status":"INTERNAL"}}]`, ProviderError, "500/INTERNAL"},
		{"[API Error: exception TypeError: fetch failed sending request]", ProviderError, ""},
		{`[API Error: {"error":{"code":"x"}} and {"error":`, Unknown, ""},
		{"[API Error: something nobody has seen]", Unknown, ""},
		{"", Unknown, ""},
	}
	for _, c := range cases {
		content := fmt.Sprintf("%q", c.text)
		events := newGeminiChat("tmp/p/chats/session-2026-12-04T01-40-e566dd1d.jsonl", nil).Read(geminiLine("error", content))
		if len(events) != 1 || events[0].Kind != TurnFailed || events[0].Failure == nil {
			t.Fatalf("%q: events %+v", c.text, events)
		}
		f := events[0].Failure
		if f.Class != c.want || f.Code != c.code {
			t.Errorf("%q: class %s code %q (%s), want %s %q", c.text, f.Class, f.Code, f.Why(), c.want, c.code)
		}
		if f.Class == Auth && f.Hint != geminiLoginHint {
			t.Errorf("%q: hint %q", c.text, f.Hint)
		}
	}
}

// TestGeminiRecords: what each kind of record gives.
func TestGeminiRecords(t *testing.T) {
	cases := []struct {
		line string
		want []Kind
	}{
		{`{"sessionId":"68d9f147-0fd7-4834-8bf4-f20e20e6d565","projectHash":"x","kind":"main"}`, nil},
		{`{"$set":{"lastUpdated":"2026-12-04T01:37:11.862Z"}}`, nil},
		{`{"$set":{"messages":[{"id":"a","type":"error","content":"[API Error: 500]"}]}}`, nil},
		{`{"$rewindTo":"a"}`, nil},
		{string(geminiLine("user", `[{"text":"say hello"}]`)), []Kind{UserMessage, TurnStarted}},
		{string(geminiLine("user", `[{"functionResponse":{"id":"c1","name":"ls","response":{}}}]`)), []Kind{AgentActivity}},
		{string(geminiLine("gemini", `"Hello"`)), []Kind{TurnDone}},
		{string(geminiLine("gemini", `[{"text":"Hello"}]`)), []Kind{TurnDone}},
		{string(geminiLine("gemini", `""`)), []Kind{AgentActivity}},
		{`{"id":"m2","timestamp":"2026-12-04T01:37:12.170Z","type":"gemini","content":"","toolCalls":[{"id":"c1","name":"ls"}]}`, []Kind{AgentActivity}},
		{string(geminiLine("info", `"Request cancelled."`)), []Kind{TurnFailed}},
		{string(geminiLine("info", `"This request failed. Press F12 for diagnostics."`)), nil},
		{string(geminiLine("warning", `"careful"`)), nil},
		{`{"id":"m3","type":"gemini","content":`, nil},
		{`[1,2]`, nil},
	}
	for _, c := range cases {
		events := newGeminiChat("tmp/p/chats/session-2026-12-04T01-40-e566dd1d.jsonl", nil).Read([]byte(c.line))
		var got []Kind
		for _, e := range events {
			got = append(got, e.Kind)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: kinds %v, want %v", c.line, got, c.want)
		}
	}
}

// TestGeminiMessageAgain: a message appended again as its tokens arrive
// gives the same events, ids included.
func TestGeminiMessageAgain(t *testing.T) {
	r := newGeminiChat("tmp/p/chats/session-2026-12-04T01-40-e566dd1d.jsonl", nil)
	a := r.Read([]byte(`{"id":"m2","timestamp":"2026-12-04T01:37:12.170Z","type":"gemini","content":"Hi","tokens":null}`))
	b := r.Read([]byte(`{"id":"m2","timestamp":"2026-12-04T01:37:12.170Z","type":"gemini","content":"Hi","tokens":{"total":15}}`))
	if len(a) != 1 || fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("events %+v then %+v", a, b)
	}
}

// BenchmarkGeminiLongSession reads the records one message adds to a
// session of 2,000 messages: the metadata update that carries the whole
// message list is skipped undecoded, so a message costs the same at any
// length (docs/agents/gemini.md §2).
func BenchmarkGeminiLongSession(b *testing.B) {
	for _, n := range []int{20, 2000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var all strings.Builder
			all.WriteString(`{"$set":{"messages":[`)
			for i := range n {
				if i > 0 {
					all.WriteString(",")
				}
				fmt.Fprintf(&all, `{"id":"m%d","timestamp":"2026-12-04T01:37:12.170Z","type":"user","content":[{"text":"message %d"}]}`, i, i)
			}
			all.WriteString(`],"lastUpdated":"2026-12-04T01:37:12.170Z"}}`)
			set := []byte(all.String())
			msg := geminiLine("gemini", `"Hello from the model."`)
			r := newGeminiChat("tmp/p/chats/session-2026-12-04T01-40-e566dd1d.jsonl", nil)
			b.ResetTimer()
			for range b.N {
				r.Read(msg)
				r.Read(set)
			}
		})
	}
}
