package daemon

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"nudge/internal/advice"
	"nudge/internal/classify"
	"nudge/internal/inbox"
	"nudge/internal/inject"
	"nudge/internal/notify"
	"nudge/internal/outage"
	"nudge/internal/retry"
	"nudge/internal/watch"
	"nudge/internal/watch/disk"
)

// A step is what one round of the loop changed: it is stored in one
// transaction and acted on only once stored. A step the store refuses is
// undone: the sessions it touched go back to where they were, the watcher
// reads its records again, and nothing of it is told or typed
// (docs/durability.md).
type step struct {
	batch   inbox.Batch
	touched map[retry.Key]bool
	// active are the sessions whose agent was seen at work without a
	// change worth storing (observe).
	active  map[retry.Key]bool
	injects []*session // whose continuation is batch.Attempts[i]
	notices []retry.Notify
	// before holds each touched session as it was before the step (nil:
	// created by it), to undo the step.
	before map[retry.Key]*sessionCopy
	seq    uint64          // the watcher batch the step stores (0: none)
	paths  map[string]bool // the files whose records it read
	told   map[string]bool // the files whose records gave a stored event
	idents map[string]bool // the event identities it stores
	ready  bool            // it stores the end of the first scan
	// redo takes the step again once the store works, for steps whose
	// cause is not read again from a file (a delivery's outcome).
	redo func(context.Context)
	// said are its log lines, written once it is stored (logged.go).
	said []func()
	// outages are the outages as they were before the step changed them
	// (nil: unchanged); outageNotices what it tells of them once stored.
	outages        *outage.Tracker
	outageNotices  []notify.Message
	outagesChanged bool
}

func newStep() *step {
	return &step{
		touched: map[retry.Key]bool{}, active: map[retry.Key]bool{}, before: map[retry.Key]*sessionCopy{},
		paths: map[string]bool{}, told: map[string]bool{}, idents: map[string]bool{},
	}
}

// sessionCopy is what a step may change of a session.
type sessionCopy struct {
	machine                       *retry.Session
	project, transcript, registry string
	process                       *classify.Process
	syncing, updated              time.Time
}

// keep remembers s as it is, once per step, before the step changes it.
func (st *step) keep(s *session) {
	if _, ok := st.before[s.key]; ok {
		return
	}
	c := &sessionCopy{machine: s.machine.Clone(), project: s.project, transcript: s.transcript, registry: s.registry,
		syncing: s.syncing, updated: s.updated}
	if s.process != nil {
		p := *s.process
		c.process = &p
	}
	st.before[s.key] = c
}

// stepSession returns the session of key for a step, creating it.
func (d *Daemon) stepSession(st *step, key retry.Key) *session {
	if s, ok := d.sessions[key]; ok {
		st.keep(s)
		return s
	}
	s := d.session(key)
	if _, ok := st.before[key]; !ok {
		st.before[key] = nil
	}
	return s
}

// act runs one call of s's machine within st.
func (d *Daemon) act(st *step, s *session, now time.Time, call func() []retry.Action) {
	st.keep(s)
	d.apply(s, call(), now, st)
}

// undo puts every session st touched back as it was and forgets the
// readers of the files it read: they start again where the watcher goes
// back to, as after a restart.
func (d *Daemon) undo(st *step) {
	for key, c := range st.before {
		s := d.sessions[key]
		delete(d.wakes, key)
		if c == nil {
			delete(d.sessions, key)
			continue
		}
		s.machine, s.project, s.transcript, s.registry = c.machine, c.project, c.transcript, c.registry
		s.process, s.syncing, s.updated = c.process, c.syncing, c.updated
		d.rearm(s)
	}
	for path := range st.paths {
		delete(d.files, path)
	}
	if st.outages != nil {
		d.outages = st.outages
	}
}

// rearm puts s's wakes back: its machine's, and the timeout of a re-read
// under way.
func (d *Daemon) rearm(s *session) {
	if at, ok := s.machine.NextWake(); ok {
		d.wakes.add(s.key, at)
	}
	if !s.syncing.IsZero() {
		d.wakes.add(s.key, s.syncing.Add(syncTimeout))
	}
}

