//go:build !darwin || cgo

package tray

import (
	"context"
	"log/slog"
	"reflect"
	"runtime"
	"strings"
	"time"

	"fyne.io/systray"

	"nudge/internal/status"
)

// Available reports whether this build can show the icon.
const Available = true

// Timings of the icon's loop.
const (
	// redrawGap debounces redraws to about one a second; a change of the
	// toggles is drawn at once.
	redrawGap = time.Second
	// reassertAfter sets icon, title and tooltip again after start: systray
	// v1.12.2 drops them when they land before its D-Bus export is done
	// (docs/platform.md §3, bug 1).
	reassertAfter = 300 * time.Millisecond
	// unreadWait bounds how long a redraw waits for the Inbox count.
	unreadWait = 2 * time.Second
)

// Run shows the icon until ctx ends; ErrUnavailable (wrapped, with the
// reason) when it cannot be shown here. Call it on the main goroutine: on
// macOS the menu bar lives on the main thread (docs/platform.md §2).
func Run(ctx context.Context, spec Spec) error {
	if err := preflight(); err != nil {
		return err
	}
	v := &menuBar{spec: spec, log: spec.logger(), clicks: make(chan string)}
	systray.Run(func() {
		// systray answers GetLayout only after this returns, so the first
		// menu is drawn here and everything else runs in the loop.
		// The Inbox is counted from the loop: the daemon may still be starting.
		v.show(draw(spec.Status(), -1, time.Now()))
		go v.loop(ctx)
	}, nil)
	return nil
}

// menuBar is the icon and its menu. Everything but the click loops runs
// on loop's goroutine.
type menuBar struct {
	spec   Spec
	log    *slog.Logger
	clicks chan string // a click's meaning, from the current click loop

	shown      picture
	items      []*systray.MenuItem // one per line of shown; nil for separators
	stopClicks context.CancelFunc  // ends the current generation's click loop
	iconSet    bool
	drawn      time.Time
	inbox      <-chan struct{} // closed at the Inbox's next change; nil when unknown
}

func (v *menuBar) loop(ctx context.Context) {
	defer systray.Quit()
	defer func() { v.stopClicks() }() // the last menu's click loop; show started one
	reassert := time.After(reassertAfter)
	changed := v.spec.Changed()
	var redraw, tick <-chan time.Time
	soon := func() {
		if redraw == nil {
			redraw = time.After(max(0, time.Until(v.drawn.Add(redrawGap))))
		}
	}
	tick = v.redraw(ctx, nil)
	for {
		select {
		case <-ctx.Done():
			return
		case <-reassert:
			v.setIcon()
		case <-changed:
			changed = v.spec.Changed()
			if set := v.spec.Status().Settings; set != nil && *set != v.shown.settings {
				// A toggle flipped elsewhere (the CLI, the Inbox window)
				// shows at once.
				redraw, tick = nil, v.redraw(ctx, nil)
				continue
			}
			soon()
		case <-v.inbox:
			v.inbox = nil
			soon()
		case <-tick:
			tick = nil
			soon()
		case <-redraw:
			redraw = nil
			tick = v.redraw(ctx, nil)
		case what := <-v.clicks:
			if set, ok := v.click(what); ok {
				tick = v.redraw(ctx, &set)
			}
		}
	}
}

// redraw shows the daemon's current picture, with settings instead of its
// settings when given (a click's result, before the picture catches up).
// It returns a channel that fires when the picture should be drawn again
// by the clock: a countdown, or an Inbox that could not be counted.
func (v *menuBar) redraw(ctx context.Context, settings *status.Settings) <-chan time.Time {
	p := v.picture(ctx, settings)
	v.show(p)
	if p.ticking || v.inbox == nil {
		return time.After(time.Second)
	}
	return nil
}

func (v *menuBar) picture(ctx context.Context, settings *status.Settings) picture {
	st := v.spec.Status()
	if settings != nil {
		st.Settings = settings
	}
	unread := -1
	if v.spec.Unread != nil {
		uctx, cancel := context.WithTimeout(ctx, unreadWait)
		n, ch, err := v.spec.Unread(uctx)
		cancel()
		if err != nil {
			v.log.Debug("tray: inbox not counted", "err", err)
		} else {
			unread, v.inbox = n, ch
		}
	}
	v.drawn = time.Now()
	return draw(st, unread, v.drawn)
}

