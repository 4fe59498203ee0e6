//go:build linux

package e2e

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// realCLIs are the agent CLIs the real-CLI tests run, each at the version
// it was proven with.
var realCLIs = []agentCLI{claudeCLI, codexCLI, codexLegacyCLI, copilotCLI, geminiCLI, grokLegacyCLI, kimiCLI, openCodeCLI}

// TestInstallAndDriftNameEveryCLI holds CI's two lists of agent CLIs to
// the tests': .ci/install-agents.sh installs each at its version into
// <install>-<version> and exports its variable, and .ci/drift.sh tries the
// newest build of each through the same variable.
func TestInstallAndDriftNameEveryCLI(t *testing.T) {
	install := readRepoFile(t, "../.ci/install-agents.sh")
	drift := readRepoFile(t, "../.ci/drift.sh")
	pins := map[string]string{} // CLAUDE_VERSION → 2.1.332
	for _, m := range regexp.MustCompile(`(?m)^([A-Z_]+_VERSION)=(\S+)$`).FindAllStringSubmatch(install, -1) {
		pins[m[1]] = m[2]
	}
	agents := regexp.MustCompile(`AGENTS="\$\{AGENTS:-([^}]*)\}"`).FindStringSubmatch(drift)
	if agents == nil {
		t.Fatal(".ci/drift.sh has no default AGENTS list")
	}
	for _, c := range realCLIs {
		pinned := false
		for v, version := range pins {
			if version == c.version && strings.Contains(install, `"$NUDGE_E2E_CACHE/`+c.install+`-$`+v+`"`) {
				pinned = true
			}
		}
		if !pinned {
			t.Errorf(".ci/install-agents.sh does not install %s %s into %s-%s", c.name, c.version, c.install, c.version)
		}
		if !strings.Contains(install, "npm_agent "+c.env+" ") && !strings.Contains(install, "export "+c.env+"=") {
			t.Errorf(".ci/install-agents.sh does not export %s for %s", c.env, c.name)
		}
		if !strings.Contains(" "+agents[1]+" ", " "+c.install+" ") {
			t.Errorf(".ci/drift.sh's AGENTS does not name %s (%s)", c.install, c.name)
		}
		if !c.kept && !strings.Contains(drift, " "+c.env+" ") {
			t.Errorf(".ci/drift.sh does not check %s through %s", c.name, c.env)
		}
	}
}

func readRepoFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
