package wrap

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"nudge/internal/usersock"
)

// typed records what the socket asks to type.
type typed struct{ text string }

func (k *typed) info() Info { return Info{ChildPID: 7} }

func (k *typed) typeText(_ int, text string, quietFor, _ time.Duration) error {
	if quietFor > time.Hour {
		return ErrInUse
	}
	k.text = text
	return nil
}

// A text JSON spells at six bytes a character still fits a request, up to
// maxText.
func TestTypeTakesTheLongestEscapedText(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.sock")
	log := slog.New(slog.DiscardHandler)
	ln, err := usersock.Listen(path, log)
	if err != nil {
		t.Fatal(err)
	}
	k := &typed{}
	stop := serve(ln, path, k, log)
	defer stop()

	text := strings.Repeat("<\x1b", maxText/2)
	if err := NewClient(path).Type(context.Background(), 7, text, 0, 0); err != nil {
		t.Fatalf("Type(%d escaped bytes): %v", len(text), err)
	}
	if k.text != text {
		t.Errorf("typed %d bytes, want the %d sent", len(k.text), len(text))
	}
	if err := NewClient(path).Type(context.Background(), 7, text+"x", 0, 0); err == nil {
		t.Error("Type(maxText+1 bytes) was taken")
	}
	if err := NewClient(path).Type(context.Background(), 7, "x", 2*time.Hour, 0); !errors.Is(err, ErrInUse) {
		t.Errorf("a refusal for a person at the keyboard came back as %v, want ErrInUse", err)
	}
}

// A wrapper starting removes the sockets of wrappers that no longer run,
// never one another wrapper is making (usersock.Listen's name before the
// rename), and only wrappers' sockets are listed.
func TestSocketsInTheMakingAreLeftAlone(t *testing.T) {
	data := t.TempDir()
	if err := os.Chmod(data, 0o700); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	if err := prepareDir(data, log); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(Dir(data), strconv.Itoa(os.Getpid())+".sock")
	gone := filepath.Join(Dir(data), "4194304.sock") // above any pid
	making := filepath.Join(Dir(data), "~194304.sock")
	for _, p := range []string{live, gone, making} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := prepareDir(data, log); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{live: true, gone: false, making: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: there %v after a start, want %v", filepath.Base(p), err == nil, want)
		}
	}
	socks, err := Sockets(data)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(socks, []string{live}) {
		t.Errorf("sockets %q, want only the live wrapper's", socks)
	}
}
