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

install_claude
