# `log -n 1` and the compaction's SessionStart on a chain of N commits of one text whose
# progress flips (issue 49): BEFORE and AFTER binaries, a chain with `since:` and one without.
set -e
BEFORE=$1 AFTER=$2 N=${3:-20000}; HERE=$(cd "$(dirname "$0")" && pwd)
for KIND in since none; do
  D=$(mktemp -d); cd $D; git init -q -b main r; cd r; mkdir -p app/Mail; seq 1 40 | sed 's/^/line /' > app/Mail/Invoice.php; echo '{}' > composer.json; git add -A; git -c user.name=a -c user.email=b commit -qm i
  export HANDOFF_STORE_DIR=$D/store HOME=$D
  sed "s|CHECKOUT|$D/r|" "$HERE/lineage-doc.md" | "$AFTER" write --no-gate >/dev/null
  cp $HANDOFF_STORE_DIR/*.md $D/slot.md
  git update-ref -d refs/handoffs/main
  python3 "$HERE/chain_flips.py" $D/r $N $D/slot.md $KIND
  for B in "$AFTER" "$BEFORE"; do
    for k in 1 2 3 4 5; do
      S=$(date +%s%N); $B log -n 1 >/dev/null; M=$(date +%s%N)
      echo '{"session_id":"s'$k'","source":"compact","cwd":"'$D/r'"}' | HANDOFF_CLAIM_WINDOW_SECONDS=0 LAST_CLEAR_STATE_DIR=$D/m $B hook session-start > /dev/null; E=$(date +%s%N)
      echo "$KIND $(basename $B) log -n 1: $(( (M-S)/1000000 )) ms; SessionStart (compact): $(( (E-M)/1000000 )) ms"
    done
  done
  cd /; rm -rf $D
done
