set -e
BEFORE=$1 AFTER=$2; HERE=$(cd "$(dirname "$0")" && pwd)
D=$(mktemp -d); cd $D; git init -q -b main r; cd r; mkdir -p app/Mail; seq 1 40 | sed 's/^/line /' > app/Mail/Invoice.php; echo '{}' > composer.json; git add -A; git -c user.name=a -c user.email=b commit -qm i
export HANDOFF_STORE_DIR=$D/store HOME=$D
sed "s|CHECKOUT|$D/r|" "$HERE/lineage-doc.md" | "$AFTER" write --no-gate >/dev/null
cp $HANDOFF_STORE_DIR/*.md $D/slot.md
python3 "$HERE/chain.py" $D/r 100000 $D/slot.md
for B in "$AFTER" "$BEFORE"; do
  for k in 1 2 3; do
    S=$(date +%s%N); $B log -n 1 >/dev/null; M=$(date +%s%N)
    echo '{"session_id":"s'$k'","source":"compact","cwd":"'$D/r'"}' | HANDOFF_CLAIM_WINDOW_SECONDS=0 LAST_CLEAR_STATE_DIR=$D/m $B hook session-start > $D/out.txt; E=$(date +%s%N)
    echo "$(basename $B) log -n 1: $(( (M-S)/1000000 )) ms; SessionStart (compact): $(( (E-M)/1000000 )) ms"
  done
done
grep -o "handoff #[^)]*" $D/out.txt | head -2 || head -c 300 $D/out.txt
rm -rf $D
