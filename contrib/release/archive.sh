#!/usr/bin/env bash
# The release archive for the platform this runs on, and the npm packages made from it:
#   handoff-store-<version>-<target>.tar.gz   the three binaries, LICENSE, README.md, man/*.1
#   handoff-store-<version>-<target>.tar.gz.sha256
#   npm/handoff-store/                        the package users install: a JavaScript shim
#   npm/handoff-store-<os>-<cpu>-<libc>/      the platform's binaries (os / cpu / libc fields)
# Reproducible: the same build gives the same bytes (names sorted, every time the last commit's,
# owner 0, gzip without a name or a time). The binaries are those of `cargo build --release`.
# Usage: contrib/release/archive.sh [OUT_DIR]   (default target/dist)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(mkdir -p "${1:-target/dist}" && cd "${1:-target/dist}" && pwd)
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
target=$(rustc -vV | sed -n 's/^host: //p')
epoch=$(git log -1 --format=%ct 2>/dev/null || echo 0)
cargo build --release --locked --bins --quiet
bins=(handoff-store verify-handoff handoff-store-mcp)

# Every file of a tree into a gzip'd tar, the same bytes for the same files.
pack() { # <tarball> <dir> <entry>
    tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner \
        --mode='u+rwX,go+rX,go-w' --format=gnu -C "$2" -cf - "$3" | gzip -n -9 > "$1"
}

name="handoff-store-$version-$target"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/$name"
for b in "${bins[@]}"; do install -s -m 755 "target/release/$b" "$stage/$name/"; done
install -m 644 LICENSE README.md "$stage/$name/"
# The man pages, as `handoff-store man` renders them (no date in them: the same bytes each time):
# the two binaries' and one for each command the first one names.
mkdir "$stage/$name/man"
man=target/release/handoff-store
pages=(verify-handoff $("$man" man | sed -n 's/^handoff\\-store\\-\(.*\)(1)$/handoff-store-\1/p' | sed 's/\\//g'))
for page in handoff-store "${pages[@]}"; do "$man" man "$page" > "$stage/$name/man/$page.1"; done
pack "$out/$name.tar.gz" "$stage" "$name"
(cd "$out" && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")

# npm: the platform's package holds the binaries from the archive; the main package names it
# as an optional dependency for its os, cpu and libc, and finds it at run time (no install
# script, nothing downloaded at install).
case "$target" in
    x86_64-unknown-linux-gnu) os=linux cpu=x64 libc=glibc ;;
    aarch64-unknown-linux-gnu) os=linux cpu=arm64 libc=glibc ;;
    *) echo "archive.sh: no npm platform package for $target" >&2; exit 0 ;;
esac
platform="handoff-store-$os-$cpu-${libc/glibc/gnu}"
rm -rf "$out/npm" && mkdir -p "$out/npm/$platform/bin" "$out/npm/handoff-store/bin"
tar -xzf "$out/$name.tar.gz" -C "$stage"
for b in "${bins[@]}"; do install -m 755 "$stage/$name/$b" "$out/npm/$platform/bin/"; done
cp LICENSE "$out/npm/$platform/"
cat > "$out/npm/$platform/package.json" <<JSON
{
  "name": "$platform",
  "version": "$version",
  "description": "The handoff-store binaries for $os $cpu ($libc); installed by the handoff-store package.",
  "license": "MIT",
  "os": ["$os"],
  "cpu": ["$cpu"],
  "libc": ["$libc"],
  "files": ["bin", "LICENSE"]
}
JSON
cp contrib/release/shim.js "$out/npm/handoff-store/bin/handoff-store.js"
cp contrib/release/shim.js "$out/npm/handoff-store/bin/verify-handoff.js"
cp LICENSE README.md "$out/npm/handoff-store/"
cp -r "$stage/$name/man" "$out/npm/handoff-store/"
cat > "$out/npm/handoff-store/package.json" <<JSON
{
  "name": "handoff-store",
  "version": "$version",
  "description": "Carry an AI coding session's state across a context reset: a gated handoff store.",
  "license": "MIT",
  "bin": {
    "handoff-store": "bin/handoff-store.js",
    "verify-handoff": "bin/verify-handoff.js"
  },
  "man": [$(cd "$stage/$name" && LC_ALL=C ls man/*.1 | sed 's|.*|"./&"|' | paste -sd, -)],
  "files": ["bin", "man", "LICENSE", "README.md"],
  "optionalDependencies": {
    "$platform": "$version"
  },
  "engines": { "node": ">=16" }
}
JSON
echo "$out/$name.tar.gz"
