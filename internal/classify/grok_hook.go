package classify

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"time"
)

// grokHookRecord turns one Grok hook's stdin into the line `nudge hook
// grok` appends, and names its file under Grok's home. event is
// $GROK_HOOK_EVENT. For UserPromptSubmit and Stop the line carries the
// session's reply count in grok.db (count), so that a Stop without a reply
// can be told from a finished turn (docs/agents/grok.md §3).
func grokHookRecord(input []byte, event string, now time.Time, count func(session string) (int, error)) (file string, line []byte, err error) {
	if len(input) > HookInputMax {
		return "", nil, fmt.Errorf("grok hook: input over %d bytes", HookInputMax)
	}
	raw := json.RawMessage(strings.TrimSpace(string(input)))
	var in grokHookInput
	if err := json.Unmarshal(raw, &in); err != nil {
		return "", nil, fmt.Errorf("grok hook: input is not a JSON object: %w", err)
	}
	rec := grokRecord{ReceivedAt: now.UTC().Format(time.RFC3339Nano), Event: event, Input: raw}
	hook := in.HookEventName
	if hook == "" {
		hook = event
	}
	if (hook == "UserPromptSubmit" || hook == "Stop") && in.SessionID != "" {
		// Without the count a Stop reads as finished: the limitation
		// nudge shows anyway.
		if n, err := count(in.SessionID); err == nil {
			rec.Replies = &n
		}
	}
	line, err = json.Marshal(rec)
	if err != nil {
		return "", nil, fmt.Errorf("grok hook: %w", err)
	}
	return path.Join(grokHooksDir, grokFileName(in.SessionID)+".jsonl"), line, nil
}

// grokFileName makes a session id safe as a file name.
func grokFileName(session string) string {
	var b strings.Builder
	for _, c := range session {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
			b.WriteRune(c)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 128 {
			break
		}
	}
	name := strings.Trim(b.String(), ".")
	if name == "" {
		return "unknown-session"
	}
	return name
}
