package outage

import (
	"encoding/json"
	"testing"
	"time"

	"nudge/internal/retry"
	"nudge/internal/testenv"
)

func TestPure(t *testing.T) {
	testenv.Pure(t, "nudge/internal/outage", "nudge/internal/retry", "nudge/internal/advice", "nudge/internal/classify", "nudge/internal/jsonscan")
}

var (
	t0      = time.Date(2026, 12, 4, 10, 42, 0, 0, time.UTC)
	a, b, c = key("a"), key("b"), key("c")
)

func key(s string) retry.Key { return retry.Key{Agent: "claude", Session: s} }

const ladder = 130 * time.Second

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

// A single session's failures are no outage: its attempts go as they come.
func TestOneSessionIsNoOutage(t *testing.T) {
	tr := New(ladder, nil)
	for i := range 4 {
		if ch := tr.Failed(a, "anthropic", "500", at(i*40)); len(ch.Changed) != 0 {
			t.Fatalf("an outage of one session: %+v", ch.Changed[0])
		}
		if o, wait, _, _ := tr.Due(a, at(i*40+10)); o != nil || wait {
			t.Fatal("one session's attempt waits")
		}
	}
}

// Two sessions' errors on one provider within Window are an outage whose
// probe failed first; farther apart, or on two providers, they are not.
func TestOutageNeedsTwoSessionsOnOneProviderWithinWindow(t *testing.T) {
	tr := New(ladder, nil)
	tr.Failed(a, "anthropic", "500", at(0))
	if ch := tr.Failed(b, "openai", "500", at(1)); len(ch.Changed) != 0 {
		t.Fatal("two providers made one outage")
	}
	if ch := tr.Failed(c, "anthropic", "500", at(0).Add(Window+time.Second)); len(ch.Changed) != 0 {
		t.Fatal("errors farther apart than the window made an outage")
	}
	ch := tr.Failed(a, "anthropic", "529 overloaded", at(0).Add(Window+2*time.Second))
	if len(ch.Changed) != 1 {
		t.Fatal("no outage")
	}
	o := ch.Changed[0]
	if o.Provider != "anthropic" || o.Probe != c || len(o.Members) != 2 || !o.Start.Equal(at(0).Add(Window+time.Second)) {
		t.Errorf("outage %+v", o)
	}
	if got := tr.Outages(); len(got) != 1 {
		t.Errorf("open outages %d", len(got))
	}
}

// Two providers failing at once are two outages.
func TestTwoProvidersAreTwoOutages(t *testing.T) {
	tr := New(ladder, nil)
	d := key("d")
	tr.Failed(a, "anthropic", "500", at(0))
	tr.Failed(b, "openai", "500", at(0))
	tr.Failed(c, "anthropic", "500", at(1))
	tr.Failed(d, "openai", "500", at(1))
	if got := tr.Outages(); len(got) != 2 || got[0].Provider == got[1].Provider {
		t.Fatalf("outages %+v", got)
	}
	tr.Done(a, at(20))
	if got := tr.Outages(); len(got) != 1 || got[0].Provider != "openai" {
		t.Errorf("the other provider's outage ended too: %+v", got)
	}
}

// outage3 is an outage of a, b and c failing a second apart.
func outage3(t *testing.T) *Tracker {
	t.Helper()
	tr := New(ladder, nil)
	tr.Failed(a, "anthropic", "500", at(0))
	tr.Failed(b, "anthropic", "500", at(1))
	tr.Failed(c, "anthropic", "529", at(2))
	if o := tr.Of(c); o == nil || len(o.Members) != 3 || o.Probe != a {
		t.Fatalf("outage %+v", o)
	}
	return tr
}

// Only the probe's attempts go; the others wait, looked at again at least
// every Recheck and when the outage starts to cost.
func TestOnlyTheProbeSpendsAttempts(t *testing.T) {
	tr := outage3(t)
	if _, wait, _, _ := tr.Due(a, at(10)); wait {
		t.Error("the probe waits")
	}
	o, wait, next, ch := tr.Due(b, at(11))
	if !wait || !next.Equal(at(11).Add(Recheck)) || o.Waiting() != 1 || ch.Started != nil {
		t.Errorf("b: wait %v next %v waiting %d started %v", wait, next, o.Waiting(), ch.Started)
	}
	if _, wait, next, _ = tr.Due(c, at(100)); !wait || !next.Equal(at(0).Add(ladder)) {
		t.Errorf("c: wait %v next %v, want the time it starts to cost", wait, next)
	}
}

// The outage is told once, when it has lasted a whole ladder: never again.
func TestToldOnceWhenItCosts(t *testing.T) {
	tr := outage3(t)
	tr.Due(b, at(11))
	_, _, _, ch := tr.Due(c, at(130))
	if ch.Started == nil || !ch.Started.Told || ch.Started.Waiting() != 2 {
		t.Fatalf("not told when it started to cost, with the sessions waiting then: %+v", ch.Started)
	}
	for _, s := range []int{131, 190, 250} {
		if _, _, _, ch := tr.Due(b, at(s)); ch.Started != nil {
			t.Fatalf("told again at %d", s)
		}
	}
	if ch := tr.Left(a, true, at(200)); ch.Started != nil {
		t.Error("told again when the probe gave up")
	}
}

