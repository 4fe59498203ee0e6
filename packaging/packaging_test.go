// Package packaging holds what builds and installs nudge outside Go: the
// Homebrew formula and the release configuration (docs/install.md). Its
// tests check that they parse and agree with the code they name.
package packaging

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"nudge/internal/autostart"
	"nudge/internal/testenv"
)

const (
	formula  = "homebrew/nudge.rb"
	releaser = "../.goreleaser.yaml"
	// versionSymbol is the variable a release build sets with -X.
	versionSymbol = "nudge/internal/version.Release"
)

// formulaStub loads the formula with the few parts of Homebrew's DSL it
// uses, runs its install and prints what it would run, one call a line:
// `system ARGS` and `service ARGS`.
const formulaStub = `
require "pathname"
module OS
  def self.mac?; ENV.fetch("STUB_MAC") == "1"; end
end
class Formula
  def self.method_missing(*); end
  def self.service(&blk); @service = blk; end
  def self.test(&blk); end
  def self.stub_service; @service; end
  def bin; Pathname("/prefix/bin"); end
  def prefix; Pathname("/prefix"); end
  def opt_bin; Pathname("/opt/bin"); end
  def var; Pathname("/var"); end
  def version; "HEAD-abc"; end
  def std_go_args(ldflags:); ["-o", bin/"nudge", "-ldflags=#{ldflags}"]; end
  def system(*args); puts "system " + args.map(&:to_s).join(" "); end
  def run(args); puts "service " + args.map(&:to_s).join(" "); end
  def method_missing(*); end
end
load ARGV[0]
f = Nudge.new
f.install
f.instance_eval(&Nudge.stub_service)
`

func runFormula(t *testing.T, ruby string, mac bool) string {
	t.Helper()
	cmd := exec.Command(ruby, "-e", formulaStub, formula)
	cmd.Env = append(os.Environ(), "STUB_MAC=0")
	if mac {
		cmd.Env = append(os.Environ(), "STUB_MAC=1")
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("formula (mac %v): %v\n%s", mac, err, out)
	}
	return string(out)
}

func TestHomebrewFormula(t *testing.T) {
	ruby := testenv.Need(t, "ruby")
	if out, err := exec.Command(ruby, "-c", formula).CombinedOutput(); err != nil || !strings.Contains(string(out), "Syntax OK") {
		t.Fatalf("ruby -c %s: %v\n%s", formula, err, out)
	}
	mac := runFormula(t, ruby, true)
	for _, want := range []string{
		"system go build -o /prefix/bin/nudge -ldflags=-s -w -X " + versionSymbol + "=HEAD-abc ./cmd/nudge\n",
		"system go run ./internal/macapp/makeapp -exe /prefix/bin/nudge -out /prefix/nudge.app -version HEAD-abc\n",
		"service /opt/bin/nudge run --" + autostart.ServiceFlag + "\n",
	} {
		if !strings.Contains(mac, want) {
			t.Errorf("on macOS the formula runs:\n%s\nwant a line %q", mac, want)
		}
	}
	if linux := runFormula(t, ruby, false); strings.Contains(linux, "makeapp") || !strings.Contains(linux, "./cmd/nudge") {
		t.Errorf("on Linux the formula runs:\n%s\nwant the build and no app", linux)
	}
	for _, pkg := range []string{"../cmd/nudge", "../internal/macapp/makeapp"} {
		if _, err := os.Stat(filepath.Join(pkg, "main.go")); err != nil {
			t.Errorf("the formula builds %s: %v", pkg, err)
		}
	}
}

// The symbol release builds set is the one `nudge --version` prints.
func TestReleaseVersionSymbol(t *testing.T) {
	for _, f := range []string{formula, releaser} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`-X ([^=\s]+)=`).FindAllStringSubmatch(string(data), -1) {
			if m[1] != versionSymbol {
				t.Errorf("%s sets %s, want %s", f, m[1], versionSymbol)
			}
		}
	}
	bin := filepath.Join(t.TempDir(), "nudge")
	build := exec.Command("go", "build", "-ldflags", "-X "+versionSymbol+"=9.8.7", "-o", bin, "../cmd/nudge")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || strings.TrimSpace(string(out)) != "nudge 9.8.7" {
		t.Errorf("nudge --version = %q, %v; want nudge 9.8.7", out, err)
	}
}

func TestReleaseConfigValidates(t *testing.T) {
	gr := testenv.Need(t, "goreleaser")
	cmd := exec.Command(gr, "check", "--config", ".goreleaser.yaml")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("goreleaser check: %v\n%s", err, out)
	}
}
