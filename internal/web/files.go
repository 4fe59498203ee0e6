package web

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotServing means no running daemon serves the Inbox window.
var ErrNotServing = errors.New("the Inbox window is not being served (is nudge running?)")

// The Inbox window's files in the data folder, all user-only.
const (
	secretFile   = "web.secret" // the per-install secret, created once
	addressFile  = "web.url"    // the running page's address, while it runs
	launcherFile = "inbox.html" // opens the page with the secret, for `nudge inbox --open`
)

// LoadSecret returns the per-install secret from dataDir, creating it (32
// random bytes, hex, user-only) the first time.
func LoadSecret(dataDir string) (string, error) {
	path := filepath.Join(dataDir, secretFile)
	for range 2 {
		b, err := os.ReadFile(path)
		if err == nil {
			if err := os.Chmod(path, 0o600); err != nil {
				return "", fmt.Errorf("inbox window secret %s: %w", path, err)
			}
			s := strings.TrimSpace(string(b))
			if len(s) != 64 {
				return "", fmt.Errorf("inbox window secret %s is damaged; delete it and restart nudge", path)
			}
			return s, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("inbox window secret %s: %w", path, err)
		}
		raw := make([]byte, 32)
		_, _ = rand.Read(raw) // never fails (crypto/rand)
		if err := create(path, hex.EncodeToString(raw)+"\n"); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("inbox window secret %s: %w", path, err)
		}
		// Created, or another process won the race: read what is there.
	}
	return "", fmt.Errorf("inbox window secret %s: could not be created", path)
}

// create writes a new user-only file; it fails if path exists.
func create(path, content string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}

// replace writes a user-only file in place of whatever was at path.
func replace(path, content string) error {
	tmp := path + ".tmp"
	_ = os.Remove(tmp)
	if err := create(tmp, content); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Publish records where the page runs, for the CLI and the menu: its
// address, and a launcher page that opens it with the secret.
func Publish(dataDir, address, secret string) error {
	if err := replace(filepath.Join(dataDir, addressFile), address+"\n"); err != nil {
		return fmt.Errorf("inbox window: record its address: %w", err)
	}
	page := html.EscapeString(withToken(address, secret))
	launcher := `<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer">` +
		`<meta http-equiv="refresh" content="0; url=` + page + `"><title>nudge Inbox</title><a href="` + page + `">Open the nudge Inbox</a>` + "\n"
	if err := replace(filepath.Join(dataDir, launcherFile), launcher); err != nil {
		return fmt.Errorf("inbox window: write its launcher: %w", err)
	}
	return nil
}

// Unpublish removes what Publish wrote.
func Unpublish(dataDir string) {
	_ = os.Remove(filepath.Join(dataDir, addressFile))
	_ = os.Remove(filepath.Join(dataDir, launcherFile))
}

// Address is the running page's address without the secret.
func Address(dataDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, addressFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", ErrNotServing
	}
	if err != nil {
		return "", fmt.Errorf("inbox window address: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// PageURL is the running page's address with the secret: opening it in a
// browser signs the browser in.
func PageURL(dataDir string) (string, error) {
	address, err := Address(dataDir)
	if err != nil {
		return "", err
	}
	secret, err := LoadSecret(dataDir)
	if err != nil {
		return "", err
	}
	return withToken(address, secret), nil
}

// Launcher is the user-only file that opens the page with the secret, so
// the secret never appears on a command line.
func Launcher(dataDir string) string { return filepath.Join(dataDir, launcherFile) }

func withToken(address, secret string) string { return address + "?token=" + secret }
