#!/usr/bin/env bash
# Run every `cargo bench` case at two commits, one after the other on this machine, for a
# before/after table in BENCHMARKS.md. Usage: contrib/bench-compare.sh BEFORE [AFTER]
# (AFTER defaults to HEAD). Each side builds in a target directory of its own under
# target/compare/, so the binaries the benches run are that side's; output goes to
# target/compare/<side>.txt.
set -euo pipefail
before=${1:?usage: contrib/bench-compare.sh BEFORE [AFTER]}
after=${2:-HEAD}
root=$(git rev-parse --show-toplevel)
out="$root/target/compare"
mkdir -p "$out"
for side in before after; do
  rev=${!side}
  tree="$out/tree-$side"
  git -C "$root" worktree remove --force "$tree" 2>/dev/null || true
  rm -rf "$tree"
  git -C "$root" worktree prune
  git -C "$root" worktree add -q --detach "$tree" "$rev"
  (cd "$tree" && CARGO_TARGET_DIR="$out/target-$side" cargo bench --locked --no-run -q)
done
for side in before after; do
  tree="$out/tree-$side"
  echo "== $side: $(git -C "$tree" rev-parse --short HEAD)" > "$out/$side.txt"
  for bench in library process sync; do
    (cd "$tree" && CARGO_TARGET_DIR="$out/target-$side" cargo bench --locked -q --bench "$bench") >> "$out/$side.txt" 2>&1
  done
done
for side in before after; do git -C "$root" worktree remove --force "$out/tree-$side"; done
echo "results: $out/before.txt $out/after.txt"
