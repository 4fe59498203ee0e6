#!/usr/bin/env bash
# Detection latency of the real daemon: record appended → event stored.
set -euo pipefail
cd "$(dirname "$0")/.."
go run ./bench/detect "$@"
