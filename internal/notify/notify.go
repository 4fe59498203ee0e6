// Package notify tells the person: a desktop notification and, if
// configured, a phone push (an ntfy topic or a webhook), never blocking
// the caller.
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gen2brain/beeep"
)

const (
	// desktopTimeout bounds one desktop notification: on macOS beeep waits
	// up to about 2 s for delivery before its osascript fallback
	// (docs/platform.md §4).
	desktopTimeout = 5 * time.Second
	// pushTimeout bounds one try of a push request.
	pushTimeout = 10 * time.Second
	// appName is what the notification server shows as the sender.
	appName = "nudge"
)

// nameApp sets beeep's process-wide sender name, once.
var nameApp sync.Once

// defaultRetryDelays are the waits between the three tries of a push.
var defaultRetryDelays = []time.Duration{time.Second, 4 * time.Second}

// Message is one thing to tell the person.
type Message struct {
	Title, Body             string
	Agent, Project, Session string
	Urgent                  bool
	Link                    string // the Inbox URL, may be ""
}

// Config says where messages go.
type Config struct {
	Desktop    bool
	NtfyURL    string       // an ntfy topic URL, "" for none
	WebhookURL string       // "" for none
	HTTPClient *http.Client // nil: a default client
	// RetryDelays are the waits between tries of a failed push; one try
	// more than delays. nil: 1 s, 4 s (three tries).
	RetryDelays []time.Duration
}

// Notifier sends Messages in the background.
type Notifier struct {
	cfg    Config
	log    *slog.Logger
	client *http.Client
	delays []time.Duration

	ctx    context.Context // cancelled when Close gives up waiting
	cancel context.CancelFunc

	// desktopFailed is set by the first desktop notification that could
	// not be shown: that one is a warning, the later ones are details.
	desktopFailed atomic.Bool

	mu     sync.Mutex // guards closed and wg.Add
	closed bool
	wg     sync.WaitGroup
}

// New returns a Notifier for cfg that logs failures to log (nil: they are
// not logged).
func New(cfg Config, log *slog.Logger) *Notifier {
	nameApp.Do(func() { beeep.AppName = appName })
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	n := &Notifier{cfg: cfg, log: log.With("component", "notify"), client: cfg.HTTPClient, delays: cfg.RetryDelays}
	if n.client == nil {
		n.client = &http.Client{Timeout: pushTimeout}
	}
	if n.delays == nil {
		n.delays = defaultRetryDelays
	}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	return n
}

// Send delivers m to every configured destination, each on its own
// goroutine; it returns at once. Failures are logged, pushes retried.
func (n *Notifier) Send(m Message) {
	sent := time.Now().UTC()
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		n.log.Warn("notifier closed, message dropped", "title", m.Title, "session", m.Session)
		return
	}
	if n.cfg.Desktop {
		n.spawn(func() { n.desktop(m) })
	}
	if u := n.cfg.NtfyURL; u != "" {
		n.spawn(func() {
			n.push("ntfy", func(ctx context.Context) (*http.Request, error) { return ntfyRequest(ctx, u, m) })
		})
	}
	if u := n.cfg.WebhookURL; u != "" {
		n.spawn(func() {
			n.push("webhook", func(ctx context.Context) (*http.Request, error) { return webhookRequest(ctx, u, m, sent) })
		})
	}
}

// spawn runs fn as an in-flight send; n.mu is held.
func (n *Notifier) spawn(fn func()) {
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		fn()
	}()
}

// Close stops accepting messages and waits for the sends in flight. When
// ctx ends first it abandons them (cancelling pushes and their retries)
// and returns ctx's error.
func (n *Notifier) Close(ctx context.Context) error {
	n.mu.Lock()
	n.closed = true
	n.mu.Unlock()
	done := make(chan struct{})
	go func() {
		n.wg.Wait()
		close(done)
	}()
	defer n.cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		n.cancel()
		<-done
		return fmt.Errorf("notify: close with sends in flight: %w", ctx.Err())
	}
}

// desktop shows m on the desktop, giving up on waiting after desktopTimeout.
func (n *Notifier) desktop(m Message) {
	done := make(chan error, 1)
	go func() { done <- beeep.Notify(desktopText(m.Title, false), desktopText(m.Body, bodyMarkup()), "") }()
	select {
	case err := <-done:
		if err != nil {
			n.desktopFailure(m, err)
		}
	case <-time.After(desktopTimeout):
		n.desktopFailure(m, fmt.Errorf("no answer within %s", desktopTimeout))
	case <-n.ctx.Done():
		n.log.Warn("desktop notification abandoned at shutdown", "title", m.Title)
	}
}

