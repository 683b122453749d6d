#!/bin/sh
# Gemini CLI SessionStart hook of the handoff-store extension: hand stdin to handoff-store
# untouched. Exits 0 silently if it is not installed.
b="${HANDOFF_STORE_BIN:-handoff-store}"
command -v "$b" >/dev/null 2>&1 || exit 0
exec "$b" hook session-start --harness gemini
