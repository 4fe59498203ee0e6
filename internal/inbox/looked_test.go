package inbox

import (
	"bytes"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"
)

func count(t *testing.T, db *DB, table string) int {
	t.Helper()
	var n int
	if err := db.r.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// positionsOf is db's positions by path; each path must come once.
func positionsOf(t *testing.T, db *DB) map[string]Position {
	t.Helper()
	got, err := db.Positions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Position{}
	for _, p := range got {
		if _, twice := out[p.Path]; twice {
			t.Fatalf("%s given twice", p.Path)
		}
		out[p.Path] = p
	}
	return out
}

// A first look's positions go into one row per folder and come back as
// they went in; a later position of one file, a forgotten file and a
// first look over files with rows each take the place of what was there.
func TestLookedPositions(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "nudge.db"))
	want := map[string]Position{}
	var looked []Position
	for f := range 3 {
		for i := range 40 {
			p := Position{Path: fmt.Sprintf("/h/.claude/projects/-p%d/s%02d.jsonl", f, i), Dev: 2049, Inode: uint64(f*100 + i), Offset: int64(i * 1000)}
			looked = append(looked, p)
			want[p.Path] = p
		}
	}
	odd := Position{Path: "/h/.claude/projects/-p0/../-p1/x.jsonl", Dev: 1, Inode: 2, Offset: 3} // not clean: a row
	read := Position{Path: "/h/.claude/projects/-p2/r.jsonl", Dev: 1, Inode: 5, Fingerprint: "9:ab", Offset: 9, Mark: "9:ab"}
	top := Position{Path: "/top.jsonl", Dev: 1, Inode: 4, Offset: 5} // in the root folder
	looked = append(looked, odd, read, top)
	want[odd.Path], want[read.Path], want[top.Path] = odd, read, top
	if err := db.Commit(ctx, Batch{Looked: looked}); err != nil {
		t.Fatal(err)
	}
	if got := positionsOf(t, db); !maps.Equal(got, want) {
		t.Fatalf("positions read back differ: %d of %d", len(got), len(want))
	}
	if n, rows := count(t, db, "looked"), count(t, db, "positions"); n != 4 || rows != 2 {
		t.Fatalf("%d folder rows and %d position rows, want 4 and the 2 that cannot be in one", n, rows)
	}

	// The session written since: its row takes precedence.
	later := Position{Path: "/h/.claude/projects/-p1/s07.jsonl", Dev: 2049, Inode: 107, Fingerprint: "256:cd", Offset: 9000, Mark: "256:ef"}
	want[later.Path] = later
	if err := db.Commit(ctx, Batch{Positions: []Position{later}}); err != nil {
		t.Fatal(err)
	}
	if got := positionsOf(t, db); got[later.Path] != later {
		t.Fatalf("later position read back as %+v", got[later.Path])
	}

	// Forgotten files leave both; a folder left empty leaves no row.
	var gone []string
	for i := range 40 {
		gone = append(gone, fmt.Sprintf("/h/.claude/projects/-p0/s%02d.jsonl", i))
	}
	gone = append(gone, later.Path, "/h/.claude/projects/-p9/never.jsonl")
	if err := db.Commit(ctx, Batch{Forget: gone}); err != nil {
		t.Fatal(err)
	}
	for _, p := range gone {
		delete(want, p)
	}
	if got := positionsOf(t, db); !maps.Equal(got, want) {
		t.Fatalf("after forgetting: %d positions, want %d", len(got), len(want))
	}
	if n := count(t, db, "looked"); n != 3 {
		t.Fatalf("%d folder rows, want 3", n)
	}

	// A first look over a file with a row of its own replaces the row.
	again := Position{Path: read.Path, Dev: 1, Inode: 6, Offset: 99}
	want[again.Path] = again
	if err := db.Commit(ctx, Batch{Looked: []Position{again}}); err != nil {
		t.Fatal(err)
	}
	if got := positionsOf(t, db); !maps.Equal(got, want) {
		t.Fatalf("first look again read back as %+v, want %+v", got[again.Path], again)
	}
	if rows := count(t, db, "positions"); rows != 1 {
		t.Fatalf("%d position rows, want only the unclean path's", rows)
	}
}

