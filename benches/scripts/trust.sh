#!/usr/bin/env bash
# Issue 39 measurements (BENCHMARKS.md): run as  benches/scripts/trust.sh BEFORE AFTER  with two
# release builds of handoff-store. Prune of 20,000 orphan chains, then log -n 1 and SessionStart
# after a compaction on a chain of 100,000 versions (made with git fast-import).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
for B in "$1" "$2"; do bash "$HERE/prune-orphans.sh" "$B"; done
bash "$HERE/lineage.sh" "$1" "$2"
