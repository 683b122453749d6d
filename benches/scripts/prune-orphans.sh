# $1 = binary; makes a repo with 20,000 orphan chains (branches gone), times prune --apply
set -e
B=$1; D=$(mktemp -d); cd $D
git init -q -b main r; cd r; echo x > a; git add a; git -c user.name=a -c user.email=b commit -qm i
export HANDOFF_STORE_DIR=$D/store HOME=$D
printf '# Handoff — t\nstatus: s\n\n## Do not re-derive\n\n### Decisions\n- a `a:1`\n\n### Dead ends\n- None.\n\n### Traps\n- None.\n\n## Next\n1. go\n\n## Pointers\n```text\na:1 | x\n```\n' | $B write --no-gate -q >/dev/null 2>&1 || printf '# Handoff — t\nstatus: s\n\n## Do not re-derive\n\n### Decisions\n- a `a:1`\n\n### Dead ends\n- None.\n\n### Traps\n- None.\n\n## Next\n1. go\n\n## Pointers\n```text\na:1 | x\n```\n' | $B write --no-gate >/dev/null
ID=$(git rev-parse refs/handoffs/main)
for i in $(seq 1 20000); do echo "create refs/handoffs/gone-$i $ID"; done | git update-ref --stdin
git pack-refs --all
S=$(date +%s.%N); $B prune --older-than 0 >/dev/null 2>&1; M=$(date +%s.%N); echo "dry run: $(echo "$M - $S" | bc) s"; S=$(date +%s.%N); $B prune --apply --older-than 0 >/dev/null 2>&1 || true; E=$(date +%s.%N)
echo "prune --apply of $(git for-each-ref refs/handoffs | wc -l) left: $(echo "$E - $S" | bc) s"
rm -rf $D
