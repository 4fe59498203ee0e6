package daemon

import (
	"context"
	"slices"
	"strings"
	"testing"

	"nudge/internal/status"
)

// deadTurn is a Claude Code error record with category and text.
func deadTurn(uuid, category, text string) map[string]any {
	r := apiError(uuid, 0, text)
	delete(r, "apiErrorStatus")
	r["error"] = category
	return r
}

// A dead turn whose record shape nudge does not know is logged once per
// shape and counted in the view `nudge doctor` prints; a known one is not.
func TestUnknownShapesCounted(t *testing.T) {
	c := newCore(t)
	c.start()
	c.write(prompt("p1", "go"), deadTurn("a1", "brand_new_category", "Something odd happened"))
	c.write(prompt("p2", "again"), deadTurn("a2", "brand_new_category", "Something odd happened again"))
	c.write(prompt("p3", "more"), deadTurn("a3", "another_new_one", "Hm"))
	c.write(prompt("p4", "last"), apiError("a4", 500, err500))
	c.eventually("four dead turns", func() bool { return c.events()["turn_failed"] == 4 })
	got := c.status().Daemon.UnknownShapes
	want := []status.UnknownShape{
		{Agent: "claude", Shape: "error=brand_new_category message.content", Count: 2, Path: c.transcript()},
		{Agent: "claude", Shape: "error=another_new_one message.content", Count: 1, Path: c.transcript()},
	}
	if !slices.Equal(got, want) {
		t.Errorf("unknown shapes %+v, want %+v", got, want)
	}
	if n := strings.Count(c.logs.String(), "a shape nudge does not know"); n != 2 {
		t.Errorf("%d log lines of an unknown shape, want one per shape:\n%s", n, c.logs)
	}
}

// When a record's signals disagree, the timeline says which were seen and
// that the one that does not retry won.
func TestTimelineSaysSignals(t *testing.T) {
	c := newCore(t)
	c.start()
	limit := apiError("a1", 429, "You've hit your session limit · resets 9:50pm (Asia/Saigon)")
	limit["error"] = "rate_limit"
	c.write(prompt("p1", "go"), limit)
	c.eventually("the dead turn", func() bool { return c.events()["turn_failed"] == 1 })
	evs, _, _, err := c.store.Timeline(context.Background(), "claude", coreSession)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Kind != "turn_failed" {
			continue
		}
		if e.Class != "usage_limit" || !strings.Contains(e.Detail, `HTTP status "429" in apiErrorStatus → provider_error`) ||
			!strings.Contains(e.Detail, `wording "session limit" in message.content → usage_limit`) ||
			!strings.Contains(e.Detail, "the one that does not retry wins") {
			t.Errorf("dead turn %s, detail %q", e.Class, e.Detail)
		}
		return
	}
	t.Fatal("no dead turn stored")
}
