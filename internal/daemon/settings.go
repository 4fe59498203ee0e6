package daemon

import (
	"context"
	"fmt"
	"strconv"

	"nudge/internal/retry"
	"nudge/internal/status"
)

// loadSettings builds the machine's settings from the config, then applies
// the toggles a person flipped from the menu or CLI (stored, so they persist).
func (d *Daemon) loadSettings(ctx context.Context) error {
	set := retry.DefaultSettings()
	set.Enabled = d.cfg.Retry.Enabled
	set.Message = d.cfg.Retry.Message
	set.Delays = d.cfg.Retry.Delays
	set.BoxFirstCheck = d.cfg.Retry.BoxFirstCheck
	set.BoxMaxGap = d.cfg.Retry.BoxMaxGap
	set.BoxGiveUp = d.cfg.Retry.BoxGiveUp
	set.ContinueAfterUsageLimit = d.cfg.UsageLimit.Continue
	for key, field := range map[string]*bool{metaRetry: &set.Enabled, metaContinue: &set.ContinueAfterUsageLimit, metaPaused: &set.Paused} {
		v, ok, err := d.store.Meta(ctx, key)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			d.log.Warn("stored toggle unreadable; using the config", "key", key, "value", v)
			continue
		}
		*field = b
	}
	d.settings = set
	return nil
}

func settingsView(s retry.Settings) status.Settings {
	return status.Settings{RetryEnabled: s.Enabled, ContinueAfterUsageLimit: s.ContinueAfterUsageLimit, Paused: s.Paused}
}

// Change flips toggles; it takes effect at once (a pending retry is
// cancelled when retry is switched off) and persists.
func (d *Daemon) Change(ch status.SettingsChange) (status.Settings, error) {
	type result struct {
		s   status.Settings
		err error
	}
	done := make(chan result, 1)
	f := func() {
		ctx := context.Background()
		set := d.settings
		for key, p := range map[string]struct {
			in  *bool
			out *bool
		}{metaRetry: {ch.RetryEnabled, &set.Enabled}, metaContinue: {ch.ContinueAfterUsageLimit, &set.ContinueAfterUsageLimit}, metaPaused: {ch.Paused, &set.Paused}} {
			if p.in == nil {
				continue
			}
			if err := d.store.SetMeta(ctx, key, strconv.FormatBool(*p.in)); err != nil {
				done <- result{err: fmt.Errorf("store setting: %w", err)}
				return
			}
			*p.out = *p.in
		}
		changed := settingsView(set) != settingsView(d.settings)
		d.settings = set
		if changed {
			d.log.Info("settings changed", "retry", set.Enabled, "continue_after_usage_limit", set.ContinueAfterUsageLimit, "paused", set.Paused)
			d.reconfigure(ctx)
			d.refreshView() // the settings are in the view even when no session was touched
		}
		done <- result{s: settingsView(set)}
	}
	select {
	case d.calls <- f:
	case <-d.quit:
		return status.Settings{}, ErrNotRunning
	}
	select {
	case r := <-done:
		return r.s, r.err
	case <-d.quit:
		return status.Settings{}, ErrNotRunning
	}
}

// reconfigure applies the settings in force to every session; a store that
// refuses it gets it again once it works.
func (d *Daemon) reconfigure(ctx context.Context) {
	now := d.now()
	st := newStep()
	st.redo = d.reconfigure
	for _, s := range d.sessions {
		d.act(st, s, now, func() []retry.Action { return s.machine.Reconfigure(now, d.settings) })
	}
	d.finish(ctx, st, now)
}
