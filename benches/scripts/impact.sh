# `impact` at scale, and what the reset log costs the hooks:
#   bash benches/scripts/impact.sh AFTER [BEFORE]
# AFTER is a release `handoff-store` with `impact`; BEFORE (optional) one built before the reset
# log, for the hooks' before/after. Prints: `impact --all --json` over 1,000 synthetic resets
# (each with its own 40-line Claude Code transcript; the median of 5 runs), the same as 1,000
# OpenCode sessions in one SQLite database (read through handoff-store-mcp), the peak memory of
# `impact` over one 200 MB transcript, and the median of 31 runs of `hook session-start` (a
# /clear delivering the handoff) for each binary, interleaved.
set -e
AFTER=$1; BEFORE=$2
HERE=$(cd "$(dirname "$0")" && pwd)
D=$(mktemp -d); trap 'rm -rf $D' EXIT
export HOME=$D HANDOFF_STORE_DIR=$D/store
cd $D; git init -q -b main r; cd r
mkdir -p app/Mail; seq 1 40 | sed 's/^/line /' > app/Mail/Invoice.php; echo '{}' > composer.json
git add -A; git -c user.name=a -c user.email=b commit -qm i
sed "s|CHECKOUT|$D/r|" "$HERE/lineage-doc.md" | "$AFTER" write --no-gate >/dev/null
python3 - "$D" <<'EOF'
import json, os, sys, time
d = sys.argv[1]; repo = d + "/r"; now = int(time.time()) - 3600
os.makedirs(d + "/t", exist_ok=True); os.makedirs(d + "/store/.resets", exist_ok=True)
day = time.strftime("%Y-%m-%d", time.gmtime(now))
def line(at, tools, i):
    ts = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(at))
    return json.dumps({"type": "assistant", "cwd": repo, "sessionId": "s", "timestamp": ts,
        "message": {"id": "m%d" % i, "content": [{"type": "tool_use", "id": "t%d" % i, "name": n, "input": inp} for n, inp in tools],
        "usage": {"input_tokens": 100, "cache_read_input_tokens": 900, "output_tokens": 10}}})
with open(d + "/store/.resets/%s.jsonl" % day, "w") as log:
    for r in range(1000):
        t = d + "/t/%d.jsonl" % r
        with open(t, "w") as f:
            for i in range(40):
                tool = ("Edit", {"file_path": repo + "/app/Mail/Invoice.php"}) if i == 20 else ("Bash", {"command": "make test-slow" if i % 7 == 0 else "ls"})
                f.write(line(now + 1 + i, [tool], i) + "\n")
        log.write(json.dumps({"at": now, "client": "claude-code", "session": "s%d" % r, "transcript": t,
            "source": "clear", "arm": ["delivered", "holdout"][r % 2], "chars": 900, "checkout": repo,
            "main": repo, "cited": ["app/Mail/Invoice.php"], "wires": []}) + "\n")
EOF
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ms() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(( (e-s)/1000000 )); }
echo "impact over 1,000 resets: $(for i in 1 2 3 4 5; do ms "$AFTER" impact --all --json; done | med) ms (median of 5)"
# OpenCode: the same 1,000 resets as sessions of one SQLite database (40 parts each, WAL mode),
# read through handoff-store-mcp beside AFTER (one run of it per reset).
rm -f $D/store/.resets/*; python3 - "$D" <<'EOF'
import json, os, sqlite3, sys, time
d = sys.argv[1]; repo = d + "/r"; now = int(time.time()) - 3600
os.makedirs(d + "/.local/share/opencode", exist_ok=True)
db = sqlite3.connect(d + "/.local/share/opencode/opencode.db")
db.execute("PRAGMA journal_mode = WAL")
db.execute("CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL)")
db.execute("CREATE INDEX part_session_idx ON part (session_id)")
day = time.strftime("%Y-%m-%d", time.gmtime(now))
with open(d + "/store/.resets/%s.jsonl" % day, "w") as log:
    for r in range(1000):
        for i in range(40):
            tool = ("edit", {"filePath": repo + "/app/Mail/Invoice.php"}) if i == 20 else ("bash", {"command": "make test-slow" if i % 7 == 0 else "ls"})
            part = {"type": "tool", "tool": tool[0], "callID": "c%d" % i, "state": {"status": "completed", "input": tool[1]}} if i % 2 == 0 else {"type": "step-finish", "tokens": {"total": 1010}}
            at = (now + 1 + i) * 1000
            db.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", ("p%d-%d" % (r, i), "m", "ses_%d" % r, at, at, json.dumps(part)))
        log.write(json.dumps({"at": now, "client": "opencode", "session": "ses_%d" % r, "transcript": d + "/.local/share/opencode/opencode.db",
            "source": "compact", "arm": ["delivered", "holdout"][r % 2], "chars": 900, "checkout": repo,
            "main": repo, "cited": ["app/Mail/Invoice.php"], "wires": []}) + "\n")
db.commit()
EOF
echo "impact over 1,000 OpenCode resets (one database): $(for i in 1 2 3 4 5; do ms "$AFTER" impact --all --json; done | med) ms (median of 5)"
# One transcript of about 200 MB: 1.2 million lines of one session.
rm -f $D/store/.resets/*; python3 - "$D" <<'EOF'
import json, sys, time
d = sys.argv[1]; repo = d + "/r"; now = int(time.time()) - 3600
ts = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(now + 10))
row = json.dumps({"type": "assistant", "cwd": repo, "timestamp": ts, "message": {"id": "m", "content": [{"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "ls " + "x" * 60}}], "usage": {"input_tokens": 1}}}) + "\n"
with open(d + "/big.jsonl", "w") as f:
    f.write(row * (200 * 1024 * 1024 // len(row)))
day = time.strftime("%Y-%m-%d", time.gmtime(now))
with open(d + "/store/.resets/%s.jsonl" % day, "w") as log:
    log.write(json.dumps({"at": now, "client": "claude-code", "session": "big", "transcript": d + "/big.jsonl", "source": "clear", "arm": "delivered", "chars": 1, "checkout": repo, "main": repo}) + "\n")
EOF
echo "impact over one $(( $(stat -c %s $D/big.jsonl) / 1048576 )) MB transcript: $(/usr/bin/time -f '%e s, peak RSS %M KB' "$AFTER" impact --all --json 2>&1 >/dev/null)"
[ -n "$BEFORE" ] || exit 0
hook() { echo '{"session_id":"s'$RANDOM'","source":"clear","cwd":"'$D/r'","transcript_path":"'$D/big.jsonl'"}' | HANDOFF_CLAIM_WINDOW_SECONDS=0 LAST_CLEAR_STATE_DIR=$D/m "$1" hook session-start >/dev/null; }
for i in $(seq 1 31); do
  for b in "$BEFORE" "$AFTER"; do s=$(date +%s%N); hook "$b"; e=$(date +%s%N); echo "$b $(( (e-s)/1000 ))"; done
done > $D/times
for b in "$BEFORE" "$AFTER"; do echo "hook session-start (/clear, delivered) $(basename $(dirname $(dirname "$b"))): $(grep "^$b " $D/times | cut -d' ' -f2 | med) µs (median of 31)"; done
