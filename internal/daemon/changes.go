package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"

	"nudge/internal/status"
	"nudge/internal/usersock"
)

// changesPath is the control socket's change stream: the daemon's status as
// one JSON object per line, the current one at once, then each time it
// changes (the same signal the Inbox window's live updates use).
const changesPath = "/changes"

// serveChanges streams the status until the client leaves or the daemon
// stops (ctx). It sends nothing while nothing changes.
func serveChanges(ctx context.Context, c Control, log *slog.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		flusher, ok := w.(http.Flusher)
		if !ok {
			http.Error(w, "streaming unsupported", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		log.Debug("change stream opened")
		defer log.Debug("change stream closed")
		enc := json.NewEncoder(w)
		for {
			// Take the signal before reading, so no change in between is missed.
			changed := c.Changed()
			if err := enc.Encode(c.Status()); err != nil {
				return
			}
			flusher.Flush()
			select {
			case <-changed:
			case <-r.Context().Done():
				return
			case <-ctx.Done():
				return
			}
		}
	}
}

// Watch calls fn with the daemon's status at once and again after each
// change, until fn returns false (Watch returns nil), ctx ends (its error),
// or the daemon stops (an error wrapping ErrNotRunning).
func (c *Client) Watch(ctx context.Context, fn func(status.Status) bool) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://nudge"+changesPath, nil)
	if err != nil {
		return err
	}
	resp, err := usersock.Client(c.socket, 0).Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return ErrNotRunning
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("control %s: %w", changesPath, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("control %s: %s: %s", changesPath, resp.Status, msg)
	}
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for lines.Scan() {
		var st status.Status
		if err := json.Unmarshal(lines.Bytes(), &st); err != nil {
			return fmt.Errorf("control %s: %w", changesPath, err)
		}
		if !fn(st) {
			return nil
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("the daemon stopped: %w", ErrNotRunning)
}
