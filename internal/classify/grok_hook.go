package classify

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // grok-dev's grok.db
)

// GrokHookInputMax caps the stdin one hook may hand over.
const GrokHookInputMax = 4 << 20

// GrokHookRecord turns one Grok hook's stdin into the line `nudge hook grok`
// appends, and names the file it goes to under root (Grok's home). event is
// $GROK_HOOK_EVENT. For UserPromptSubmit and Stop the line carries the
// session's reply count in root/grok.db, so that a Stop without a reply can
// be told from a finished turn (grok.md §3).
func GrokHookRecord(input []byte, event, root string, now time.Time) (path string, line []byte, err error) {
	if len(input) > GrokHookInputMax {
		return "", nil, fmt.Errorf("grok hook: input over %d bytes", GrokHookInputMax)
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
		n, err := grokReplies(filepath.Join(root, "grok.db"), in.SessionID)
		if err == nil {
			rec.Replies = &n
		} else if !errors.Is(err, os.ErrNotExist) {
			// Without the count a Stop reads as finished: the limitation
			// nudge shows anyway.
			slog.Warn("grok hook: reply count unknown", "err", err)
		}
	}
	line, err = json.Marshal(rec)
	if err != nil {
		return "", nil, fmt.Errorf("grok hook: %w", err)
	}
	return filepath.Join(root, filepath.FromSlash(grokHooksDir), grokFileName(in.SessionID)+".jsonl"), line, nil
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

// grokReplyTimeout bounds the read of grok.db: the hook must return at once.
const grokReplyTimeout = 2 * time.Second

// grokReplies counts the session's assistant messages in grok.db, read-only
// and without holding a transaction (grok.md §2). A missing database is
// os.ErrNotExist.
func grokReplies(db, session string) (int, error) {
	if _, err := os.Stat(db); err != nil {
		return 0, fmt.Errorf("grok.db: %w", err)
	}
	abs, err := filepath.Abs(db)
	if err != nil {
		return 0, fmt.Errorf("grok.db: %w", err)
	}
	name := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	conn, err := sql.Open("sqlite", name+"?mode=ro&_pragma=busy_timeout(1000)&_pragma=query_only(1)")
	if err != nil {
		return 0, fmt.Errorf("grok.db %s: %w", abs, err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), grokReplyTimeout)
	defer cancel()
	var n int
	err = conn.QueryRowContext(ctx, `SELECT count(*) FROM messages WHERE session_id = ? AND role = 'assistant'`, session).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("grok.db %s: count replies: %w", abs, err)
	}
	return n, nil
}
