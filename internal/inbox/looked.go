package inbox

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
)

// The positions a first look takes, at the end of each file of the old
// history and without reading it (no fingerprint, no mark), are stored one
// row per folder in the looked table (docs/performance.md §1): a first look
// at 20,000 files writes and a later start reads a few hundred rows, not
// 20,000. A position stored later for one of those files, a row of
// positions, takes precedence; forgetting a file removes both.

// lookedFile is one file's position in its folder's row.
type lookedFile struct {
	Dev, Inode uint64
	Offset     int64
}

// lookedVersion is the first byte of a folder's row.
const lookedVersion = 1

// encodeLooked is a folder's row: the version, the count of files, then
// each file's name, device, inode and offset, in name order.
func encodeLooked(files map[string]lookedFile) []byte {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	b := []byte{lookedVersion}
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, name := range names {
		f := files[name]
		b = binary.AppendUvarint(b, uint64(len(name)))
		b = append(b, name...)
		b = binary.AppendUvarint(b, f.Dev)
		b = binary.AppendUvarint(b, f.Inode)
		b = binary.AppendUvarint(b, uint64(f.Offset))
	}
	return b
}

// decodeLooked calls fn for each file of a folder's row, after telling how
// many there are (count). A row that does not read back whole is an error
// (and fn may have been called for the files before the fault).
func decodeLooked(b []byte, count func(int), fn func(name string, f lookedFile)) error {
	if len(b) == 0 || b[0] != lookedVersion {
		return errors.New("not a folder's positions (unknown version)")
	}
	b = b[1:]
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	n, ok := next()
	if !ok || n > uint64(len(b)) { // each file takes at least one byte
		return errors.New("bad count of files")
	}
	count(int(n))
	for i := range n {
		size, ok := next()
		if !ok || size == 0 || size > uint64(len(b)) {
			return fmt.Errorf("file %d of %d: bad name", i+1, n)
		}
		name := string(b[:size])
		b = b[size:]
		if name == "." || name == ".." || strings.ContainsRune(name, filepath.Separator) || strings.ContainsRune(name, 0) {
			return fmt.Errorf("file %d of %d: bad name %q", i+1, n, name)
		}
		var f lookedFile
		var offset uint64
		if f.Dev, ok = next(); !ok {
			return fmt.Errorf("file %d of %d: bad device", i+1, n)
		}
		if f.Inode, ok = next(); !ok {
			return fmt.Errorf("file %d of %d: bad inode", i+1, n)
		}
		if offset, ok = next(); !ok || offset > math.MaxInt64 {
			return fmt.Errorf("file %d of %d: bad offset", i+1, n)
		}
		f.Offset = int64(offset)
		fn(name, f)
	}
	if len(b) != 0 {
		return fmt.Errorf("%d bytes after the last file", len(b))
	}
	return nil
}

// splitLooked is the folder and name of a position that can be stored in
// its folder's row: one taken without reading, at a clean absolute path
// (so that folderPrefix(folder)+name is the path again).
func splitLooked(p Position) (folder, name string, ok bool) {
	i := strings.LastIndexByte(p.Path, filepath.Separator)
	if p.Fingerprint != "" || p.Mark != "" || p.Offset < 0 || i < 0 || i == len(p.Path)-1 ||
		!filepath.IsAbs(p.Path) || filepath.Clean(p.Path) != p.Path {
		return "", "", false
	}
	folder, name = p.Path[:i], p.Path[i+1:]
	if folder == "" {
		folder = p.Path[:i+1] // the root
	}
	return folder, name, true
}

// storeLooked stores positions in their folders' rows, each in place of
// any row of positions for the same file. One that cannot be (read, or
// at an unclean path) is stored as a row.
func storeLooked(ctx context.Context, tx writeTx, positions []Position) error {
	byFolder := map[string]map[string]lookedFile{}
	var rows []Position
	for _, p := range positions {
		folder, name, ok := splitLooked(p)
		if !ok {
			rows = append(rows, p)
			continue
		}
		if byFolder[folder] == nil {
			byFolder[folder] = map[string]lookedFile{}
		}
		byFolder[folder][name] = lookedFile{Dev: p.Dev, Inode: p.Inode, Offset: p.Offset}
	}
	if err := storePositions(ctx, tx, rows); err != nil {
		return err
	}
	for folder, added := range byFolder {
		files, err := loadLooked(ctx, tx, folder)
		if err != nil {
			return err
		}
		if len(files) == 0 {
			files = added
		} else {
			maps.Copy(files, added)
		}
		if err := forgetRows(ctx, tx, folder, files); err != nil {
			return err
		}
		if err := saveLooked(ctx, tx, folder, files); err != nil {
			return err
		}
	}
	return nil
}

// moveLooked moves the positions stored as rows before there were folder
// rows that can be in one (a first look's) into their folders' rows.
func moveLooked(ctx context.Context, tx writeTx) error {
	looked, err := queryPositions(ctx, tx, "WHERE fingerprint = '' AND mark = ''")
	if err != nil {
		return fmt.Errorf("positions to move: %w", err)
	}
	return storeLooked(ctx, tx, looked)
}