// desktopFailure logs a desktop notification that could not be shown: the
// first one of a run as one warning that says what to do, the later ones
// at DEBUG. On a machine without a notification server (a headless one),
// every notification fails the same way.
func (n *Notifier) desktopFailure(m Message, err error) {
	n.log.Debug("desktop notification not shown", "title", m.Title, "err", err)
	if n.desktopFailed.Swap(true) {
		return
	}
	if n.cfg.NtfyURL != "" || n.cfg.WebhookURL != "" {
		n.log.Warn("desktop notifications cannot be shown here; nudge tells you through the phone push alone")
		return
	}
	n.log.Warn("desktop notifications cannot be shown here; set notify.ntfy.url to an ntfy topic to be told on your phone instead")
}

// push sends the request build makes, retrying failures that may pass
// (network errors, 5xx, 429) after each of n.delays.
func (n *Notifier) push(dest string, build func(context.Context) (*http.Request, error)) {
	for try := 1; ; try++ {
		retry, err := n.post(build)
		if err == nil {
			n.log.Debug("push delivered", "to", dest, "tries", try)
			return
		}
		if !retry || try > len(n.delays) {
			n.log.Error("push failed", "to", dest, "tries", try, "err", err)
			return
		}
		wait := n.delays[try-1]
		n.log.Warn("push failed, retrying", "to", dest, "try", try, "in", wait, "err", err)
		select {
		case <-time.After(wait):
		case <-n.ctx.Done():
			n.log.Error("push abandoned at shutdown", "to", dest, "tries", try, "err", err)
			return
		}
	}
}

// post makes one try; retry reports whether another try may succeed.
func (n *Notifier) post(build func(context.Context) (*http.Request, error)) (retry bool, err error) {
	ctx, cancel := context.WithTimeout(n.ctx, pushTimeout)
	defer cancel()
	req, err := build(ctx)
	if err != nil {
		return false, err
	}
	resp, err := n.client.Do(req)
	if err != nil {
		return n.ctx.Err() == nil, hideURL(err)
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
	if resp.StatusCode/100 == 2 {
		return false, nil
	}
	retry = resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests
	return retry, fmt.Errorf("HTTP %s: %s", resp.Status, strings.TrimSpace(string(snippet)))
}

// hideURL drops the URL from a request error: it is a secret (an ntfy
// topic is its own password) and stays out of the logs.
func hideURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}

// ntfyRequest publishes m to an ntfy topic: the body is the message, the
// rest travels in headers (https://docs.ntfy.sh/publish/).
func ntfyRequest(ctx context.Context, topic string, m Message) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, topic, strings.NewReader(m.Body))
	if err != nil {
		return nil, fmt.Errorf("ntfy request: %w", hideURL(err))
	}
	req.Header.Set("Content-Type", "text/plain; charset=utf-8")
	req.Header.Set("Title", headerText(m.Title))
	priority, tags := "default", []string{"bell"}
	if m.Urgent {
		priority, tags = "high", []string{"warning"}
	}
	if a := strings.ReplaceAll(m.Agent, ",", " "); a != "" {
		tags = append(tags, a)
	}
	req.Header.Set("Priority", priority)
	req.Header.Set("Tags", headerText(strings.Join(tags, ",")))
	if m.Link != "" {
		req.Header.Set("Click", headerText(m.Link))
	}
	return req, nil
}

// headerText makes s a valid header value: control characters become
// spaces, and non-ASCII text is RFC 2047 encoded (ntfy decodes it).
func headerText(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	return mime.BEncoding.Encode("utf-8", s)
}

// webhookBody is the JSON a webhook receives.
type webhookBody struct {
	Title   string `json:"title"`
	Body    string `json:"body"`
	Agent   string `json:"agent"`
	Project string `json:"project"`
	Session string `json:"session"`
	Urgent  bool   `json:"urgent"`
	Link    string `json:"link"`
	Time    string `json:"time"` // when Send was called, RFC 3339 UTC
}

// webhookRequest posts m as JSON.
func webhookRequest(ctx context.Context, hook string, m Message, sent time.Time) (*http.Request, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(webhookBody{Title: m.Title, Body: m.Body, Agent: m.Agent, Project: m.Project, Session: m.Session,
		Urgent: m.Urgent, Link: m.Link, Time: sent.Format(time.RFC3339Nano)})
	if err != nil {
		return nil, fmt.Errorf("webhook body: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hook, &buf)
	if err != nil {
		return nil, fmt.Errorf("webhook request: %w", hideURL(err))
	}
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}
