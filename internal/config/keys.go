package config

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

// Environment variables that are not settings but name where they live.
const (
	EnvConfig  = "NUDGE_CONFIG"
	EnvDataDir = "NUDGE_DATA_DIR"
)

// Where a setting's value came from, in order of precedence.
const (
	FromDefault = "default"
	FromFile    = "file"
	FromEnv     = "env"
	FromFlag    = "flag"
)

// Setting is one key in effect and where its value came from.
type Setting struct {
	Key    string `json:"key"`
	Value  any    `json:"value"`
	Origin string `json:"origin"`        // FromDefault, FromFile, FromEnv or FromFlag
	Via    string `json:"via,omitempty"` // the file, variable or flag it came from
}

// knownKeys are the settings: every leaf key of the built-in defaults.
var knownKeys = func() []string {
	var tree map[string]any
	if err := yaml.Unmarshal(defaults, &tree); err != nil {
		panic(fmt.Sprintf("config: built-in defaults: %v", err)) // embedded at build time
	}
	keys := leaves("", tree)
	sort.Strings(keys)
	return keys
}()

// leaves lists the dotted paths of the values in tree that are not maps.
func leaves(prefix string, tree map[string]any) []string {
	var out []string
	for k, v := range tree {
		key := prefix + k
		if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
			out = append(out, leaves(key+".", sub)...)
		} else {
			out = append(out, key)
		}
	}
	return out
}

// IsPathVariable reports whether the NUDGE_* variable name holds a file or
// a folder: NUDGE_CONFIG, NUDGE_DATA_DIR, and those of the settings that
// name one (log.file, agents.<key>.root).
func IsPathVariable(name string) bool {
	if name == EnvConfig || name == EnvDataDir {
		return true
	}
	for _, k := range knownKeys {
		if (strings.HasSuffix(k, ".file") || strings.HasSuffix(k, ".root")) && envName(k) == name {
			return true
		}
	}
	return false
}

// envName is the NUDGE_* variable that sets key.
func envName(key string) string {
	return "NUDGE_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// flagFor is the command-line flag that sets key, if any.
func flagFor(key string) (string, bool) {
	for name, k := range FlagKeys {
		if k == key {
			return name, true
		}
	}
	return "", false
}

// fileProblems lists the keys of a config file that are no setting, each
// with the closest setting's name when one is near.
func fileProblems(file string, data []byte) []string {
	var tree map[string]any
	if err := yaml.Unmarshal(data, &tree); err != nil || tree == nil {
		return nil // Load reports a file that is no YAML map
	}
	var out []string
	for _, key := range leaves("", tree) {
		if known(strings.ToLower(key)) {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %q is not a setting%s", file, key, suggest(key, knownKeys)))
	}
	sort.Strings(out)
	return out
}

// known reports whether key is a setting, a group of settings (written
// as an empty map) or lies inside a setting.
func known(key string) bool {
	for _, k := range knownKeys {
		if key == k || strings.HasPrefix(key, k+".") || strings.HasPrefix(k, key+".") {
			return true
		}
	}
	return false
}

// envProblems lists the NUDGE_* variables of env that set nothing.
func envProblems(env []string) []string {
	names := []string{EnvConfig, EnvDataDir}
	for _, k := range knownKeys {
		names = append(names, envName(k))
	}
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "NUDGE_") || slices.Contains(names, name) {
			continue
		}
		out = append(out, fmt.Sprintf("environment: %s is not a setting%s", name, suggest(name, names)))
	}
	sort.Strings(out)
	return out
}

// suggest is ` (did you mean X?)` for the candidate nearest to s, when it
// is near enough to be a typo.
func suggest(s string, candidates []string) string {
	best, bestD := "", len(s)/3+1
	for _, c := range candidates {
		if d := distance(strings.ToLower(s), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "?)"
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// origins says, for every setting, the value in effect and where it came
// from: flags over environment over file over the built-in default.
func origins(get func(string) any, file string, fileData []byte, flags *pflag.FlagSet) []Setting {
	var tree map[string]any
	_ = yaml.Unmarshal(fileData, &tree)
	inFile := map[string]bool{}
	for _, k := range leaves("", tree) {
		inFile[strings.ToLower(k)] = true
	}
	out := make([]Setting, 0, len(knownKeys))
	for _, key := range knownKeys {
		s := Setting{Key: key, Value: get(key), Origin: FromDefault}
		name, hasFlag := flagFor(key)
		_, inEnv := os.LookupEnv(envName(key))
		switch {
		case hasFlag && flags != nil && flags.Lookup(name) != nil && flags.Lookup(name).Changed:
			s.Origin, s.Via = FromFlag, "--"+name
		case inEnv:
			s.Origin, s.Via = FromEnv, envName(key)
		case inFile[key]:
			s.Origin, s.Via = FromFile, file
		}
		out = append(out, s)
	}
	return out
}
