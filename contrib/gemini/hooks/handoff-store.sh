#!/bin/sh
# Gemini CLI hooks of the handoff-store extension: run `handoff-store hook <event> --harness
# gemini` with stdin untouched ($1 is session-start, user-prompt-submit, pre-compact,
# post-compact or post-tool-use). Exits 0 silently if handoff-store is not installed.
b="${HANDOFF_STORE_BIN:-handoff-store}"
command -v "$b" >/dev/null 2>&1 || exit 0
case "$1" in
session-start | user-prompt-submit | pre-compact | post-compact | post-tool-use) exec "$b" hook "$1" --harness gemini ;;
esac
exit 0