// fileReader is what the daemon keeps of a file it reads: its reader, when
// it last gave a record, and midway: the reader began in the middle of the
// file and has read no start of a turn yet (retry.Session.Repeats).
type fileReader struct {
	agent    classify.Agent
	reader   classify.Reader
	lastRead time.Time
	midway   bool
}

// found is an event with the record it came from and its identity;
// midway: its reader began in the middle of the file and had read no start
// of a turn before it.
type found struct {
	ev     classify.Event
	path   string
	ident  []byte
	midway bool
}

// keptEvents bounds the events slice kept from one batch to the next: a
// busy row's batches fit in it.
const keptEvents = 512

// handleBatch classifies a batch of records, observes each event not
// stored before, and stores it all with the batch's positions. The batch's
// lines are released when it returns: what is kept of a line (an event's
// texts, a reader's state) is a copy.
func (d *Daemon) handleBatch(ctx context.Context, b watch.Batch) {
	defer b.Release()
	if b.Epoch < d.epoch {
		return // read before the latest Rewind: it comes again
	}
	now := d.now()
	if d.ready && len(b.Records) > 0 {
		d.working(now.Add(giveBackAfter))
	}
	st := newStep()
	st.seq, st.ready = b.Seq, b.Ready
	backlog := !d.ready
	events := d.found[:0]
	defer func() {
		clear(events)
		d.found = events[:0]
		if cap(events) > keptEvents {
			d.found = nil // a catch-up's: not held while idle
		}
	}()
	last := map[string]int{} // each path's last record, in b.Records
	if backlog {
		// The first scan's batches hold a checkpoint of every file it
		// found: thousands, sized at once rather than grown; checkpoints
		// give no events.
		last, st.paths = make(map[string]int, len(b.Records)), make(map[string]bool, len(b.Records))
	}
	for i, rec := range b.Records {
		st.paths[rec.Path] = true
		events = d.classifyRecord(events, rec, now)
		if rec.Gone {
			delete(last, rec.Path)
			st.batch.Forget = append(st.batch.Forget, rec.Path)
		} else {
			last[rec.Path] = i
		}
	}
	var idents [][]byte
	for _, f := range events {
		// An agent's activity is stored only when it changes a session's
		// state, and then without a look-up: storing it again is a no-op,
		// and observing it again changes nothing told.
		if f.ident != nil && f.ev.Kind != classify.AgentActivity {
			idents = append(idents, f.ident)
		}
	}
	known := map[string]bool{}
	if len(idents) > 0 {
		var err error
		if known, err = d.store.Known(ctx, idents); err != nil {
			d.failed(st, fmt.Errorf("look up stored events: %w", err))
			return
		}
	}
	for _, f := range events {
		d.observe(st, f, known, backlog, now)
	}
	for path, i := range last {
		rec := b.Records[i]
		if !rec.Checkpoint && !b.Ready && !st.told[path] && now.Sub(d.positioned[path]) < positionEvery {
			continue // only lines that store nothing since the last stored position
		}
		p := rec.Position()
		pos := inbox.Position{Path: p.Path, Dev: p.File.Dev, Inode: p.File.Inode, Fingerprint: p.File.Fingerprint, Offset: p.Offset, Mark: p.Mark}
		if rec.Checkpoint && backlog && pos.Fingerprint == "" && pos.Mark == "" {
			st.batch.Looked = append(st.batch.Looked, pos) // the old history of a first look
		} else {
			st.batch.Positions = append(st.batch.Positions, pos)
		}
	}
	if b.Ready {
		st.batch.Meta = append(st.batch.Meta, d.looks...)
	}
	if b.Synced != "" {
		for _, s := range d.sessions {
			if !s.syncing.IsZero() && s.transcript == b.Synced {
				st.keep(s)
				s.syncing = time.Time{}
				delete(d.wakes, s.key) // the re-read's timeout; Tick asks again for what it still needs
				d.tick(st, s, now)
			}
		}
	}
	if d.finish(ctx, st, now) && !b.Ready {
		for _, p := range st.batch.Positions {
			d.positioned[p.Path] = now
		}
		for _, p := range st.batch.Forget {
			delete(d.positioned, p)
		}
	}
}

