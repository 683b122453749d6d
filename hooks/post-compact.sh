#!/bin/sh
# Claude Code post-compact hook: hand stdin to handoff-store untouched. Exits 0 if it is not installed.
b="${HANDOFF_STORE_BIN:-handoff-store}"
command -v "$b" >/dev/null 2>&1 || exit 0
exec "$b" hook post-compact