// A folder's row that does not read back is a clear error that says what
// to do, not positions made up or dropped.
func TestLookedDamaged(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "nudge.db"))
	if err := db.Commit(ctx, Batch{Looked: []Position{{Path: "/h/a/b.jsonl", Dev: 1, Inode: 2, Offset: 3}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.ExecContext(ctx, "UPDATE looked SET files = substr(files, 1, length(files) - 1)"); err != nil {
		t.Fatal(err)
	}
	_, err := db.Positions(ctx)
	if err == nil || !strings.Contains(err.Error(), `"/h/a"`) || !strings.Contains(err.Error(), "move it aside") {
		t.Fatalf("positions of a damaged row: %v", err)
	}
}

// FuzzLooked reads arbitrary bytes as a folder's row: an error or files
// that encode and read back the same, never a panic.
func FuzzLooked(f *testing.F) {
	f.Add(encodeLooked(map[string]lookedFile{"a.jsonl": {1, 2, 3}, "b.jsonl": {1 << 40, 5, 1 << 62}}))
	f.Add(encodeLooked(map[string]lookedFile{}))
	f.Add([]byte{lookedVersion, 1, 1, '/', 0, 0, 0})
	f.Add([]byte{lookedVersion, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		read := func(b []byte) (map[string]lookedFile, error) {
			files := map[string]lookedFile{}
			announced := -1
			err := decodeLooked(b, func(n int) { announced = n }, func(name string, f lookedFile) {
				if name == "" || strings.ContainsRune(name, filepath.Separator) || f.Offset < 0 {
					t.Fatalf("file %q %+v read from %x", name, f, b)
				}
				files[name] = f
			})
			if err == nil && announced < len(files) {
				t.Fatalf("%d files announced, %d read", announced, len(files))
			}
			return files, err
		}
		files, err := read(b)
		if err != nil {
			return
		}
		again, err := read(encodeLooked(files))
		if err != nil || !maps.Equal(again, files) {
			t.Fatalf("%x: read %v, encoded and read back %v, %v", b, files, again, err)
		}
		if re := encodeLooked(again); !bytes.Equal(re, encodeLooked(files)) {
			t.Fatalf("encoding not stable")
		}
	})
}

// FuzzSplitLooked checks that a path stored in a folder's row comes back
// whole, in the folder filepath.Dir names.
func FuzzSplitLooked(f *testing.F) {
	for _, p := range []string{"/a/b.jsonl", "/top", "/", "a/b", "/a//b", "/a/./b", "/a/../b", "/a/b/", "//x"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		folder, name, ok := splitLooked(Position{Path: p})
		if !ok {
			return
		}
		if folderPrefix(folder)+name != p || folder != filepath.Dir(p) || name != filepath.Base(p) {
			t.Fatalf("%q split into %q and %q", p, folder, name)
		}
	})
}

// A database of a first look stored one row per file moves those rows into
// folder rows when it is opened by this version; the others stay rows.
func TestMigrateMovesLooked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nudge.db")
	old := openAt(t, path, 3)
	want := map[string]Position{}
	add := func(p Position) {
		want[p.Path] = p
		if _, err := old.Exec("INSERT INTO positions (path, dev, inode, fingerprint, offset, mark) VALUES (?, ?, ?, ?, ?, ?)",
			p.Path, p.Dev, p.Inode, p.Fingerprint, p.Offset, p.Mark); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 50 {
		add(Position{Path: fmt.Sprintf("/h/p%d/s%d.jsonl", i%3, i), Dev: 7, Inode: uint64(i), Offset: int64(i)})
	}
	add(Position{Path: "/h/p0/read.jsonl", Dev: 7, Inode: 99, Fingerprint: "256:aa", Offset: 300, Mark: "12:bb"})
	add(Position{Path: "/h/p0/../odd.jsonl", Dev: 7, Inode: 98, Offset: 3})
	old.Close()

	db := open(t, path)
	if got := positionsOf(t, db); !maps.Equal(got, want) {
		t.Fatalf("positions after the move differ: %d of %d", len(got), len(want))
	}
	if n, rows := count(t, db, "looked"), count(t, db, "positions"); n != 3 || rows != 2 {
		t.Fatalf("%d folder rows and %d position rows after the move, want 3 and 2", n, rows)
	}
}
