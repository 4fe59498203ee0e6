package classify

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// What an error text says: an HTTP status written in it, a provider's error
// body embedded in it (Anthropic, OpenAI, Moonshot, Google, xAI and
// OpenRouter shapes, docs/failures.md), and its wording.

// failureTextMax bounds how much of one text is read: an error text is a
// sentence or a body; a proxy's page or a hostile record may be megabytes.
const failureTextMax = 64 << 10

// textStatus finds an HTTP status written in a text: after "API Error",
// "Error code", "status", "HTTP"; in brackets; at the start; or before its
// reason phrase ("429 Too Many Requests").
var textStatus = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\b(?:api error|error code|status(?:[ _]?code)?|http(?:_status)?|last status|unexpected status|returned|error)\W{0,3}([1-5]\d\d)\b`),
	regexp.MustCompile(`(?i)^\W{0,4}(?:error:\s*|\w*error\s*)?([1-5]\d\d)\b[\s:{"]`),
	regexp.MustCompile(`\[([1-5]\d\d)\]|\(([1-5]\d\d)\)`),
	regexp.MustCompile(`(?i)\b([1-5]\d\d) (?:too many requests|unauthori[sz]ed|forbidden|bad request|not found|payment required|service unavailable|bad gateway|gateway timeout|internal server error|request timeout|overloaded)\b`),
}

// textSignals reads one error text.
func textSignals(field, text string) []signal {
	if len(text) > failureTextMax {
		text = text[:failureTextMax]
	}
	var out []signal
	if n := statusInText(text); n != 0 {
		if c := statusClass(n); c != "" {
			out = append(out, signal{c, ruleStatus, field + " (text)", strconv.Itoa(n)})
		}
	}
	out = append(out, bodySignals(field, text, 0)...)
	// A terminal wraps what users paste: the words are read with their
	// spacing made one, and without regard to case.
	out = append(out, wordingSignals(field, strings.ToLower(strings.Join(strings.Fields(text), " ")))...)
	return out
}

// statusInText is the first HTTP status a text names, or 0.
func statusInText(text string) int {
	for _, re := range textStatus {
		if m := re.FindStringSubmatch(text); m != nil {
			for _, g := range m[1:] {
				if n, err := strconv.Atoi(g); err == nil {
					return n
				}
			}
		}
	}
	return 0
}

// bodyMaxStarts and bodyMaxDepth bound the search for embedded bodies.
const (
	bodyMaxStarts = 8
	bodyMaxDepth  = 3
)

// pythonType is an error type in a Python dict's repr, as kimi-cli prints a
// provider's body: {'error': {'message': …, 'type': 'rate_limit_reached_error'}}.
var pythonType = regexp.MustCompile(`'(?:type|code|status)':\s*'([A-Za-z_][\w.]*)'`)

// bodySignals finds provider error bodies embedded in a text and reads
// their typed fields; a body whose message holds another body is read too.
func bodySignals(field, text string, depth int) []signal {
	if depth > bodyMaxDepth {
		return nil
	}
	var out []signal
	starts := 0
	for i := 0; i < len(text) && starts < bodyMaxStarts; i++ {
		quoted := text[i] == '"' && i+1 < len(text) && (text[i+1] == '{' || text[i+1] == '[')
		if text[i] != '{' && text[i] != '[' && !quoted {
			continue
		}
		starts++
		dec := json.NewDecoder(strings.NewReader(text[i:]))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			continue
		}
		out = append(out, errorBody(field, v, depth)...)
		i += int(dec.InputOffset()) - 1
	}
	if depth == 0 {
		for _, m := range pythonType.FindAllStringSubmatch(text, 4) {
			if t, ok := lookupFailureType(m[1]); ok && t.Class != "" {
				out = append(out, signal{t.Class, ruleBody, field, m[1]})
			}
		}
	}
	return out
}

// errorBody reads the typed fields of one decoded body of any of the
// shapes of docs/failures.md: {"type":"error","error":{"type","message"}}
// (Anthropic), {"error":{"type","code","message"}} (OpenAI, Moonshot),
// {"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}} and lists of them
// (Google), {"code","error":"…"} (xAI), {"error":{"code":402,"metadata":
// {"raw":"…"}}} (OpenRouter).
func errorBody(field string, v any, depth int) []signal {
	var out []signal
	switch b := v.(type) {
	case string:
		// A body quoted as a JSON string, as logs print one.
		if strings.ContainsAny(b, "{[") {
			out = append(out, bodySignals(field, b, depth+1)...)
		}
	case []any:
		for i, e := range b {
			if i == 4 {
				break
			}
			out = append(out, errorBody(field, e, depth)...)
		}
	case map[string]any:
		for _, k := range []string{"type", "code", "status"} {
			switch val := b[k].(type) {
			case string:
				if t, ok := lookupFailureType(val); ok && t.Class != "" {
					out = append(out, signal{t.Class, ruleBody, field, val})
				}
			case json.Number:
				if n, err := val.Int64(); err == nil {
					if c := statusClass(int(n)); c != "" {
						out = append(out, signal{c, ruleBody, field, val.String()})
					}
				}
			}
		}
		switch e := b["error"].(type) {
		case map[string]any, []any:
			out = append(out, errorBody(field, e, depth)...)
		}
		for _, k := range []string{"message", "raw", "error"} {
			if s, ok := b[k].(string); ok && strings.ContainsAny(s, "{[") {
				out = append(out, bodySignals(field, s, depth+1)...)
			}
		}
		if m, ok := b["metadata"].(map[string]any); ok {
			out = append(out, errorBody(field, m, depth)...)
		}
	}
	return out
}

// wordingSignals applies the phrase table to a lower-cased text.
func wordingSignals(field, text string) []signal {
	var out []signal
	for i := range failurePhrases {
		p := &failurePhrases[i]
		if m := p.match(text); m != "" {
			out = append(out, signal{p.Class, ruleWording, field, m})
		}
	}
	return out
}

// negated tells a phrase a text denies: "(not your usage limit)".
var negated = regexp.MustCompile(`\b(?:not|isn't|is not|never)\s+(?:your |a |the |an )?$`)

// match is the first place the phrase occurs in text and is not denied, or "".
func (p *failurePhrase) match(text string) string {
	for _, loc := range p.re.FindAllStringIndex(text, 8) {
		before := text[max(0, loc[0]-16):loc[0]]
		if p.Class == UsageLimit && negated.MatchString(before) {
			continue
		}
		if p.Class == UsageLimit && rateWord.MatchString(before) {
			continue
		}
		return text[loc[0]:loc[1]]
	}
	return ""
}

// rateWord is a word before "limit reached" that makes it a rate, size or
// context limit, not a usage limit.
var rateWord = regexp.MustCompile(`\b(?:rate|context|token|tokens|length|output|size|request|requests|concurrency|step|steps|turn|turns|recursion|iteration|iterations|depth|loop|call|calls|tool)[ _-]?$`)
