package wrap

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"nudge/internal/usersock"
)

// typed records what the socket asks to type.
type typed struct{ text string }

func (k *typed) info() Info { return Info{ChildPID: 7} }

func (k *typed) typeText(_ int, text string) error {
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
	if err := NewClient(path).Type(context.Background(), 7, text); err != nil {
		t.Fatalf("Type(%d escaped bytes): %v", len(text), err)
	}
	if k.text != text {
		t.Errorf("typed %d bytes, want the %d sent", len(k.text), len(text))
	}
	if err := NewClient(path).Type(context.Background(), 7, text+"x"); err == nil {
		t.Error("Type(maxText+1 bytes) was taken")
	}
}
