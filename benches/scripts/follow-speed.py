#!/usr/bin/env python3
"""The gate's speed with citations followed from `head:` (BENCHMARKS.md, "Pointers that follow the
code"), two release builds side by side in one run:

    follow-speed.py BEFORE_VERIFY_HANDOFF AFTER_VERIFY_HANDOFF [--runs 15]

1. A repository of 20,000 files in 200 directories (50 lines each), a handoff of 1,000 line
   citations with fragments and `head:` its HEAD, an uncommitted line on top of 100 of the 200
   cited files (500 cited lines moved down by one): both builds, the same handoff. Each cited
   text stands on one line, so the text alone settles it (git would say the same).
2. The same, but each of those 100 files also holds a second copy of its lines: the text cannot
   say which line is the cited one, git's line diff is asked for all 500 (100 blobs read at
   `head:`, 100 diffs).
3. The same files with 500 commits on top of `head:` (each adds a line at the top of one of the 28
   cited files, or renames one with an edit every 50th commit): a handoff of 28 citations.

Each figure is the median of RUNS whole-process runs after 3 warm-ups (warm page cache).
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from replay import DOC  # noqa: E402  (one handoff template for both scripts)



def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True).stdout.decode().strip()


def body(d, f):
    return "".join(f"pub fn f{d}_{f}_{line}() -> u32 {{ {line} }} // filler\n" for line in range(1, 51))


def make_tree(repo):
    os.makedirs(repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "bench@example.invalid")
    git(repo, "config", "user.name", "bench")
    git(repo, "config", "gc.auto", "0")
    for d in range(200):
        os.makedirs(f"{repo}/src/d{d}")
        for f in range(100):
            open(f"{repo}/src/d{d}/f{f}.rs", "w").write(body(d, f))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "tree")
    # Packed, as a real repository is: its similar blobs stored as delta chains.
    git(repo, "gc", "-q")
    return git(repo, "rev-parse", "HEAD")


def time_gate(binary, doc, repo, runs):
    times = []
    for i in range(runs + 3):
        start = time.perf_counter()
        out = subprocess.run([binary, doc, repo], capture_output=True)
        elapsed = time.perf_counter() - start
        if out.returncode not in (0, 1):
            raise SystemExit(f"{binary} exited {out.returncode}: {out.stdout[-400:]!r}")
        if i >= 3:
            times.append(elapsed * 1000)
    return statistics.median(times), out.stdout.decode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    scratch = tempfile.mkdtemp(prefix="follow-speed-")
    repo = f"{scratch}/big"
    head = make_tree(repo)
    cites = [(d * 5 % 200, (d * 7) % 100, 1 + d % 50) for d in range(1000)]
    pointers = "\n".join(f"src/d{d}/f{f}.rs:{l} | pub fn f{d}_{f}_{l}()" for d, f, l in cites)
    doc = f"{scratch}/thousand.md"
    open(doc, "w").write(DOC.format(head=head, pointers=pointers))
    # An uncommitted line on top of 100 of the cited files: their lines move down by one.
    for d, f, _ in cites[:100]:
        path = f"{repo}/src/d{d}/f{f}.rs"
        open(path, "w").write("// moved\n" + body(d, f))
    print("| case | before | after | ratio |")
    print("|---|---:|---:|---:|")
    b, _ = time_gate(args.before, doc, repo, args.runs)
    a, text = time_gate(args.after, doc, repo, args.runs)
    print(f"| gate, 1,000 line citations (500 moved, uncommitted), 20k files, `head:` HEAD | {b:.1f} ms | {a:.1f} ms | {a / b:.2f} |")
    for d, f, _ in cites[:100]:
        path = f"{repo}/src/d{d}/f{f}.rs"
        open(path, "w").write("// moved\n" + body(d, f) + body(d, f))
    b, _ = time_gate(args.before, doc, repo, args.runs)
    a, text = time_gate(args.after, doc, repo, args.runs)
    print(f"| the same, each moved line's text on two lines of its file (git's diff asked 500 times) | {b:.1f} ms | {a:.1f} ms | {a / b:.2f} |")

    # 500 commits on top of head:, 28 citations.
    git(repo, "checkout", "-q", "--", ".")
    few = cites[:28]
    pointers = "\n".join(f"src/d{d}/f{f}.rs:{l} | pub fn f{d}_{f}_{l}()" for d, f, l in few)
    doc = f"{scratch}/far.md"
    open(doc, "w").write(DOC.format(head=head, pointers=pointers))
    paths = [f"src/d{d}/f{f}.rs" for d, f, _ in few]
    for i in range(500):
        k = i % len(paths)
        path = paths[k]
        if i % 50 == 49:
            new = path.replace(".rs", f"_r{i}.rs")
            git(repo, "mv", path, new)
            paths[k] = path = new
        full = f"{repo}/{path}"
        text = open(full).read()
        open(full, "w").write(f"// commit {i}\n" + text)
        git(repo, "commit", "-q", "-am", f"c{i}")
    git(repo, "gc", "-q")
    b, _ = time_gate(args.before, doc, repo, args.runs)
    a, text = time_gate(args.after, doc, repo, args.runs)
    followed = text.count("(git's diff)") + text.count("renamed to")
    print(f"| gate, 28 citations, `head:` 500 commits back, 20k files | {b:.1f} ms | {a:.1f} ms | {a / b:.2f} |")
    print(f"(after: {followed} of 28 citations followed to their line by git)")
    subprocess.run(["rm", "-rf", scratch])


if __name__ == "__main__":
    main()
