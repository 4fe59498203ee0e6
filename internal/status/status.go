// Package status is the picture of the daemon that the CLI, the menu and the
// Inbox window show: the daemon itself, its settings and the watched sessions.
package status

import "time"

// Status is what `nudge status --json` prints (SPEC §8).
type Status struct {
	Daemon   *Daemon   `json:"daemon"` // nil when no daemon is running
	Settings *Settings `json:"settings,omitempty"`
	Sessions []Session `json:"sessions"`
}

// Daemon describes the running daemon.
type Daemon struct {
	PID          int       `json:"pid"`
	Version      string    `json:"version"`
	StartedAt    time.Time `json:"started_at"`
	Ready        bool      `json:"ready"` // the first scan of every root is done
	FilesWatched int       `json:"files_watched"`
	FilesOpen    int       `json:"files_open"`
}

// Settings are the toggles a person flips from the menu or the CLI.
type Settings struct {
	RetryEnabled            bool `json:"retry_enabled"`              // "Retry after API errors"
	ContinueAfterUsageLimit bool `json:"continue_after_usage_limit"` // "Continue after usage limit"
	Paused                  bool `json:"paused"`                     // watching, never acting
}

// Session is one watched session and its state.
type Session struct {
	Agent     string     `json:"agent"`
	Session   string     `json:"session"`
	Project   string     `json:"project"`
	State     string     `json:"state"`
	Note      string     `json:"note,omitempty"`
	RetryAt   *time.Time `json:"retry_at,omitempty"` // the pending continuation, if any
	ResetAt   *time.Time `json:"reset_at,omitempty"` // usage limit: when it resets, if the agent said
	UpdatedAt time.Time  `json:"updated_at"`
}

// SettingsChange is a request to flip toggles; nil fields stay as they are.
type SettingsChange struct {
	RetryEnabled            *bool `json:"retry_enabled,omitempty"`
	ContinueAfterUsageLimit *bool `json:"continue_after_usage_limit,omitempty"`
	Paused                  *bool `json:"paused,omitempty"`
}
