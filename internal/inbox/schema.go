package inbox

import (
	"context"
)

// migrations are the schema steps, applied in order; the database's
// PRAGMA user_version counts how many have run. Append, never edit: a
// released step is part of every database that ran it.
//
// Times are INTEGER unix milliseconds (UTC), NULL when unknown.
var migrations = []string{
	// 1: tail offsets, events, session state, Inbox entries.
	`CREATE TABLE meta (
		key   TEXT PRIMARY KEY,
		value TEXT NOT NULL
	);
	CREATE TABLE positions (
		path        TEXT PRIMARY KEY CHECK (path <> ''),
		dev         INTEGER NOT NULL,
		inode       INTEGER NOT NULL,
		fingerprint TEXT NOT NULL,
		offset      INTEGER NOT NULL CHECK (offset >= 0)
	);
	CREATE TABLE events (
		id          INTEGER PRIMARY KEY,
		agent       TEXT NOT NULL CHECK (agent <> ''),
		session     TEXT NOT NULL CHECK (session <> ''),
		project     TEXT NOT NULL,
		time        INTEGER,
		detected_at INTEGER,
		kind        TEXT NOT NULL CHECK (kind <> ''),
		class       TEXT NOT NULL,
		code        TEXT NOT NULL,
		message     TEXT NOT NULL,
		reset_at    INTEGER,
		detail      TEXT NOT NULL
	);
	CREATE INDEX events_session ON events (agent, session, time);
	CREATE TABLE sessions (
		agent      TEXT NOT NULL CHECK (agent <> ''),
		session    TEXT NOT NULL CHECK (session <> ''),
		project    TEXT NOT NULL,
		path       TEXT NOT NULL,
		state      TEXT NOT NULL,
		note       TEXT NOT NULL,
		until      INTEGER,
		updated_at INTEGER,
		machine    BLOB,
		PRIMARY KEY (agent, session)
	);
	CREATE TABLE entries (
		id         INTEGER PRIMARY KEY,
		time       INTEGER,
		agent      TEXT NOT NULL,
		project    TEXT NOT NULL,
		session    TEXT NOT NULL,
		what       TEXT NOT NULL,
		error_text TEXT NOT NULL,
		class      TEXT NOT NULL,
		code       TEXT NOT NULL,
		attempts   INTEGER NOT NULL,
		read       INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX entries_time ON entries (time);`,

	// 2: the decision log and the attempt ledger (at most once per attempt).
	`CREATE TABLE decisions (
		id      INTEGER PRIMARY KEY,
		agent   TEXT NOT NULL CHECK (agent <> ''),
		session TEXT NOT NULL CHECK (session <> ''),
		time    INTEGER,
		what    TEXT NOT NULL
	);
	CREATE INDEX decisions_session ON decisions (agent, session, time);
	CREATE TABLE attempts (
		id       INTEGER PRIMARY KEY,
		agent    TEXT NOT NULL CHECK (agent <> ''),
		session  TEXT NOT NULL CHECK (session <> ''),
		episode  TEXT NOT NULL,
		attempt  INTEGER NOT NULL CHECK (attempt > 0),
		text     TEXT NOT NULL,
		status   TEXT NOT NULL CHECK (status IN ('sending', 'sent', 'failed')),
		backend  TEXT NOT NULL,
		target   TEXT NOT NULL,
		reason   TEXT NOT NULL,
		started  INTEGER,
		finished INTEGER,
		UNIQUE (agent, session, episode, attempt)
	);
	CREATE INDEX attempts_status ON attempts (status);`,

	// 3: the bytes just before a position (docs/durability.md), each event's
	// identity (a record gives its events once, ever), and where an attempt
	// was being typed when typing began.
	`ALTER TABLE positions ADD COLUMN mark TEXT NOT NULL DEFAULT '';
	ALTER TABLE events ADD COLUMN ident BLOB;
	CREATE UNIQUE INDEX events_ident ON events (ident);
	ALTER TABLE attempts ADD COLUMN typing INTEGER;
	ALTER TABLE attempts ADD COLUMN place TEXT NOT NULL DEFAULT '';`,

	// 4: the positions a first look took, one row per folder (looked.go).
	`CREATE TABLE looked (
		folder TEXT PRIMARY KEY CHECK (folder <> ''),
		files  BLOB NOT NULL
	);`,

	// 5: the provider and model a dead turn failed against, on its event
	// and its Inbox entry.
	`ALTER TABLE events ADD COLUMN provider TEXT NOT NULL DEFAULT '';
	ALTER TABLE entries ADD COLUMN provider TEXT NOT NULL DEFAULT '';
	ALTER TABLE entries ADD COLUMN model TEXT NOT NULL DEFAULT '';`,

	// 6: provider outages (outages.go; docs/behaviour.md §9).
	`CREATE TABLE outages (
		provider TEXT NOT NULL CHECK (provider <> ''),
		start    INTEGER NOT NULL,
		end      INTEGER,
		gave_up  INTEGER NOT NULL DEFAULT 0,
		sessions INTEGER NOT NULL,
		outage   BLOB NOT NULL,
		PRIMARY KEY (provider, start)
	);
	CREATE INDEX events_provider_errors ON events (coalesce(time, detected_at)) WHERE class = 'provider_error';
	ALTER TABLE entries ADD COLUMN outage TEXT NOT NULL DEFAULT '';`,
}

// moveData are the steps in Go that follow a schema step, in its
// transaction, by the version that step reaches.
var moveData = map[int]func(context.Context, writeTx) error{
	4: moveLooked,
}
