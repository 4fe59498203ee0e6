// Package macapp assembles nudge.app, the macOS application bundle: the
// nudge executable, an Info.plist that keeps it out of the Dock
// (LSUIElement) and names the bundle notifications come from, and its
// icon (docs/mac.md).
package macapp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"

	"nudge/internal/autostart"
	"nudge/internal/icon"
)

// MinimumSystem is the oldest macOS the bundle declares: the first with
// arm64 Macs and the UserNotifications framework nudge's notifications use.
const MinimumSystem = "11.0"

// Executable is the bundle's program name, in Contents/MacOS.
const Executable = "nudge"

// Write assembles the bundle at dir (e.g. dist/nudge.app) around the darwin
// executable exe, for version.
func Write(dir, exe, version string) error {
	macOS := filepath.Join(dir, "Contents", "MacOS")
	res := filepath.Join(dir, "Contents", "Resources")
	for _, d := range []string{macOS, res} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("macapp: %w", err)
		}
	}
	if err := copyFile(exe, filepath.Join(macOS, Executable), 0o755); err != nil {
		return err
	}
	files := map[string][]byte{
		filepath.Join(dir, "Contents", "Info.plist"): InfoPlist(version),
		filepath.Join(dir, "Contents", "PkgInfo"):    []byte("APPL????"),
		filepath.Join(res, "AppIcon.icns"):           AppIcon(),
	}
	for path, data := range files {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return fmt.Errorf("macapp: %w", err)
		}
	}
	return nil
}

// InfoPlist is the bundle's Info.plist.
func InfoPlist(version string) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
`)
	for _, kv := range [][2]string{
		{"CFBundleIdentifier", autostart.BundleID},
		{"CFBundleName", "nudge"},
		{"CFBundleDisplayName", "nudge"},
		{"CFBundleExecutable", Executable},
		{"CFBundleIconFile", "AppIcon"},
		{"CFBundlePackageType", "APPL"},
		{"CFBundleInfoDictionaryVersion", "6.0"},
		{"CFBundleShortVersionString", version},
		{"CFBundleVersion", version},
		{"LSMinimumSystemVersion", MinimumSystem},
		{"NSHumanReadableCopyright", "nudge keeps AI coding agents going after provider errors."},
	} {
		fmt.Fprintf(&b, "\t<key>%s</key><string>%s</string>\n", kv[0], html.EscapeString(kv[1]))
	}
	// No Dock icon and no menu of its own: nudge lives in the menu bar.
	b.WriteString("\t<key>LSUIElement</key><true/>\n")
	b.WriteString("\t<key>NSHighResolutionCapable</key><true/>\n")
	b.WriteString("</dict>\n</plist>\n")
	return b.Bytes()
}

// iconTypes are the icns entries and their pixel sizes: PNG payloads for
// each point size at 1x and 2x (Apple's icns types ic04…ic14).
var iconTypes = []struct {
	kind string
	size int
}{
	{"icp4", 16}, {"ic11", 32}, {"icp5", 32}, {"ic12", 64},
	{"ic07", 128}, {"ic13", 256}, {"ic08", 256}, {"ic14", 512},
	{"ic09", 512}, {"ic10", 1024},
}

// AppIcon is the application icon as an .icns file: the all-fine look
// of the menu-bar icon in colour.
func AppIcon() []byte {
	drawn := map[int][]byte{}
	var body bytes.Buffer
	for _, t := range iconTypes {
		png, ok := drawn[t.size]
		if !ok {
			png = icon.Colour(icon.AllFine, t.size)
			drawn[t.size] = png
		}
		body.WriteString(t.kind)
		_ = binary.Write(&body, binary.BigEndian, uint32(8+len(png)))
		body.Write(png)
	}
	var out bytes.Buffer
	out.WriteString("icns")
	_ = binary.Write(&out, binary.BigEndian, uint32(8+body.Len()))
	out.Write(body.Bytes())
	return out.Bytes()
}

func copyFile(from, to string, mode os.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return fmt.Errorf("macapp: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return fmt.Errorf("macapp: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("macapp: copy %s: %w", from, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("macapp: %w", err)
	}
	return nil
}
