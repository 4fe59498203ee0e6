package classify

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

// validClasses are the classes of docs/behaviour.md §2.
var validClasses = []Class{ProviderError, UsageLimit, Auth, Rejected, Cancelled, Unknown}

// FuzzFailure reads any record or text through every agent's failure
// reading, seeded from the whole corpus (testdata/corpus). Whatever the
// input: no panic, one of the classes with the rule that decided it, the
// same answer twice, a reset time only on a usage limit, and a text that
// speaks of a usage limit never a provider error.
func FuzzFailure(f *testing.F) {
	for _, c := range loadCorpus(f) {
		f.Add(c.Agent, c.Form, c.Input)
	}
	f.Fuzz(func(t *testing.T, agent, form, input string) {
		c := corpusEntry{Agent: agent, Form: form, Input: input, TS: "2026-08-19T13:40:00Z"}
		got, err := corpusFailure(c)
		if err != nil {
			return
		}
		again, _ := corpusFailure(c)
		if !reflect.DeepEqual(got, again) {
			t.Fatalf("two readings differ: %+v, %+v", got, again)
		}
		if !slices.Contains(validClasses, got.Class) || got.Rule == "" && got.Class != Cancelled {
			t.Fatalf("class %q rule %q", got.Class, got.Rule)
		}
		if !got.ResetAt.IsZero() && (got.Class != UsageLimit || got.ResetAt.Year() > 9999) {
			t.Fatalf("reset %v on %s", got.ResetAt, got.Class)
		}
		_ = got.Why()
		_ = got.SignalsNote()
		if len([]rune(got.Excerpt())) > excerptMax+40 {
			t.Fatalf("excerpt of %d runes", len([]rune(got.Excerpt())))
		}
		if form == "text" && got.Class == ProviderError {
			for _, s := range textSignals("text", input) {
				if s.class == UsageLimit {
					t.Fatalf("a text that speaks of a usage limit (%s) read as a provider error", s)
				}
			}
		}
	})
}

// A reset read from a text is never before the record by more than the
// slack, unless the text names its date and year or Unix time.
func TestReadResetAfterRecord(t *testing.T) {
	ts := time.Date(2026, 8, 19, 13, 40, 0, 0, time.UTC)
	for _, text := range []string{"resets 9:50pm (Asia/Saigon)", "resets 1pm", "try again in 3 hours", "resets Oct 31, 9am", "resets Jan 2 at 7am (UTC)"} {
		at, unread := readReset(text, ts)
		if at.IsZero() || unread != "" || at.Before(ts.Add(-resetSlack)) {
			t.Errorf("%q: %v %q", text, at, unread)
		}
	}
}
