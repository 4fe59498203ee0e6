// Package private keeps nudge's own folders and files out of other users'
// reach: a folder must belong to this user and be closed to writes by
// anyone else, and so must the folders it lies in (a sticky folder such as
// /tmp excepted), or another user could swap or redirect what nudge writes
// there. Files are never opened through a symbolic link. A file of settings
// nudge reads (ReadFile) is held to the same rules.
package private

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// Folder creates the folder at path for this user only when it is missing,
// then checks it (Check). what names it in errors ("data folder").
func Folder(what, path string) error {
	if err := os.MkdirAll(path, 0o700); err != nil {
		return fmt.Errorf("%s %s: %w", what, path, err)
	}
	return Check(what, path)
}

// Check makes sure that nobody but this user (and root) can change the
// folder at path or anything in it: the folder belongs to this user and
// is not writable by group or others; every folder above it belongs to
// this user or root and is not writable by others unless sticky; every
// entry in it belongs to this user and, unless a link, is not writable by
// group or others. The error names the folder and what to do.
func Check(what, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, path, err)
	}
	me := os.Getuid()
	if err := checkLinks(what, path, abs, me, folderHint); err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, path, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, path, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s %s is not a folder", what, path)
	}
	if shared(fi) {
		return fmt.Errorf("%s %s is a folder every user shares (mode %04o, as /tmp): another user could take or replace the names nudge keeps there; "+
			"choose a folder of your own (NUDGE_DATA_DIR, log.file)", what, path, fi.Mode().Perm())
	}
	if uid := owner(fi); uid != me {
		return fmt.Errorf("%s %s belongs to %s, not to you: another user could read or replace what nudge keeps there; "+
			"choose a folder of your own (NUDGE_DATA_DIR, log.file) or remove this one", what, path, userName(uid))
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s %s can be changed by other users (mode %04o); make it yours alone: chmod 700 %q",
			what, path, fi.Mode().Perm(), path)
	}
	if err := checkAllAbove(what, path, real, me, folderHint); err != nil {
		return err
	}
	entries, err := os.ReadDir(real)
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, path, err)
	}
	for _, e := range entries {
		if err := checkEntry(filepath.Join(path, e.Name()), me); err != nil {
			return fmt.Errorf("%s %s: %w", what, path, err)
		}
	}
	return nil
}

// shared reports whether fi is a folder every user may add entries to,
// sticky so that each keeps their own, as /tmp: it is nobody's alone, and
// no chmod should make it so.
func shared(fi fs.FileInfo) bool {
	return fi.Mode()&fs.ModeSticky != 0 && fi.Mode().Perm()&0o002 != 0
}

// folderHint and fileHint say what to do about a refused folder or file.
const (
	folderHint = "choose a folder of your own (NUDGE_DATA_DIR, log.file)"
	fileHint   = "use a file of your own in a folder of your own (--config, NUDGE_CONFIG)"
)

// checkLinks checks the symbolic links on the way to abs: each must
// belong to this user or root, or its owner could point it elsewhere.
func checkLinks(what, path, abs string, me int, hint string) error {
	for p := abs; p != filepath.Dir(p); p = filepath.Dir(p) {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		if uid := owner(fi); uid != me && uid != 0 {
			return fmt.Errorf("%s %s goes through the link %s, which belongs to %s: that user could point it elsewhere; %s",
				what, path, p, userName(uid), hint)
		}
	}
	return nil
}

// checkAllAbove checks every folder that real, the resolved path, lies in.
func checkAllAbove(what, path, real string, me int, hint string) error {
	for dir := filepath.Dir(real); ; dir = filepath.Dir(dir) {
		if err := checkAbove(what, path, dir, me, hint); err != nil {
			return err
		}
		if dir == filepath.Dir(dir) {
			return nil
		}
	}
}

// checkAbove checks a folder that path lies in.
func checkAbove(what, path, dir string, me int, hint string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, path, err)
	}
	uid := owner(fi)
	if uid != me && uid != 0 {
		return fmt.Errorf("%s %s lies in %s, which belongs to %s: that user could replace it; %s",
			what, path, dir, userName(uid), hint)
	}
	if fi.Mode().Perm()&0o002 != 0 && !shared(fi) {
		return fmt.Errorf("%s %s lies in %s, which every user can change (mode %04o): they could replace it; %s",
			what, path, dir, fi.Mode().Perm(), hint)
	}
	return nil
}

// checkEntry checks one entry of a private folder.
func checkEntry(path string, me int) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // removed meanwhile
	}
	if err != nil {
		return err
	}
	if uid := owner(fi); uid != me {
		return fmt.Errorf("%s belongs to %s, not to you: remove it", path, userName(uid))
	}
	if fi.Mode()&fs.ModeSymlink == 0 && fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s can be changed by other users (mode %04o): chmod go-w %q", path, fi.Mode().Perm(), path)
	}
	return nil
}

// OpenFile opens the file at path like os.OpenFile, but never through a
// symbolic link, never waiting (a FIFO is refused, with or without a
// reader), and only a regular file of this user; one that others could
// read or write is made user-only.
func OpenFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, perm)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is a symbolic link; nudge never writes through one in its folders: remove it", path)
	}
	if errors.Is(err, syscall.ENXIO) {
		return nil, fmt.Errorf("%s is not a regular file: remove it", path)
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	switch uid := owner(fi); {
	case !fi.Mode().IsRegular():
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file: remove it", path)
	case uid != os.Getuid():
		f.Close()
		return nil, fmt.Errorf("%s belongs to %s, not to you: remove it", path, userName(uid))
	case fi.Mode().Perm()&0o077 != 0:
		if err := f.Chmod(0o600); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// ReadFile reads a file of settings, at most max bytes, that nobody but
// this user (and root) can change: the file belongs to this user or root
// (a file a system manager installed) and is not writable by group or
// others, and the links and folders on the way to
// it pass Check's rules for the folders above a private folder. It is
// opened once, without waiting (a FIFO is refused, never waited on), and
// the opened file is what is checked. A missing file is an error wrapping
// fs.ErrNotExist.
func ReadFile(what, path string, max int64) ([]byte, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, path, err)
	}
	f, err := os.OpenFile(abs, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, path, err)
	}
	me := os.Getuid()
	switch uid := owner(fi); {
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s %s is not a regular file (%s); %s", what, path, fi.Mode().Type(), fileHint)
	case uid != me && uid != 0:
		return nil, fmt.Errorf("%s %s belongs to %s, not to you: that user could change what nudge does and types; %s",
			what, path, userName(uid), fileHint)
	case fi.Mode().Perm()&0o022 != 0:
		return nil, fmt.Errorf("%s %s can be changed by other users (mode %04o); make it yours alone: chmod go-w %q",
			what, path, fi.Mode().Perm(), path)
	}
	if err := checkLinks(what, path, abs, me, fileHint); err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, path, err)
	}
	if err := checkAllAbove(what, path, real, me, fileHint); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, path, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s %s is larger than %d bytes", what, path, max)
	}
	return data, nil
}

// WriteFile replaces the file at path with a new user-only file holding
// data, in one step: readers see the old file or the new one, and a link
// at path is replaced, never followed.
func WriteFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// owner is the user id that owns a file.
func owner(fi fs.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

// userName says who uid is: "user bob (1001)".
func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return fmt.Sprintf("user %s (%d)", u.Username, uid)
	}
	return fmt.Sprintf("user %d", uid)
}