// When the probe's turn completes, the outage ends and the waiting
// sessions are released Spacing apart, in the order they failed; a told
// outage is told to have ended.
func TestRecoveryReleasesTheWaitingSpacedOut(t *testing.T) {
	tr := outage3(t)
	tr.Due(c, at(12))
	tr.Due(b, at(13))
	tr.Due(b, at(130))
	ch := tr.Done(a, at(140))
	if len(ch.Releases) != 2 || ch.Releases[0] != (Release{b, at(140), "Anthropic is back"}) || ch.Releases[1] != (Release{c, at(140).Add(Spacing), "Anthropic is back"}) {
		t.Errorf("releases %+v", ch.Releases)
	}
	if ch.Ended == nil || ch.Ended.Open() || ch.Ended.GaveUp {
		t.Errorf("ended %+v", ch.Ended)
	}
	if tr.Of(b) != nil || len(tr.Outages()) != 0 {
		t.Error("the outage is still open")
	}
	if _, wait, _, _ := tr.Due(b, at(140)); wait {
		t.Error("a released session still waits")
	}
}

// An outage that ended before it cost anything is not told at all.
func TestShortOutageIsNotTold(t *testing.T) {
	tr := outage3(t)
	tr.Due(b, at(11))
	if ch := tr.Done(a, at(30)); ch.Ended != nil || len(ch.Releases) != 1 {
		t.Errorf("change %+v", ch)
	}
}

// When the probe gives up, the session that failed next probes, at once
// when its attempt waits; when every session gave up, the outage ends
// given up, told.
func TestNextProbeWhenTheProbeGivesUp(t *testing.T) {
	tr := outage3(t)
	tr.Due(b, at(11))
	ch := tr.Left(a, true, at(135))
	if ch.Started == nil {
		t.Error("the probe's give-up after a ladder is not told")
	}
	if len(ch.Releases) != 1 || ch.Releases[0] != (Release{b, at(135), "this session probes Anthropic now"}) || tr.Of(b).Probe != b {
		t.Errorf("releases %+v", ch.Releases)
	}
	if tr.Of(a) != nil {
		t.Error("a session given up is still in the outage")
	}
	ch = tr.Left(b, true, at(300))
	if len(ch.Releases) != 0 || tr.Of(c).Probe != c {
		t.Errorf("c, not waiting yet, is released: %+v", ch.Releases)
	}
	ch = tr.Left(c, true, at(500))
	if ch.Ended == nil || !ch.Ended.GaveUp || len(tr.Outages()) != 0 {
		t.Errorf("ended %+v", ch.Ended)
	}
}

// A session the person took over leaves; a new failure brings it back.
func TestLeftAndBack(t *testing.T) {
	tr := outage3(t)
	tr.Due(c, at(12))
	tr.Left(c, false, at(20))
	if tr.Of(c) != nil {
		t.Fatal("c is still in the outage")
	}
	tr.Failed(c, "anthropic", "500", at(40))
	if _, wait, _, _ := tr.Due(c, at(50)); !wait {
		t.Error("c back in the outage does not wait")
	}
}

// Continue releases the waiting sessions of a provider, Spacing apart;
// each may send one attempt, then waits again after another failure.
func TestContinueReleasesTheWaiting(t *testing.T) {
	tr := outage3(t)
	tr.Due(b, at(11))
	tr.Due(c, at(12))
	if ch := tr.Continue("openai", at(20)); len(ch.Releases) != 0 {
		t.Fatal("another provider's sessions released")
	}
	ch := tr.Continue("", at(20))
	if len(ch.Releases) != 2 || !ch.Releases[1].At.Equal(at(20).Add(Spacing)) || ch.Releases[0].Why != "the person asked to continue the waiting sessions" {
		t.Fatalf("releases %+v", ch.Releases)
	}
	if _, wait, _, _ := tr.Due(b, at(20)); wait {
		t.Error("a released session waits")
	}
	tr.Failed(b, "anthropic", "500", at(25))
	if _, wait, _, _ := tr.Due(b, at(35)); !wait {
		t.Error("a released session that failed again does not wait")
	}
}

// An open outage stored as JSON and given to New goes on as it was.
func TestRestored(t *testing.T) {
	tr := outage3(t)
	tr.Due(b, at(11))
	blob, err := json.Marshal(tr.Outages())
	if err != nil {
		t.Fatal(err)
	}
	var back []*Outage
	if err := json.Unmarshal(blob, &back); err != nil {
		t.Fatal(err)
	}
	tr = New(ladder, back)
	if _, wait, _, _ := tr.Due(b, at(20)); !wait {
		t.Error("restored: b does not wait")
	}
	if ch := tr.Done(a, at(30)); len(ch.Releases) != 1 || ch.Releases[0].Key != b {
		t.Errorf("restored: releases %+v", ch.Releases)
	}
}

// A clone is the tracker as it was: changes to the tracker do not reach
// it (a step the store refuses goes back to it).
func TestCloneIsApart(t *testing.T) {
	tr := outage3(t)
	tr.Failed(key("d"), "openai", "500", at(3))
	back := tr.Clone()
	tr.Due(b, at(11))
	tr.Sent(a)
	tr.Done(a, at(20))
	o := back.Of(b)
	if o == nil || o.Waiting() != 0 || o.Members[0].Attempts != 0 || !back.Recent(key("d")) {
		t.Fatalf("the clone changed with the tracker: %+v", o)
	}
	if tr.Of(b) != nil || tr.Recent(a) {
		t.Error("the tracker did not change")
	}
}

// Continuations sent during an outage are counted on their session.
func TestSentCounted(t *testing.T) {
	tr := outage3(t)
	tr.Sent(a)
	tr.Sent(a)
	if ch := tr.Sent(key("x")); len(ch.Changed) != 0 {
		t.Error("a session of no outage changed it")
	}
	if o := tr.Of(a); o.Members[0].Attempts != 2 {
		t.Errorf("attempts %d", o.Members[0].Attempts)
	}
}
