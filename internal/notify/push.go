package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
)

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

// ntfy pushes messages to an ntfy topic; the topic's URL is its secret.
type ntfy struct{ topic string }

func (c ntfy) send(n *Notifier, m Message, _ time.Time) {
	n.push("ntfy", func(ctx context.Context) (*http.Request, error) { return ntfyRequest(ctx, c.topic, m) })
}

// webhook posts messages as JSON to a URL.
type webhook struct{ url string }

func (c webhook) send(n *Notifier, m Message, sent time.Time) {
	n.push("webhook", func(ctx context.Context) (*http.Request, error) { return webhookRequest(ctx, c.url, m, sent) })
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