// classifyRecord reads one record with its file's reader and appends each
// of its events, with its identity, to out.
func (d *Daemon) classifyRecord(out []found, rec watch.Record, now time.Time) []found {
	if rec.Checkpoint {
		return out
	}
	f := d.files[rec.Path]
	if f == nil {
		agent, known := classify.Lookup(rec.Agent)
		if !known {
			d.log.Warn("record from an unknown agent", "agent", rec.Agent, "path", rec.Path)
			return out
		}
		f = &fileReader{agent: agent, reader: agent.NewReader(rec.Path, disk.Files{}), midway: rec.Offset > 0}
		d.files[rec.Path] = f
	}
	events := f.reader.Read(rec.Line)
	for i := range events {
		f.agent.Attribute(&events[i])
	}
	d.logRecord(rec, events)
	d.noteShapes(rec, events)
	f.lastRead = now
	midway := f.midway
	if rec.Gone {
		delete(d.files, rec.Path)
	}
	var recordSum []byte     // the record's identity, hashed once it is needed
	var counts [16]kindCount // the few kinds one record holds, without a map per record
	seen := counts[:0]
	for _, ev := range events {
		j := slices.IndexFunc(seen, func(c kindCount) bool { return c.kind == ev.Kind })
		if j < 0 {
			j, seen = len(seen), append(seen, kindCount{kind: ev.Kind})
		}
		n := seen[j].n // its place among the record's events of its kind
		seen[j].n++
		if ev.ID == "" && recordSum == nil {
			recordSum = d.recordIdentity(rec)
		}
		out = append(out, found{ev: ev, path: rec.Path, ident: eventIdent(ev, n, recordSum), midway: midway})
		if ev.Kind == classify.TurnStarted || ev.Kind == classify.UserMessage {
			midway, f.midway = false, false
		}
	}
	return out
}

// kindCount is how many events of a kind a record has given so far.
type kindCount struct {
	kind classify.Kind
	n    int
}

// recordIdentity names a record by its bytes; a snapshot's removal by its
// path and file. The sum is valid until the next call.
func (d *Daemon) recordIdentity(rec watch.Record) []byte {
	if d.recordHash == nil {
		d.recordHash = sha256.New()
	}
	h := d.recordHash
	h.Reset()
	if rec.Gone {
		fmt.Fprintf(h, "gone\x00%s\x00%d\x00%d\x00%s", rec.Path, rec.File.Dev, rec.File.Inode, rec.File.Fingerprint)
	} else {
		h.Write([]byte("line\x00"))
		h.Write(rec.Line)
	}
	d.recordSum = h.Sum(d.recordSum[:0])
	return d.recordSum
}

// eventIdent is the identity an event is stored under: its agent, session
// and kind, its place among the events of that kind from its record, and
// what names it: the agent's own ID, else its record's bytes
// (docs/durability.md).
func eventIdent(ev classify.Event, ordinal int, record []byte) []byte {
	var buf [256]byte // what is hashed, without a heap allocation for the usual sizes
	b := buf[:0]
	for _, s := range []string{ev.Agent, ev.Session, string(ev.Kind)} {
		b = append(append(b, s...), 0)
	}
	b = binary.AppendUvarint(b, uint64(ordinal))
	if ev.ID != "" {
		b = append(append(b, "id\x00"...), ev.ID...)
	} else {
		b = append(b, record...)
	}
	sum := sha256.Sum256(b)
	return bytes.Clone(sum[:16])
}

