package web

import (
	"fmt"
	"html"
	"os"
	"path/filepath"

	"nudge/internal/private"
)

// The Inbox window's files in the data folder, all user-only, all removed
// when the daemon stops.
const (
	secretFile   = "web.secret" // this run's secret, for other tools' bearer requests
	addressFile  = "web.url"    // the page's address
	launcherFile = "inbox.html" // the last sign-in link handed to a browser (OpenWindow)
)

// Publish records the running page for other tools: its address and this
// run's secret. The CLI never reads them; it asks the daemon.
func (s *Server) Publish(dataDir string) error {
	if err := private.WriteFile(filepath.Join(dataDir, secretFile), []byte(s.secret+"\n")); err != nil {
		return fmt.Errorf("inbox window: record its secret: %w", err)
	}
	if err := private.WriteFile(filepath.Join(dataDir, addressFile), []byte(s.url+"\n")); err != nil {
		return fmt.Errorf("inbox window: record its address: %w", err)
	}
	return nil
}

// Unpublish removes what Publish and OpenWindow wrote.
func Unpublish(dataDir string) {
	for _, name := range []string{secretFile, addressFile, launcherFile} {
		_ = os.Remove(filepath.Join(dataDir, name)) // what stays is replaced at the next start
	}
}

// writeLauncher writes the user-only page that moves a browser on to
// launchURL, so that the sign-in link never appears on a command line.
func writeLauncher(dataDir, launchURL string) (string, error) {
	path := filepath.Join(dataDir, launcherFile)
	page := html.EscapeString(launchURL)
	launcher := `<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer">` +
		`<meta http-equiv="refresh" content="0; url=` + page + `"><title>nudge Inbox</title><a href="` + page + `">Open the nudge Inbox</a>` + "\n"
	if err := private.WriteFile(path, []byte(launcher)); err != nil {
		return "", fmt.Errorf("inbox window: write its launcher: %w", err)
	}
	return path, nil
}
