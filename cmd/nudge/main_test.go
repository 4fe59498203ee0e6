package main

import (
	"errors"
	"strings"
	"testing"
)

// Bad usage is exit status 2 (docs/behaviour.md §8): an unknown command, an unknown flag
// or a wrong argument count are all usage errors.
func TestBadUsageIsUsageError(t *testing.T) {
	for _, args := range [][]string{{"bogus"}, {"status", "--bogus"}, {"explain"}, {"retry", "maybe"},
		{"help", "bogus"}, {"help", "inbox", "bogus"}, {"inbox", "--url", "--json"}, {"inbox", "--open", "--url"}, {"inbox", "reed", "1"}} {
		_, err := runNudge(t, "", args...)
		var u usageError
		if !errors.As(err, &u) {
			t.Errorf("nudge %v: error %v, want a usage error", args, err)
		}
	}
	if _, err := runNudge(t, ""); err != nil {
		t.Errorf("nudge with no arguments: %v, want the help", err)
	}
	if out, err := runNudge(t, "", "help", "explain"); err != nil || !strings.Contains(out, "nudge explain SESSION") {
		t.Errorf("nudge help explain: %v\n%s", err, out)
	}
}

// An unknown command is named with the ones it may mean.
func TestDidYouMean(t *testing.T) {
	for args, want := range map[string]string{
		"stauts":     `unknown command "stauts" for "nudge"; did you mean "status"?`,
		"inbox clar": `unknown command "clar" for "nudge inbox"; did you mean "clear"?`,
		"zzzzzz":     `unknown command "zzzzzz" for "nudge"`,
	} {
		_, err := runNudge(t, "", strings.Fields(args)...)
		if err == nil || err.Error() != want {
			t.Errorf("nudge %s: %v, want %q", args, err, want)
		}
	}
}
