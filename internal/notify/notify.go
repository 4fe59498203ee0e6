// Package notify tells the person: a desktop notification and, if
// configured, a phone push (an ntfy topic or a webhook), never blocking
// the caller. Each of these is a channel (channel.go).
package notify

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
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
	cfg      Config
	log      *slog.Logger
	client   *http.Client
	delays   []time.Duration
	channels []channel

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
	n.channels = channelsOf(cfg)
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
	for _, ch := range n.channels {
		n.spawn(func() { ch.send(n, m, sent) })
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
