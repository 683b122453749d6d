# The first read after a chain of 100,000 versions recorded without numbers (`seq:`) arrives, and
# `log` on it: `bash benches/scripts/lineage-legacy.sh BINARY` (a fresh chain each run).
set -e
B=$1; HERE=$(cd "$(dirname "$0")" && pwd)
D=$(mktemp -d); cd $D; git init -q -b main r; cd r; mkdir -p app/Mail; seq 1 40 | sed 's/^/line /' > app/Mail/Invoice.php; echo '{}' > composer.json; git add -A; git -c user.name=a -c user.email=b commit -qm i
export HANDOFF_STORE_DIR=$D/store HOME=$D
sed "s|CHECKOUT|$D/r|" "$HERE/lineage-doc.md" | "$B" write --no-gate >/dev/null
cp $HANDOFF_STORE_DIR/*.md $D/slot.md
python3 "$HERE/chain.py" $D/r 100000 $D/slot.md legacy >/dev/null
S=$(date +%s%N); "$B" log -n 1 >/dev/null; M=$(date +%s%N)
echo '{"session_id":"s","source":"clear","cwd":"'$D/r'"}' | HANDOFF_CLAIM_WINDOW_SECONDS=0 LAST_CLEAR_STATE_DIR=$D/m "$B" hook session-start >/dev/null; E=$(date +%s%N)
echo "$(basename "$B") log -n 1: $(( (M-S)/1000000 )) ms; first SessionStart (clear): $(( (E-M)/1000000 )) ms"
rm -rf $D
