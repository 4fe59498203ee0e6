package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"nudge/internal/retry"
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

// A typo in the file or in a variable is reported with the setting meant;
// the rest of the file still applies.
func TestUnknownKeysAreReported(t *testing.T) {
	home := isolate(t)
	file := filepath.Join(home, "nudge.yaml")
	yaml := "retry:\n  dealys: [1s]\n  message: kept\nagents:\n  claude: {}\n  clade: {enabled: false}\nnotify:\n  ntfy: {url: https://ntfy.example/t}\ncolour: blue\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("NUDGE_RETRY_DELAY", "1s")
	t.Setenv("NUDGE_RETRY_ENABLED", "true")
	cfg, err := Load(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(cfg.Problems, "\n")
	for _, want := range []string{
		`"retry.dealys" is not a setting (did you mean retry.delays?)`,
		`"agents.clade.enabled" is not a setting (did you mean agents.claude.enabled?)`,
		`"colour" is not a setting`,
		"NUDGE_RETRY_DELAY is not a setting (did you mean NUDGE_RETRY_DELAYS?)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems:\n%s\nwant one saying %s", got, want)
		}
	}
	for _, ok := range []string{"message", "agents.claude\"", "ntfy", "NUDGE_RETRY_ENABLED"} {
		if strings.Contains(got, ok) {
			t.Errorf("problems:\n%s\nname %s, which is a setting", got, ok)
		}
	}
	if cfg.Retry.Message != "kept" {
		t.Errorf("the known keys of a file with typos still apply: message %q", cfg.Retry.Message)
	}
}

func TestSettingsSayWhereEachValueCameFrom(t *testing.T) {
	home := isolate(t)
	file := filepath.Join(home, "nudge.yaml")
	if err := os.WriteFile(file, []byte("retry:\n  message: from the file\nweb: {addr: 127.0.0.1:7001}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("NUDGE_RETRY_DELAYS", "3s,4s")
	flags := pflag.NewFlagSet("run", pflag.ContinueOnError)
	flags.String("log-level", "", "")
	if err := flags.Parse([]string{"--log-level=debug"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(file, flags)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Setting{}
	for _, s := range cfg.Settings {
		got[s.Key] = s
	}
	for key, want := range map[string]Setting{
		"retry.message":  {Value: "from the file", Origin: FromFile, Via: file},
		"web.addr":       {Value: "127.0.0.1:7001", Origin: FromFile, Via: file},
		"retry.delays":   {Value: "3s,4s", Origin: FromEnv, Via: "NUDGE_RETRY_DELAYS"},
		"log.level":      {Value: "debug", Origin: FromFlag, Via: "--log-level"},
		"notify.desktop": {Value: true, Origin: FromDefault},
	} {
		s := got[key]
		if fmt.Sprint(s.Value) != fmt.Sprint(want.Value) || s.Origin != want.Origin || s.Via != want.Via {
			t.Errorf("%s = %+v, want %+v", key, s, want)
		}
	}
	if len(cfg.Settings) != len(knownKeys) {
		t.Errorf("%d settings listed, %d known", len(cfg.Settings), len(knownKeys))
	}
}

// Every field of Config has a built-in default, and every default is a
// field: the defaults file is the one list of settings.
func TestDefaultsNameEveryField(t *testing.T) {
	fields := fieldKeys("", reflect.TypeFor[Config]())
	sort.Strings(fields)
	var groups []string // map-typed fields hold one default per key
	for _, k := range knownKeys {
		for _, f := range fields {
			if strings.HasPrefix(k, f+".") && !slices.Contains(groups, f) {
				groups = append(groups, f)
			}
		}
	}
	for _, f := range fields {
		if !slices.Contains(knownKeys, f) && !slices.Contains(groups, f) {
			t.Errorf("field %s has no built-in default in defaults.yaml", f)
		}
	}
	for _, k := range knownKeys {
		if !slices.ContainsFunc(fields, func(f string) bool { return k == f || strings.HasPrefix(k, f+".") }) {
			t.Errorf("default %s sets no field of Config", k)
		}
	}
}

// fieldKeys lists the dotted mapstructure keys of t's leaf fields; a map
// field is one key.
func fieldKeys(prefix string, t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		tag := f.Tag.Get("mapstructure")
		if tag == "" || tag == "-" {
			continue
		}
		if f.Type.Kind() == reflect.Struct {
			out = append(out, fieldKeys(prefix+tag+".", f.Type)...)
		} else {
			out = append(out, prefix+tag)
		}
	}
	return out
}

// The retry machine's own defaults (used when a setting is unset) are the
// built-in defaults a person gets.
func TestDefaultsAreTheMachines(t *testing.T) {
	isolate(t)
	cfg, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	d := retry.DefaultSettings()
	if cfg.Retry.Message != d.Message {
		t.Errorf("message:\n%q in defaults.yaml\n%q in retry", cfg.Retry.Message, d.Message)
	}
	if !slices.Equal(cfg.Retry.Delays, d.Delays) || cfg.Retry.Enabled != d.Enabled || cfg.UsageLimit.Continue != d.ContinueAfterUsageLimit {
		t.Errorf("delays %v enabled %v continue %v; retry has %v %v %v", cfg.Retry.Delays, cfg.Retry.Enabled, cfg.UsageLimit.Continue, d.Delays, d.Enabled, d.ContinueAfterUsageLimit)
	}
	if cfg.Retry.BoxFirstCheck != d.BoxFirstCheck || cfg.Retry.BoxMaxGap != d.BoxMaxGap || cfg.Retry.BoxGiveUp != d.BoxGiveUp {
		t.Errorf("box timings differ from retry's")
	}
	if MaxAttempts != retry.MaxAttempts {
		t.Errorf("attempt cap %d here, %d in retry", MaxAttempts, retry.MaxAttempts)
	}
}
