package classify

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every session id the captured samples hold has its agent's shape, so a
// real session is never refused; each agent's samples give at least one.
func TestSessionIDsOfTheSamples(t *testing.T) {
	// Kimi's readers take the session from the file's place: only
	// samples kept in the CLI's own layout name a real session.
	realLayout := map[string]func(string) bool{
		kimiCodeName:   func(p string) bool { return strings.HasSuffix(p, "/agents/main/wire.jsonl") },
		kimiLegacyName: func(p string) bool { return strings.Contains(p, "/.kimi/sessions/") },
	}
	checked := map[string]int{}
	for _, dir := range []string{"testdata/samples", "testdata/grok"} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			head, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			a, ok := Recognize(p, head[:min(len(head), 4096)])
			if !ok || realLayout[a.Name] != nil && !realLayout[a.Name](filepath.ToSlash(p)) {
				return nil
			}
			events, _ := readFile(p, a)
			for _, e := range events {
				if err := a.CheckSession(e.Session); err != nil {
					t.Errorf("%s: %v", p, err)
				}
				checked[a.Name]++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range Agents() {
		if checked[a.Name] == 0 {
			t.Errorf("no sample session of %s was checked", a.Name)
		}
	}
}

// An id that would be read as an option, walk out of a folder, split a
// command line or a URL, or just is not the agent's, is refused.
func TestSessionIDsRefused(t *testing.T) {
	bad := []string{
		"", "-", "--share", "-p=x", "--resume=11111111-1111-4111-8111-111111111111",
		"../../etc/passwd", "a/b", "a b", "x\n", "x\x1b]52;c;aGk=\a", "ses_dd44a27b2ffeJB7OXPK95HKcGs/../x",
		"11111111-1111-4111-8111-111111111111 --share", strings.Repeat("a", 200),
	}
	for _, a := range Agents() {
		if a.SessionID == nil {
			t.Errorf("%s has no session id pattern", a.Name)
			continue
		}
		for _, id := range bad {
			if err := a.CheckSession(id); err == nil {
				t.Errorf("%s accepts session id %q", a.Name, id)
			}
		}
	}
	const (
		uuid     = "11111111-1111-4111-8111-111111111111"
		openCode = "ses_dd44a27b2ffeJB7OXPK95HKcGs"
		kimiCode = "session_78244af2-7075-4dee-9363-c042bef5bb50"
	)
	for _, c := range []struct {
		agent       string
		good, wrong []string
	}{
		{claudeName, []string{uuid}, []string{openCode, kimiCode}},
		{codexName, []string{"01a22baa-0557-7581-9c35-d25741d23cf9"}, []string{openCode, kimiCode}},
		{openCodeName, []string{openCode}, []string{uuid, kimiCode, "ses_short", "ses_dd44a27b2ffeJB7OXPK95HKcG!"}},
		{kimiCodeName, []string{kimiCode}, []string{uuid, openCode}},
		{kimiLegacyName, []string{"7c0f3b2e-4d1a-4e8b-9f6c-2a5d8e1b3c70"}, []string{openCode, kimiCode}},
		{museName, []string{"0198f0aa-1111-7000-8000-0000000000aa", "s-1"}, nil},
		{grokName, []string{"6f1c", uuid}, nil},
	} {
		a, _ := Lookup(c.agent)
		for _, id := range c.good {
			if err := a.CheckSession(id); err != nil {
				t.Errorf("%s: %v", c.agent, err)
			}
		}
		for _, id := range c.wrong {
			if a.CheckSession(id) == nil {
				t.Errorf("%s accepts %q", c.agent, id)
			}
		}
	}
	a, _ := Lookup(claudeName)
	if err := a.CheckSession("-11111111-1111-4111-8111-11111111111"); err == nil || !strings.Contains(err.Error(), `starts with "-"`) {
		t.Errorf("leading dash: %v", err)
	}
}