// observe hands an event to its session: the daemon's memory of the
// session always learns from it, the machine and the store only when it
// was not stored before and does not repeat a turn's end.
func (d *Daemon) observe(st *step, f found, known map[string]bool, backlog bool, now time.Time) {
	ev := f.ev
	if ev.Session == "" {
		return
	}
	s := d.stepSession(st, retry.Key{Agent: ev.Agent, Session: ev.Session})
	if ev.Process != nil {
		p := *ev.Process
		s.process, s.registry = &p, f.path
	} else {
		s.transcript = f.path
	}
	if ev.Project != "" {
		s.project = ev.Project
	}
	s.liveTries = 0
	id := string(f.ident)
	if f.ident != nil && (known[id] || st.idents[id]) {
		return // the same record again: a restart, a file read again
	}
	if s.machine.Repeats(ev, f.midway) {
		d.log.Debug("a turn's end read again; not stored", "session", ev.Session, "path", f.path)
		return
	}
	if f.ident != nil {
		st.idents[id] = true
	}
	if ev.Kind == classify.AgentActivity && ev.Process == nil && !backlog {
		// An agent at work going on at work changes nothing worth a
		// row: only the activity that changes the session's state is
		// stored (docs/performance.md).
		was, _ := s.machine.State()
		acts := s.machine.Observe(ev, now, d.settings)
		if is, _ := s.machine.State(); is == was && len(acts) == 0 {
			s.updated = now
			st.active[s.key] = true
			return
		}
		row := eventRow(ev, now)
		row.Ident = f.ident
		st.batch.Events = append(st.batch.Events, row)
		st.told[f.path] = true
		d.apply(s, acts, now, st)
		return
	}
	row := eventRow(ev, now)
	row.Ident = f.ident
	st.batch.Events = append(st.batch.Events, row)
	st.told[f.path] = true
	if ev.Kind == classify.TurnFailed {
		st.say(d.deadTurnLine(s, ev))
	}
	if backlog {
		d.apply(s, s.machine.ObserveBacklog(ev, now, d.settings), now, st)
	} else {
		d.apply(s, s.machine.Observe(ev, now, d.settings), now, st)
		d.providerFailed(st, s, ev, now)
	}
}

func eventRow(ev classify.Event, now time.Time) inbox.EventRow {
	row := inbox.EventRow{
		Agent: ev.Agent, Session: ev.Session, Project: ev.Project,
		Time: ev.Time, DetectedAt: now, Kind: string(ev.Kind),
	}
	if f := ev.Failure; f != nil {
		row.Class, row.Code, row.Message, row.ResetAt = string(f.Class), f.Code, f.Message, f.ResetAt
		row.Detail, row.Provider = failureDetail(f), f.Provider
	}
	switch {
	case ev.Box != "":
		row.Detail = ev.Box
	case ev.Process != nil:
		row.Detail = fmt.Sprintf("pid %d %s", ev.Process.PID, ev.Process.Status)
	}
	return row
}

// apply turns a machine's actions into stored rows and pending effects.
func (d *Daemon) apply(s *session, acts []retry.Action, now time.Time, st *step) {
	st.touched[s.key] = true
	s.updated = now
	defer d.followOutage(st, s, acts, len(st.notices), now)
	for _, a := range acts {
		switch a := a.(type) {
		case retry.Inject:
			st.injects = append(st.injects, s)
			st.batch.Attempts = append(st.batch.Attempts, inbox.AttemptRow{
				Agent: s.key.Agent, Session: s.key.Session, Episode: a.Episode, Attempt: a.Attempt, Text: a.Text, Started: now,
			})
		case retry.Notify:
			st.notices = append(st.notices, a)
		case retry.Entry:
			st.batch.Entries = append(st.batch.Entries, inbox.EntryRow{
				Time: now, Agent: a.Key.Agent, Session: a.Key.Session, Project: firstNonEmpty(a.Project, s.project),
				What: a.What, ErrorText: a.Failure.Message, Class: string(a.Failure.Class), Code: a.Failure.Code, Attempts: a.Attempts,
				Provider: a.Failure.Provider, Model: a.Failure.Model, Outage: d.outageKey(s.key),
			})
			st.say(d.toldLine(s, a))
		case retry.Wake:
			d.wakes.add(s.key, a.At)
		case retry.SetState:
			// The machine's state is stored with the session row below.
		case retry.Decision:
			st.batch.Decisions = append(st.batch.Decisions, inbox.DecisionRow{Agent: s.key.Agent, Session: s.key.Session, Time: now, What: a.What})
			st.say(d.decisionLine(s, a))
		}
	}
}

