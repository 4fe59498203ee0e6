// Package config loads nudge's settings: embedded defaults, then a YAML file,
// then NUDGE_* environment variables, then command-line flags.
package config

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"nudge/internal/private"
)

//go:embed defaults.yaml
var defaults []byte

// Agent is one agent's watch settings.
type Agent struct {
	Enabled bool   `mapstructure:"enabled"`
	Root    string `mapstructure:"root"` // "" means the agent's own default
}

// Config is every setting of docs/behaviour.md §4, plus where nudge keeps its files.
type Config struct {
	Retry struct {
		Enabled       bool            `mapstructure:"enabled"`
		Message       string          `mapstructure:"message"`
		Delays        []time.Duration `mapstructure:"delays"`
		BoxFirstCheck time.Duration   `mapstructure:"box_first_check"`
		BoxMaxGap     time.Duration   `mapstructure:"box_max_gap"`
		BoxGiveUp     time.Duration   `mapstructure:"box_give_up"`
	} `mapstructure:"retry"`
	UsageLimit struct {
		Continue bool `mapstructure:"continue"`
	} `mapstructure:"usage_limit"`
	Agents map[string]Agent `mapstructure:"agents"`
	Inject struct {
		Order  []string        `mapstructure:"order"`
		Resume map[string]bool `mapstructure:"resume"`
	} `mapstructure:"inject"`
	Notify struct {
		Desktop bool `mapstructure:"desktop"`
		Ntfy    struct {
			URL string `mapstructure:"url"`
		} `mapstructure:"ntfy"`
		Webhook struct {
			URL string `mapstructure:"url"`
		} `mapstructure:"webhook"`
	} `mapstructure:"notify"`
	Web struct {
		Addr string `mapstructure:"addr"`
	} `mapstructure:"web"`
	Watch struct {
		LineCap ByteSize      `mapstructure:"line_cap"`
		Rescan  time.Duration `mapstructure:"rescan"`
		Events  string        `mapstructure:"events"`
		Latency time.Duration `mapstructure:"latency"`
	} `mapstructure:"watch"`
	Log struct {
		File  string `mapstructure:"file"`
		Level string `mapstructure:"level"`
	} `mapstructure:"log"`

	// File is the config file that was read ("" when none exists).
	File string `mapstructure:"-"`
	// Problems are keys of the file and NUDGE_* variables that set
	// nothing (a typo), each a sentence naming the nearest setting.
	Problems []string `mapstructure:"-"`
	// Settings are every setting in effect and where it came from.
	Settings []Setting `mapstructure:"-"`
	// DataDir holds the database, the lock and the control socket.
	DataDir string `mapstructure:"-"`
}

// Agent returns the settings of the agent called name: its entry under
// agents, else on at its own root, so that an agent the defaults leave out
// is still watched.
func (c Config) Agent(name string) Agent {
	if a, ok := c.Agents[name]; ok {
		return a
	}
	return Agent{Enabled: true}
}

// MaxAttempts is the fixed cap on continuations per dead turn (docs/behaviour.md §4).
const MaxAttempts = 3

// FlagKeys maps command-line flag names to the settings they override.
var FlagKeys = map[string]string{
	"web-addr":  "web.addr",
	"log-level": "log.level",
	"log-file":  "log.file",
}

// maxFile bounds the config file nudge reads.
const maxFile = 1 << 20

// Load reads the settings. file is the --config flag ("" for NUDGE_CONFIG or
// the platform default); flags may be nil. A config file that another user
// could change is refused (private.ReadFile, docs/security.md#files).
func Load(file string, flags *pflag.FlagSet) (Config, error) {
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(defaults)); err != nil {
		return Config{}, fmt.Errorf("read built-in defaults: %w", err)
	}
	explicit := file != ""
	if file == "" {
		file = os.Getenv(EnvConfig)
		explicit = file != ""
	}
	if file == "" {
		file = DefaultFile()
	}
	var cfg Config
	data, err := private.ReadFile("config file", file, maxFile)
	if err == nil {
		if err := v.MergeConfig(bytes.NewReader(data)); err != nil {
			return Config{}, fmt.Errorf("config %s: %w", file, err)
		}
		cfg.File = file
		cfg.Problems = fileProblems(file, data)
	} else if explicit || !errors.Is(err, fs.ErrNotExist) {
		return Config{}, err
	}
	cfg.Problems = append(cfg.Problems, envProblems(os.Environ())...)
	v.SetEnvPrefix("NUDGE")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	if flags != nil {
		for name, key := range FlagKeys {
			if f := flags.Lookup(name); f != nil {
				if err := v.BindPFlag(key, f); err != nil {
					return Config{}, fmt.Errorf("flag --%s: %w", name, err)
				}
			}
		}
	}
	hook := viper.DecodeHook(mapstructure.ComposeDecodeHookFunc(
		commaListHook,
		byteSizeHook,
		mapstructure.StringToTimeDurationHookFunc(),
	))
	if err := v.Unmarshal(&cfg, hook); err != nil {
		return Config{}, fmt.Errorf("settings: %w", err)
	}
	cfg.Settings = origins(v.Get, cfg.File, data, flags)
	cfg.DataDir = DataDir()
	return cfg, cfg.validate()
}

