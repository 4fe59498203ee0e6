package notify

import "time"

// A channel is one way of telling the person: the desktop, an ntfy topic,
// a webhook. Send hands each message to every channel Config names, each
// send on its own goroutine.
type channel interface {
	// send delivers m, which Send took at sent, retrying as the channel
	// may, until n's context ends; it logs what fails.
	send(n *Notifier, m Message, sent time.Time)
}

// channelsOf makes the channels cfg names.
func channelsOf(cfg Config) []channel {
	var out []channel
	if cfg.Desktop {
		out = append(out, desktop{})
	}
	if cfg.NtfyURL != "" {
		out = append(out, ntfy{topic: cfg.NtfyURL})
	}
	if cfg.WebhookURL != "" {
		out = append(out, webhook{url: cfg.WebhookURL})
	}
	return out
}
