#!/usr/bin/env bash
# Builds the Go vulnerability database for govulncheck (`make vuln`) from the
# golang.org/x/vulndb module, which the Go module proxy serves, into a cache
# folder, and prints `export VULNDB=file://<folder>`. For a machine that
# reaches the module proxy but not vuln.go.dev. Cheap once built.
#
#   NUDGE_CI_CACHE  cache folder (default: /var/cache/nudge-ci as root,
#                   else ${XDG_CACHE_HOME:-$HOME/.cache}/nudge-ci)
set -euo pipefail

VULNDB_VERSION=v0.0.0-20261105234957-e22db6528018 # move it to check against newer reports

if [[ -z "${NUDGE_CI_CACHE:-}" ]]; then
	if [[ $(id -u) -eq 0 ]]; then NUDGE_CI_CACHE=/var/cache/nudge-ci; else NUDGE_CI_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/nudge-ci"; fi
fi
db="$NUDGE_CI_CACHE/vulndb-$VULNDB_VERSION"
if [[ ! -f "$db/index/db.json" ]]; then
	src="$(cd "$(mktemp -d)" && GOFLAGS=-mod=mod go mod download -json "golang.org/x/vulndb@$VULNDB_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
	if [[ ! -d "$src/data/osv" ]]; then
		echo "vulndb: golang.org/x/vulndb@$VULNDB_VERSION has no data/osv" >&2
		exit 1
	fi
	rm -rf "$db.tmp"
	(cd "$src" && GOFLAGS=-mod=mod go run ./cmd/indexdb -vulns "$src/data/osv" -out "$db.tmp") >&2
	mv "$db.tmp" "$db"
fi
echo "export VULNDB=file://$db"