func (c Config) validate() error {
	switch {
	case len(c.Retry.Delays) == 0:
		return errors.New("retry.delays: at least one delay is needed")
	case len(c.Retry.Delays) > MaxAttempts:
		return fmt.Errorf("retry.delays: at most %d delays (the attempt cap is fixed)", MaxAttempts)
	case strings.TrimSpace(c.Retry.Message) == "":
		return errors.New("retry.message: the continuation text is empty")
	case c.Retry.BoxFirstCheck <= 0 || c.Retry.BoxMaxGap <= 0 || c.Retry.BoxGiveUp <= 0:
		return errors.New("retry: box_first_check, box_max_gap and box_give_up must be positive")
	}
	for i, d := range c.Retry.Delays {
		if d < 0 {
			return fmt.Errorf("retry.delays[%d]: negative delay %s", i, d)
		}
	}
	if _, err := parseLevel(c.Log.Level); err != nil {
		return fmt.Errorf("log.level %q: want debug, info, warn or error", c.Log.Level)
	}
	return nil
}

// LogLevel is log.level as the logger takes it (Load has checked it).
func (c Config) LogLevel() slog.Level {
	level, _ := parseLevel(c.Log.Level)
	return level
}

func parseLevel(s string) (slog.Level, error) {
	var level slog.Level
	err := level.UnmarshalText([]byte(strings.ToUpper(s)))
	return level, err
}

// commaListHook lets a list be written as "a,b,c" (environment variables).
func commaListHook(from, to reflect.Type, data any) (any, error) {
	if from.Kind() != reflect.String || to.Kind() != reflect.Slice {
		return data, nil
	}
	parts := strings.Split(data.(string), ",")
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out, nil
}

// ByteSize is a size in bytes, written like "8MiB" or "65536".
type ByteSize int64

func byteSizeHook(from, to reflect.Type, data any) (any, error) {
	if to != reflect.TypeFor[ByteSize]() {
		return data, nil
	}
	switch d := data.(type) {
	case string:
		return ParseByteSize(d)
	case int:
		return ByteSize(d), nil
	case int64:
		return ByteSize(d), nil
	case float64:
		return ByteSize(d), nil
	}
	return data, nil
}

// ParseByteSize reads "8MiB", "512KiB", "1GiB" or a plain number of bytes.
func ParseByteSize(s string) (ByteSize, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("size %q: want a positive number with an optional KiB/MiB/GiB suffix", s)
	}
	return ByteSize(n * mult), nil
}

// DefaultFile is the config file in the platform's config folder.
func DefaultFile() string {
	return filepath.Join(configDir(), "nudge", "config.yaml")
}

// DataDir is $NUDGE_DATA_DIR, else the platform's data folder for nudge.
func DataDir() string {
	if d := os.Getenv(EnvDataDir); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Application Support", "nudge")
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "nudge")
	}
	return filepath.Join(home, ".local", "share", "nudge")
}

// LogFile is where the daemon's log goes when log.file is not set: the
// platform's log folder (inside NUDGE_DATA_DIR when that is set).
func (c Config) LogFile() string {
	if c.Log.File != "" {
		return c.Log.File
	}
	if os.Getenv(EnvDataDir) != "" {
		return filepath.Join(c.DataDir, "nudge.log")
	}
	home, _ := os.UserHomeDir()
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Logs", "nudge", "nudge.log")
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "nudge", "nudge.log")
	}
	return filepath.Join(home, ".local", "state", "nudge", "nudge.log")
}

func configDir() string {
	home, _ := os.UserHomeDir()
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Application Support")
	}
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" {
		return d
	}
	return filepath.Join(home, ".config")
}