// show makes the icon and menu match p: lines change in place while the
// menu keeps its shape, else the menu is rebuilt with a new click loop.
func (v *menuBar) show(p picture) {
	old := v.shown
	v.shown = p
	if !v.iconSet || p.look != old.look || p.tooltip != old.tooltip {
		v.setIcon()
	}
	if v.items != nil && sameShape(old.lines, p.lines) {
		for i, l := range p.lines {
			if it := v.items[i]; it != nil {
				update(it, old.lines[i], l)
			}
		}
		return
	}
	if v.stopClicks != nil {
		v.stopClicks()
	}
	systray.ResetMenu()
	v.items = make([]*systray.MenuItem, len(p.lines))
	clickable := map[*systray.MenuItem]string{}
	for i, l := range p.lines {
		switch {
		case l.separator:
			systray.AddSeparator()
			continue
		case l.checkbox:
			v.items[i] = systray.AddMenuItemCheckbox(menuText(l.label), "", l.checked)
		default:
			v.items[i] = systray.AddMenuItem(menuText(l.label), "")
		}
		if !l.enabled {
			v.items[i].Disable()
		}
		if l.click != "" {
			clickable[v.items[i]] = l.click
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	v.stopClicks = cancel
	go v.clickLoop(ctx, clickable)
}

// menuText is a label as the menu takes it. A DBusMenu host (Linux) takes
// an underscore for the mark of an access key and hides it, so that a
// folder "my_app" would show as "myapp": each is doubled, which it shows
// as one. The macOS menu shows labels as they are.
func menuText(label string) string {
	if runtime.GOOS == "darwin" {
		return label
	}
	return strings.ReplaceAll(label, "_", "__")
}

// update changes one menu item from what was to what is.
func update(it *systray.MenuItem, was, is line) {
	if is.label != was.label {
		it.SetTitle(menuText(is.label))
	}
	if is.checked != it.Checked() {
		if is.checked {
			it.Check()
		} else {
			it.Uncheck()
		}
	}
	if is.enabled == it.Disabled() {
		if is.enabled {
			it.Enable()
		} else {
			it.Disable()
		}
	}
}

// setIcon sets icon, title and tooltip from the shown picture.
func (v *menuBar) setIcon() {
	ic := icons()[v.shown.look]
	systray.SetTemplateIcon(ic.template, ic.colour)
	if runtime.GOOS != "darwin" { // on macOS a title is text beside the icon in the bar
		systray.SetTitle(title)
	}
	systray.SetTooltip(v.shown.tooltip)
	v.iconSet = true
}

// clickLoop is one menu generation's listener: it hands every click on
// items to the loop until ctx ends or the items are removed. systray drops
// a click nobody is receiving, so it never stops listening for long.
func (v *menuBar) clickLoop(ctx context.Context, items map[*systray.MenuItem]string) {
	cases := []reflect.SelectCase{{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())}}
	whats := []string{""}
	for it, what := range items {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(it.ClickedCh)})
		whats = append(whats, what)
	}
	for {
		i, _, ok := reflect.Select(cases)
		if i == 0 || !ok { // ctx ended, or ResetMenu closed the item's channel
			return
		}
		select {
		case v.clicks <- whats[i]:
		case <-ctx.Done():
			return
		}
	}
}

// click carries out a click; for a toggle it returns the settings now in
// force.
func (v *menuBar) click(what string) (status.Settings, bool) {
	var ch status.SettingsChange
	flip := func(on bool) *bool { on = !on; return &on }
	set := v.shown.settings // a toggle flips what the person sees
	switch what {
	case clickRetry:
		ch.RetryEnabled = flip(set.RetryEnabled)
	case clickContinue:
		ch.ContinueAfterUsageLimit = flip(set.ContinueAfterUsageLimit)
	case clickPause:
		ch.Paused = flip(set.Paused)
	case clickInbox:
		v.openInbox()
		return status.Settings{}, false
	case clickWaiting:
		if v.spec.ContinueAll != nil {
			go func() {
				if _, err := v.spec.ContinueAll(""); err != nil {
					v.log.Error("tray: continue the waiting sessions", "err", err)
				}
			}()
		}
		return status.Settings{}, false
	case clickQuit:
		v.log.Info("tray: quit from the menu")
		v.spec.Quit()
		return status.Settings{}, false
	default:
		return status.Settings{}, false
	}
	now, err := v.spec.Change(ch)
	if err != nil {
		v.log.Error("tray: change settings", "err", err)
		return status.Settings{}, false
	}
	return now, true
}

func (v *menuBar) openInbox() {
	if v.spec.OpenInbox == nil {
		v.log.Warn("tray: Inbox window not available in this build")
		return
	}
	go func() {
		if err := v.spec.OpenInbox(); err != nil {
			v.log.Warn("tray: open the Inbox window", "err", err)
		}
	}()
}