// finish stores the step in one transaction, then acts on it: notices,
// continuations, the watcher's acknowledgement. It reports whether the
// step was stored; one that was not is undone (store.go).
func (d *Daemon) finish(ctx context.Context, st *step, now time.Time) bool {
	for key := range st.touched {
		s := d.sessions[key]
		state, until := s.machine.State()
		blob, err := json.Marshal(s.machine)
		if err != nil {
			d.log.Error("encode session state", "session", key.Session, "err", err)
			continue
		}
		st.batch.Sessions = append(st.batch.Sessions, inbox.SessionRow{
			Agent: key.Agent, Session: key.Session, Project: s.project, Path: s.transcript,
			State: string(state), Note: s.machine.Note(), Until: until, UpdatedAt: now, Machine: blob,
		})
	}
	if !st.batch.Empty() {
		if err := d.store.Commit(ctx, st.batch); err != nil {
			d.failed(st, err)
			return false
		}
		d.stored()
	}
	for _, say := range st.said {
		say()
	}
	if st.seq != 0 {
		d.source.Ack(st.seq)
	}
	for _, n := range st.notices {
		d.notify.Send(notify.Message{
			Title: n.Title, Body: n.Body, Agent: n.Key.Agent, Project: firstNonEmpty(n.Project, d.projectOf(n.Key)),
			Session: n.Key.Session, Urgent: true,
		})
	}
	for _, m := range st.outageNotices {
		d.notify.Send(m)
	}
	for i, s := range st.injects {
		a := st.batch.Attempts[i]
		if a.ID == 0 {
			d.log.Warn("attempt already made; not sending it again", "session", s.key.Session, "attempt", a.Attempt)
			d.delivered(ctx, s, a.Attempt, 0, inject.Delivery{}, advice.Why{Cause: advice.Repeated})
			continue
		}
		d.startInject(ctx, s, a)
	}
	for _, keys := range []map[retry.Key]bool{st.touched, st.active} {
		for key := range keys {
			d.scheduleLiveCheck(d.sessions[key])
		}
	}
	for path := range st.paths {
		d.scheduleSettle(path, now)
	}
	if st.ready && !d.ready {
		d.ready, d.looks = true, nil
		d.log.Info("first scan stored; following the session files")
		d.giveBackAt = now
		d.settleInterrupted(ctx)
	}
	if len(st.touched) > 0 || st.ready || st.outagesChanged {
		d.refreshView()
	} else if len(st.active) > 0 {
		d.viewChanged()
	}
	return true
}

func (d *Daemon) projectOf(k retry.Key) string {
	if s, ok := d.sessions[k]; ok {
		return s.project
	}
	return ""
}

// handleWakes re-reads the transcript of every session whose wake is due;
// its machine decides once the fresh records are in (docs/behaviour.md §3 step 2).
func (d *Daemon) handleWakes(ctx context.Context) {
	now := d.now()
	st := newStep()
	for _, key := range d.wakes.due(now) {
		s, ok := d.sessions[key]
		switch {
		case !ok:
		case s.syncing.IsZero() && s.transcript != "":
			s.syncing = now
			d.source.Sync(s.transcript)
			d.wakes.add(key, now.Add(syncTimeout))
		case s.syncing.IsZero():
			d.tick(st, s, now)
		case now.Sub(s.syncing) >= syncTimeout:
			d.log.Warn("transcript re-read did not answer; deciding on what is known", "session", s.key.Session)
			st.keep(s)
			s.syncing = time.Time{}
			d.tick(st, s, now)
		default:
			d.wakes.add(key, s.syncing.Add(syncTimeout))
		}
	}
	d.finish(ctx, st, now)
}

// failureDetail is what the timeline adds to a dead turn: what it failed
// against, the signals seen when they disagreed, and a reset time that
// could not be read.
func failureDetail(f *classify.Failure) string {
	var parts []string
	if on := f.On(); on != "" {
		parts = append(parts, on)
	}
	if n := f.SignalsNote(); n != "" {
		parts = append(parts, n)
	}
	if f.ResetUnread != "" {
		parts = append(parts, fmt.Sprintf("reset time unreadable: %q", f.ResetUnread))
	}
	return strings.Join(parts, "; ")
}
