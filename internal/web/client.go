package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"nudge/internal/inbox"
)

// Client changes the Inbox through the running daemon's page API, so that
// an open Inbox window shows the change at once.
type Client struct {
	address, secret string
	http            *http.Client
}

// NewClient returns a client for the page the daemon with data folder
// dataDir serves; ErrNotServing when it serves none.
func NewClient(dataDir string) (*Client, error) {
	address, err := Address(dataDir)
	if err != nil {
		return nil, err
	}
	secret, err := LoadSecret(dataDir)
	if err != nil {
		return nil, err
	}
	return &Client{address: strings.TrimSuffix(address, "/"), secret: secret, http: &http.Client{Timeout: 5 * time.Second}}, nil
}

// Ping checks that the page answers.
func (c *Client) Ping(ctx context.Context) error { return c.do(ctx, http.MethodGet, "/api/status") }

// MarkRead marks one entry read.
func (c *Client) MarkRead(ctx context.Context, id int64) error {
	return c.do(ctx, http.MethodPost, fmt.Sprintf("/api/entries/%d/read", id))
}

// MarkAllRead marks every entry read.
func (c *Client) MarkAllRead(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/api/entries/read-all")
}

// Clear removes every entry.
func (c *Client) Clear(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/api/entries/clear")
}

func (c *Client) do(ctx context.Context, method, path string) error {
	req, err := http.NewRequestWithContext(ctx, method, c.address+path, nil)
	if err != nil {
		return fmt.Errorf("inbox window %s: %w", path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.secret)
	resp, err := c.http.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return ErrNotServing // a stale address left by a daemon that crashed
		}
		return fmt.Errorf("inbox window %s: %w", path, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("inbox window %s: %w", path, inbox.ErrNotFound)
	}
	if resp.StatusCode >= 300 {
		return fmt.Errorf("inbox window %s: %s: %s", path, resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}