// forgetLooked removes paths from their folders' rows.
func forgetLooked(ctx context.Context, tx writeTx, paths []string) error {
	byFolder := map[string][]string{}
	for _, p := range paths {
		if folder, name, ok := splitLooked(Position{Path: p}); ok { // no other is in a folder's row
			byFolder[folder] = append(byFolder[folder], name)
		}
	}
	for folder, names := range byFolder {
		files, err := loadLooked(ctx, tx, folder)
		if err != nil {
			return err
		}
		before := len(files)
		for _, name := range names {
			delete(files, name)
		}
		if len(files) != before {
			if err := saveLooked(ctx, tx, folder, files); err != nil {
				return err
			}
		}
	}
	return nil
}

// loadLooked reads a folder's row (empty when there is none).
func loadLooked(ctx context.Context, tx writeTx, folder string) (map[string]lookedFile, error) {
	var b []byte
	err := tx.QueryRowContext(ctx, "SELECT files FROM looked WHERE folder = ?", folder).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return map[string]lookedFile{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("positions of %q: %w", folder, err)
	}
	var files map[string]lookedFile
	err = decodeLooked(b, func(n int) { files = make(map[string]lookedFile, n) }, func(name string, f lookedFile) { files[name] = f })
	if err != nil {
		return nil, fmt.Errorf("positions of %q: %w", folder, err)
	}
	return files, nil
}

// saveLooked replaces a folder's row (removes it when files is empty).
func saveLooked(ctx context.Context, tx writeTx, folder string, files map[string]lookedFile) error {
	var err error
	if len(files) == 0 {
		_, err = tx.ExecContext(ctx, "DELETE FROM looked WHERE folder = ?", folder)
	} else {
		_, err = tx.ExecContext(ctx, `INSERT INTO looked (folder, files) VALUES (?, ?)
			ON CONFLICT (folder) DO UPDATE SET files = excluded.files`, folder, encodeLooked(files))
	}
	if err != nil {
		return fmt.Errorf("store positions of %q: %w", folder, err)
	}
	return nil
}

// folderPrefix is folder with a separator at its end: what the paths in it
// start with.
func folderPrefix(folder string) string {
	if strings.HasSuffix(folder, string(filepath.Separator)) {
		return folder
	}
	return folder + string(filepath.Separator)
}

// forgetRows removes the rows of positions of the files in folder's row.
func forgetRows(ctx context.Context, tx writeTx, folder string, files map[string]lookedFile) error {
	prefix := folderPrefix(folder)
	// The paths that start with prefix sort from prefix up to, not
	// including, prefix with its last byte (the separator) one higher.
	above := prefix[:len(prefix)-1] + string(rune(prefix[len(prefix)-1]+1))
	rows, err := tx.QueryContext(ctx, "SELECT path FROM positions WHERE path >= ? AND path < ?", prefix, above)
	if err != nil {
		return fmt.Errorf("positions in %q: %w", folder, err)
	}
	var gone []string
	err = scanAll(rows, func(s scanner) error {
		var p string
		if err := s.Scan(&p); err != nil {
			return err
		}
		if name, ok := strings.CutPrefix(p, prefix); ok {
			if _, in := files[name]; in {
				gone = append(gone, p)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("positions in %q: %w", folder, err)
	}
	return each(ctx, tx, deletePosition, gone, func(p string) []any { return []any{p} })
}

// readLooked returns the positions of every folder's row but those of
// the paths in own, which take precedence.
func readLooked(ctx context.Context, q querier, own []Position) ([]Position, error) {
	rows, err := q.QueryContext(ctx, "SELECT folder, files FROM looked")
	if err != nil {
		return nil, err
	}
	type folderRow struct {
		folder string
		files  []byte
	}
	var folders []folderRow
	total := len(own)
	err = scanAll(rows, func(s scanner) error {
		var r folderRow
		if err := s.Scan(&r.folder, &r.files); err != nil {
			return err
		}
		if len(r.files) > 1 {
			n, _ := binary.Uvarint(r.files[1:])
			total += int(min(n, uint64(len(r.files))))
		}
		folders = append(folders, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	owned := make(map[string]bool, len(own))
	for _, p := range own {
		owned[p.Path] = true
	}
	out := make([]Position, 0, total)
	for _, r := range folders {
		prefix := folderPrefix(r.folder) // storeLooked made sure prefix+name is the clean path
		err := decodeLooked(r.files, func(int) {}, func(name string, f lookedFile) {
			if p := prefix + name; !owned[p] {
				out = append(out, Position{Path: p, Dev: f.Dev, Inode: f.Inode, Offset: f.Offset})
			}
		})
		if err != nil {
			return nil, fmt.Errorf("folder %q: %w", r.folder, err)
		}
	}
	return out, nil
}
