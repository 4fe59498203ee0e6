package classify

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// One reading of a failure for every agent (docs/failures.md). Each agent's
// code says only where its records keep a failure's typed codes, HTTP
// status and texts (failureSignals); readFailure applies the same rules to
// all of them: the table of error types (failureTypes), an HTTP status,
// whether typed or written in a text, a provider's error body embedded in a
// text, and the wording (failurePhrases). When the signals disagree, the
// one that would not retry wins, and the Failure keeps what was seen.

// failureSignals are the places one record keeps what it says of a failure.
type failureSignals struct {
	// codes are typed codes: the agent's own category or name, a
	// provider's error type, each with the field it was read from.
	codes []signalField
	// status is a typed HTTP status (0: none), read from statusField.
	status      int
	statusField string
	// texts are the error texts (a message, a response body), read for an
	// HTTP status, an embedded error body and their wording.
	texts []signalField
	// marks are what the agent's own typed fields settle (a quota marker,
	// a flag), as signals.
	marks []signal
	// retryable names a flag by which the agent marks the error as
	// transient ("" when it does not): a weak sign, taken only when
	// nothing else says and every code is known.
	retryable string
}

// signalField is a value and the field of the record it came from.
type signalField struct{ field, value string }

// code adds a typed code when it is set.
func (s *failureSignals) code(field, value string) {
	if value = strings.TrimSpace(value); value != "" {
		s.codes = append(s.codes, signalField{field, value})
	}
}

// text adds an error text when it is set.
func (s *failureSignals) text(field, value string) {
	if strings.TrimSpace(value) != "" {
		s.texts = append(s.texts, signalField{field, value})
	}
}

// mark adds a signal an agent's typed field settles.
func (s *failureSignals) mark(c Class, field, value string) {
	s.marks = append(s.marks, signal{c, ruleType, field, value})
}

// setStatus sets the typed HTTP status when it is one.
func (s *failureSignals) setStatus(field string, n int) {
	if n >= 100 && n <= 599 && s.status == 0 {
		s.status, s.statusField = n, field
	}
}

// signal is one thing a record says about the cause of its failure.
type signal struct {
	class Class
	rule  string // which rule read it: "error type", "HTTP status", "wording", …
	field string // where: the record's field
	value string // what: the code, the status, the words
}

func (g signal) String() string {
	return fmt.Sprintf("%s %q in %s → %s", g.rule, g.value, g.field, g.class)
}

// The rules' names, as Failure.Rule and `nudge classify --why` give them.
const (
	ruleType      = "error type"
	ruleStatus    = "HTTP status"
	ruleBody      = "embedded error body"
	ruleWording   = "wording"
	ruleRetryable = "marked retryable"
	ruleNothing   = "nothing recognised"
)

// classRank orders the classes when signals disagree: a class that does not
// retry outranks provider_error, and among those the one that costs the
// person most to miss comes first. Unknown ranks as a class only where a
// table row gives it (a code known to mean "tell, never retry").
var classRank = []Class{UsageLimit, Auth, Rejected, Cancelled, Unknown, ProviderError}

// readFailure applies the shared rules to a record's signals.
func readFailure(s failureSignals) Failure {
	seen := slices.Clone(s.marks)
	var unknownCodes []string
	for _, c := range s.codes {
		if t, ok := lookupFailureType(c.value); ok {
			if t.Class != "" {
				seen = append(seen, signal{t.Class, ruleType, c.field, c.value})
			}
		} else {
			unknownCodes = append(unknownCodes, c.field+"="+c.value)
		}
	}
	if s.status != 0 {
		if c := statusClass(s.status); c != "" {
			seen = append(seen, signal{c, ruleStatus, s.statusField, strconv.Itoa(s.status)})
		}
	}
	for _, t := range s.texts {
		seen = append(seen, textSignals(t.field, t.value)...)
	}
	if s.retryable != "" && len(unknownCodes) == 0 {
		seen = append(seen, signal{ProviderError, ruleRetryable, s.retryable, "true"})
	}
	f := Failure{Class: Unknown, Rule: ruleNothing}
	if win, ok := decide(seen); ok {
		f.Class, f.Rule, f.Field = win.class, win.rule, win.field
		if !(win.rule == ruleRetryable && len(seen) == 1) {
			f.Signals = signalList(seen)
		}
	}
	if f.Rule == ruleNothing || len(unknownCodes) > 0 {
		f.Shape = failureShape(s, unknownCodes)
	}
	return f
}

// decide picks the winning signal: the best-ranked class; among its
// signals, typed ones before words. The weak retryable mark wins only alone.
func decide(seen []signal) (signal, bool) {
	best, ok := signal{}, false
	for _, g := range seen {
		if g.rule == ruleRetryable && len(seen) > 1 {
			continue
		}
		if !ok || rankOf(g.class) < rankOf(best.class) {
			best, ok = g, true
		}
	}
	return best, ok
}

func rankOf(c Class) int { return slices.Index(classRank, c) }

// signalList renders the signals seen, when there was more than one or
// they disagree, for the timeline and `nudge classify --why`.
func signalList(seen []signal) []string {
	if len(seen) < 2 {
		return nil
	}
	out := make([]string, 0, len(seen))
	for _, g := range seen {
		s := g.String()
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// failureShape names a failure record's shape for the unknown-shape count:
// the fields it carried and the codes no table row knows.
func failureShape(s failureSignals, unknownCodes []string) string {
	var parts []string
	parts = append(parts, unknownCodes...)
	if s.status != 0 {
		parts = append(parts, s.statusField+"="+strconv.Itoa(s.status))
	}
	for _, t := range s.texts {
		parts = append(parts, t.field)
	}
	if len(parts) == 0 {
		return "no error fields"
	}
	return strings.Join(parts, " ")
}

// statusClass is what an HTTP status says by itself.
func statusClass(n int) Class {
	switch {
	case n == 401, n == 403:
		return Auth
	case n == 402:
		return UsageLimit
	case n == 400, n == 404, n == 413, n == 422:
		return Rejected
	case n == 408, n == 409, n == 429, n >= 500 && n <= 599:
		return ProviderError
	case n >= 400 && n <= 499:
		return Rejected
	}
	return ""
}

// Why is the failure's class with the rule and field that decided it, and
// the other signals seen, in one line (`nudge classify --why`).
func (f Failure) Why() string {
	if f.Rule == "" {
		return string(f.Class)
	}
	s := string(f.Class) + " by " + f.Rule
	if f.Field != "" {
		s += " in " + f.Field
	}
	if len(f.Signals) > 1 {
		s += "; seen: " + strings.Join(f.Signals, "; ")
	}
	return s
}

// SignalsNote is what the timeline says of disagreeing signals ("" when
// they agree or there was one).
func (f Failure) SignalsNote() string {
	classes := map[string]bool{}
	for _, s := range f.Signals {
		if i := strings.LastIndex(s, "→ "); i >= 0 {
			classes[s[i+len("→ "):]] = true
		}
	}
	if len(classes) < 2 {
		return ""
	}
	return "signals seen: " + strings.Join(f.Signals, "; ") + "; the one that does not retry wins"
}
