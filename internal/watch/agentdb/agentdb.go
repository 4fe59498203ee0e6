// Package agentdb reads an agent's own SQLite database (OpenCode's, Grok's)
// without touching it: SQLite reads the files Open opened, through a
// read-only file layer of their own (modernc.org/sqlite/vfs), never a name
// again. So what is read is what was checked (a regular file, opened
// without waiting: a FIFO swapped in is refused, never waited on), nothing
// is created beside the database (no -wal, no -shm: the WAL index is kept
// in memory, from one read to the next: WAL), and no lock is taken that the agent could wait on
// (docs/security.md#files).
package agentdb

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver
	"modernc.org/sqlite/vfs"

	"nudge/internal/watch/disk"
)

// timeout bounds one question of Count.
const timeout = 2 * time.Second

// mainName is the database's name in its file layer; SQLite asks for it
// and for mainName+walSuffix.
const (
	mainName  = "db"
	walSuffix = "-wal"
)

// DB is an agent's database open for reading. Close it once done: it holds
// the database file and its -wal open, and shows what they held then.
//
// Taking no lock, it cannot hold the agent off a checkpoint, which may
// write the database file or start the WAL over under a read: what was
// read is sound only while Changed is false.
type DB struct {
	*sql.DB
	layer *vfs.FS
	files []*os.File
	stamp stamp
}

// stamp is what a checkpoint changes: the database file's size and time,
// and the WAL's header (its salts change when it starts over).
type stamp struct {
	size    int64
	mtime   int64 // ns
	walHead [32]byte
}

func (d *DB) stampNow() (stamp, error) {
	var st stamp
	fi, err := d.files[0].Stat()
	if err != nil {
		return st, err
	}
	st.size, st.mtime = fi.Size(), fi.ModTime().UnixNano()
	if len(d.files) > 1 {
		if _, err := d.files[1].ReadAt(st.walHead[:], 0); err != nil && !errors.Is(err, io.EOF) {
			return st, err
		}
	}
	return st, nil
}

// Changed reports whether the agent may have checkpointed since Open: what
// was read may then mix two states, and is to be read again.
func (d *DB) Changed() bool {
	st, err := d.stampNow()
	return err != nil || st != d.stamp
}

// Open opens the database at path and its -wal, if any, for reading: each
// once, and only a regular file. A missing database is an error wrapping
// fs.ErrNotExist.
func Open(path string) (*DB, error) { return new(WAL).Open(path) }

// Open is the package's Open, reading of the -wal only the frames x has
// not read yet.
func (x *WAL) Open(path string) (*DB, error) {
	main, mainInfo, err := disk.Open(path)
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	d := &DB{files: []*os.File{main}}
	var log *os.File
	var logInfo os.FileInfo
	switch f, fi, err := disk.Open(path + walSuffix); {
	case err == nil:
		log, logInfo = f, fi
		d.files = append(d.files, log)
	case errors.Is(err, fs.ErrNotExist):
		// SQLite reads a database in WAL mode only with a WAL: an empty
		// one, as the agent's would be after a checkpoint.
	default:
		d.closeFiles()
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	if d.stamp, err = d.stampNow(); err != nil {
		d.closeFiles()
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	if !InWAL(main) {
		// SQLite reads no -wal beside a database in rollback mode.
		log, logInfo = nil, nil
	}
	if err := x.update(log, mainInfo, logInfo, d.stamp.walHead); err != nil {
		d.closeFiles()
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	// SQLite reads the log's frames from the overlay, and an empty log.
	files := layer{mainName: {main: main, log: log, info: mainInfo, pageSize: x.pageSize, pages: x.pages}, mainName + walSuffix: nil}
	name, l, err := vfs.New(files)
	if err != nil {
		d.closeFiles()
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	d.layer = l
	// Without shared memory SQLite reads a WAL only in exclusive locking
	// mode, which this layer takes from nobody.
	d.DB, err = sql.Open("sqlite", "file:"+mainName+"?vfs="+name+"&mode=ro&_pragma=locking_mode(EXCLUSIVE)&_pragma=query_only(1)")
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	d.SetMaxOpenConns(1) // one connection: the files' offsets are its alone
	return d, nil
}

// InWAL tells whether the database file main is in WAL mode, read from
// its header: SQLite's magic, and bytes 18 and 19 are 2. A file too short
// for a header, being created, is not.
func InWAL(main io.ReaderAt) bool {
	var head [100]byte
	_, err := main.ReadAt(head[:], 0)
	return err == nil && string(head[:16]) == "SQLite format 3\x00" && head[18] == 2 && head[19] == 2
}

// Close closes the database and its files.
func (d *DB) Close() error {
	var err error
	if d.DB != nil {
		err = d.DB.Close()
	}
	if d.layer != nil {
		err = errors.Join(err, d.layer.Close())
	}
	d.closeFiles()
	return err
}

func (d *DB) closeFiles() {
	for _, f := range d.files {
		f.Close()
	}
}

// Count runs query, which selects one number, with args on the database at
// path. A missing database is an error wrapping fs.ErrNotExist.
func Count(ctx context.Context, path, query string, args ...any) (int, error) {
	db, err := Open(path)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var n int
	if err := db.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

// layer is the file system SQLite reads: each name's overlay, nil for an
// empty file. Each open of a name reads from its own offset.
type layer map[string]*overlay

func (l layer) Open(name string) (fs.File, error) {
	o, ok := l[name]
	switch {
	case !ok:
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	case o == nil:
		return empty{bytes.NewReader(nil)}, nil
	}
	c := *o
	c.off = 0
	return &c, nil
}

// empty is a file with nothing in it.
type empty struct{ *bytes.Reader }

func (empty) Stat() (fs.FileInfo, error) { return emptyInfo{}, nil }
func (empty) Close() error               { return nil }

type emptyInfo struct{}

func (emptyInfo) Name() string       { return mainName + walSuffix }
func (emptyInfo) Size() int64        { return 0 }
func (emptyInfo) Mode() fs.FileMode  { return 0o400 }
func (emptyInfo) ModTime() time.Time { return time.Time{} }
func (emptyInfo) IsDir() bool        { return false }
func (emptyInfo) Sys() any           { return nil }

// The layer's files are read by seeking (vfs).
var (
	_ io.Seeker = (*overlay)(nil)
	_ io.Seeker = empty{}
)
