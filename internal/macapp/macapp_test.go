package macapp

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"nudge/internal/autostart"
	"nudge/internal/testenv"
)

func TestBundleLayoutAndInfoPlist(t *testing.T) {
	python := testenv.Need(t, "python3")
	dir := filepath.Join(t.TempDir(), "nudge.app")
	exe := filepath.Join(t.TempDir(), "nudge")
	if err := os.WriteFile(exe, []byte("\xcf\xfa\xed\xfe darwin executable"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, exe, "1.2.3 <beta>"); err != nil {
		t.Fatal(err)
	}
	// Parsed by Python's plistlib, the reader closest to macOS's own.
	cmd := exec.Command(python, "-c", "import plistlib,sys,json; print(json.dumps(plistlib.load(open(sys.argv[1],'rb'))))", filepath.Join(dir, "Contents", "Info.plist"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("plistlib: %v", err)
	}
	var info map[string]any
	if err := json.Unmarshal(out, &info); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]any{
		"CFBundleIdentifier":         autostart.BundleID,
		"CFBundlePackageType":        "APPL",
		"CFBundleShortVersionString": "1.2.3 <beta>",
		"LSUIElement":                true,
		"LSMinimumSystemVersion":     MinimumSystem,
	} {
		if info[key] != want {
			t.Errorf("%s = %v, want %v", key, info[key], want)
		}
	}
	prog := filepath.Join(dir, "Contents", "MacOS", info["CFBundleExecutable"].(string))
	if fi, err := os.Stat(prog); err != nil || fi.Mode().Perm()&0o111 == 0 {
		t.Errorf("executable %s: %v, %v", prog, fi, err)
	}
	if got, _ := os.ReadFile(prog); !bytes.HasPrefix(got, []byte("\xcf\xfa\xed\xfe")) {
		t.Errorf("the executable was not copied whole")
	}
	iconFile := filepath.Join(dir, "Contents", "Resources", info["CFBundleIconFile"].(string)+".icns")
	if _, err := os.Stat(iconFile); err != nil {
		t.Errorf("icon named by Info.plist: %v", err)
	}
}

// The .icns file is a list of typed PNG entries whose lengths add up, each
// of the pixel size its type stands for.
func TestAppIconIsAWellFormedICNS(t *testing.T) {
	data := AppIcon()
	if string(data[:4]) != "icns" || int(binary.BigEndian.Uint32(data[4:8])) != len(data) {
		t.Fatalf("header %q, length %d of %d", data[:4], binary.BigEndian.Uint32(data[4:8]), len(data))
	}
	want := map[string]int{}
	for _, it := range iconTypes {
		want[it.kind] = it.size
	}
	seen := 0
	for rest := data[8:]; len(rest) > 0; seen++ {
		if len(rest) < 8 {
			t.Fatalf("%d bytes left after %d entries", len(rest), seen)
		}
		kind, n := string(rest[:4]), int(binary.BigEndian.Uint32(rest[4:8]))
		if n < 8 || n > len(rest) {
			t.Fatalf("entry %s has length %d with %d bytes left", kind, n, len(rest))
		}
		img, err := png.Decode(bytes.NewReader(rest[8:n]))
		if err != nil {
			t.Fatalf("entry %s: %v", kind, err)
		}
		if size, ok := want[kind]; !ok || img.Bounds().Dx() != size || img.Bounds().Dy() != size {
			t.Errorf("entry %s is %v, want %d px", kind, img.Bounds(), want[kind])
		}
		rest = rest[n:]
	}
	if seen != len(iconTypes) {
		t.Errorf("%d entries, want %d", seen, len(iconTypes))
	}
}

func TestInfoPlistEscapesTheVersion(t *testing.T) {
	if p := string(InfoPlist(`1&2<3>`)); !strings.Contains(p, "<string>1&amp;2&lt;3&gt;</string>") {
		t.Errorf("version not escaped:\n%s", p)
	}
}
