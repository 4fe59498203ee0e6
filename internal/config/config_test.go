package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func isolate(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("NUDGE_CONFIG", "")
	t.Setenv("NUDGE_DATA_DIR", "")
	return home
}

func TestDefaultsNeedNoFile(t *testing.T) {
	home := isolate(t)
	cfg, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Retry.Enabled || cfg.UsageLimit.Continue {
		t.Errorf("retry.enabled=%v usage_limit.continue=%v, want true/false", cfg.Retry.Enabled, cfg.UsageLimit.Continue)
	}
	want := []time.Duration{10 * time.Second, 30 * time.Second, 90 * time.Second}
	if len(cfg.Retry.Delays) != 3 || cfg.Retry.Delays[0] != want[0] || cfg.Retry.Delays[2] != want[2] {
		t.Errorf("delays = %v, want %v", cfg.Retry.Delays, want)
	}
	if cfg.Retry.BoxFirstCheck != 10*time.Second || cfg.Retry.BoxMaxGap != 5*time.Minute || cfg.Retry.BoxGiveUp != time.Hour {
		t.Errorf("box timings = %v %v %v", cfg.Retry.BoxFirstCheck, cfg.Retry.BoxMaxGap, cfg.Retry.BoxGiveUp)
	}
	if !strings.Contains(cfg.Retry.Message, "provider error") {
		t.Errorf("default message %q does not say what happened", cfg.Retry.Message)
	}
	if !cfg.Agents["claude"].Enabled || cfg.Agents["claude"].Root != "" {
		t.Errorf("agents.claude = %+v", cfg.Agents["claude"])
	}
	if cfg.Web.Addr != "127.0.0.1:0" || int64(cfg.Watch.LineCap) != 8<<20 {
		t.Errorf("web.addr=%q line_cap=%d", cfg.Web.Addr, cfg.Watch.LineCap)
	}
	if cfg.DataDir != filepath.Join(home, ".local", "share", "nudge") || cfg.File != "" {
		t.Errorf("data dir %q, file %q", cfg.DataDir, cfg.File)
	}
}

func TestPrecedenceFileEnvFlags(t *testing.T) {
	home := isolate(t)
	file := filepath.Join(home, "nudge.yaml")
	yaml := "retry:\n  delays: [1s, 2s]\n  message: from the file\nweb:\n  addr: 127.0.0.1:7001\nagents:\n  claude: {root: /from/file}\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("NUDGE_CONFIG", file)
	t.Setenv("NUDGE_WEB_ADDR", "127.0.0.1:7002")
	t.Setenv("NUDGE_RETRY_DELAYS", "3s,4s,5s")
	t.Setenv("NUDGE_DATA_DIR", filepath.Join(home, "data"))
	flags := pflag.NewFlagSet("run", pflag.ContinueOnError)
	flags.String("web-addr", "", "")
	if err := flags.Parse([]string{"--web-addr=127.0.0.1:7003"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load("", flags)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.File != file || cfg.Retry.Message != "from the file" || cfg.Agents["claude"].Root != "/from/file" {
		t.Errorf("file not applied: %+v", cfg)
	}
	if got := cfg.Retry.Delays; len(got) != 3 || got[0] != 3*time.Second {
		t.Errorf("env must beat the file: delays %v", got)
	}
	if cfg.Web.Addr != "127.0.0.1:7003" {
		t.Errorf("flag must win: web.addr %q", cfg.Web.Addr)
	}
	if cfg.DataDir != filepath.Join(home, "data") {
		t.Errorf("NUDGE_DATA_DIR ignored: %q", cfg.DataDir)
	}
	if !cfg.Retry.Enabled {
		t.Error("keys the file leaves out keep their defaults")
	}
}

func TestBadSettingsAreClearErrors(t *testing.T) {
	home := isolate(t)
	for name, yaml := range map[string]string{
		"four delays":   "retry:\n  delays: [1s, 2s, 3s, 4s]\n",
		"empty message": "retry:\n  message: \"  \"\n",
		"bad yaml":      "retry: [\n",
		"bad size":      "watch:\n  line_cap: lots\n",
	} {
		file := filepath.Join(home, strings.ReplaceAll(name, " ", "_")+".yaml")
		if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(file, nil); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := Load(filepath.Join(home, "missing.yaml"), nil); err == nil {
		t.Error("an explicit config file that does not exist must be an error")
	}
}

func TestParseByteSize(t *testing.T) {
	for in, want := range map[string]ByteSize{"8MiB": 8 << 20, "512 KiB": 512 << 10, "100": 100, "1GiB": 1 << 30} {
		got, err := ParseByteSize(in)
		if err != nil || got != want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "8XB", "MiB"} {
		if _, err := ParseByteSize(in); err == nil {
			t.Errorf("ParseByteSize(%q): no error", in)
		}
	}
}
