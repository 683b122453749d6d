#!/bin/sh
# Claude Code user-prompt-submit hook: hand stdin to handoff-store untouched. Exits 0 if it is not installed.
b="${HANDOFF_STORE_BIN:-handoff-store}"
command -v "$b" >/dev/null 2>&1 || exit 0
exec "$b" hook user-prompt-submit
