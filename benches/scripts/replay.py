#!/usr/bin/env python3
"""Replay citations over a repository's real history (BENCHMARKS.md, "Pointers that follow the
code"): sample citations at commits of the first-parent history (a line unique in its file, at
least 16 characters, quoted whole), gate them K commits later, and compare with where git itself
says each line went.

    replay.py REPO VERIFY_HANDOFF [--steps 10,50,200,500] [--bases 10] [--per-base 20] [--seed 1]

The truth is `git diff -M -U0 C D` (git's default algorithm and rename similarity): the line's new
place when the diff keeps it; else the one line of its (renamed) file holding that text (a citation
claims a line holds its fragment); else the one line of the tree holding it; else gone. The gate's answer is where it vouches for the line:
the cited place when its verdict is OK, else the place `verify-handoff --fix` moves it to, else
none. Per step: sampled, followable (git's truth is not gone), vouched (the gate's place is the
truth), lost (followable, the gate vouches for nothing), wrong (the gate vouches for a place that
is not the truth). The repository is read in place; a scratch work tree is made beside /tmp.
"""

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def git(repo, *args, check=True):
    out = subprocess.run(["git", "-C", repo, *args], capture_output=True, check=check)
    return out.stdout


def first_parent(repo):
    return git(repo, "rev-list", "--first-parent", "--reverse", "HEAD").decode().split()


def files_at(repo, commit):
    out = git(repo, "ls-tree", "-r", "-z", "--format=%(objectmode) %(objectsize) %(path)", commit)
    files = []
    for rec in out.split(b"\0"):
        if not rec:
            continue
        mode, size, path = rec.decode("utf-8", "replace").split(" ", 2)
        if mode == "100644" and int(size) < 512 * 1024:
            files.append(path)
    return files


def usable(text):
    return len(text) >= 16 and "|" not in text and "`" not in text and not text.startswith("#")


def sample(repo, commit, n, rng):
    """n citations (path, line, text) at `commit`: each a line whose text no other line holds."""
    files = files_at(repo, commit)
    rng.shuffle(files)
    picked = []
    for path in files:
        if len(picked) >= n:
            break
        blob = git(repo, "show", f"{commit}:{path}", check=False)
        if b"\0" in blob[:8192]:
            continue
        lines = blob.decode("utf-8", "replace").split("\n")
        candidates = [i for i, l in enumerate(lines) if usable(l.strip())]
        rng.shuffle(candidates)
        for i in candidates[:8]:
            text = lines[i].strip()
            if sum(1 for l in lines if text in l) == 1:
                picked.append((path, i + 1, text))
                break
    return picked


def diff_map(repo, old, new):
    """old path -> (new path or None, [(old_start, old_len, new_start, new_len)])."""
    out = git(repo, "diff", "-M", "-U0", "--no-color", "--no-ext-diff", "--no-textconv", old, new)
    pairs, cur = {}, None
    for raw in out.decode("utf-8", "replace").split("\n"):
        if raw.startswith("diff --git "):
            cur = {"from": None, "to": None, "hunks": []}
        elif cur is None:
            continue
        elif raw.startswith("--- "):
            cur["from"] = None if raw == "--- /dev/null" else raw[6:]
        elif raw.startswith("+++ "):
            cur["to"] = None if raw == "+++ /dev/null" else raw[6:]
            if cur["from"]:
                pairs[cur["from"]] = (cur["to"], cur["hunks"])
        elif raw.startswith("rename from "):
            cur["from"] = raw[len("rename from "):]
        elif raw.startswith("rename to "):
            cur["to"] = raw[len("rename to "):]
            pairs[cur["from"]] = (cur["to"], cur["hunks"])
        elif raw.startswith("@@"):
            m = HUNK.match(raw)
            if m:
                a, b, c, d = m.groups()
                cur["hunks"].append((int(a), 1 if b is None else int(b), int(c), 1 if d is None else int(d)))
    return pairs


def lines_holding(repo, commit, path, text):
    blob = git(repo, "show", f"{commit}:{path}", check=False).decode("utf-8", "replace")
    return [i + 1 for i, l in enumerate(blob.split("\n")) if text in l]


def tree_holding(repo, commit, text):
    out = git(repo, "grep", "-n", "-F", "-I", "-e", text, commit, check=False).decode("utf-8", "replace")
    hits = []
    for row in out.split("\n"):
        parts = row.split(":", 3)
        if len(parts) == 4 and text in parts[3]:
            hits.append((parts[1], int(parts[2])))
    return hits


def truth(repo, pairs, new, path, line, text):
    if path not in pairs:
        return (path, line)
    to, hunks = pairs[path]
    if to is not None:
        shift = 0
        for a, b, c, d in hunks:
            removed = range(a, a + b) if b else range(0)
            if line in removed:
                break
            if (b and a + b <= line) or (not b and a < line):
                shift += d - b
        else:
            return (to, line + shift)
        same = lines_holding(repo, new, to, text)
        if len(same) == 1:
            return (to, same[0])
    hits = tree_holding(repo, new, text)
    return hits[0] if len(hits) == 1 else None


DOC = """# Handoff — replay
head: {head}
status: replay
progress: complete

## Do not re-derive

### Decisions
- None.

### Dead ends
- None.

### Traps
- None.

## Next
1. None.

## Pointers
```text
{pointers}
```

## Unverifiable
- None.
"""



def gate(binary, doc_path, tree, count):
    """Where the gate vouches for each citation: (path, line) or None."""
    report = subprocess.run([binary, "--format", "json", doc_path, tree], capture_output=True)
    data = json.loads(report.stdout)
    if data["exit_code"] == 2:
        # A line the credential scan refuses (or another malformed one): the caller drops it.
        return [d.get("line") for d in data["diagnostics"] if d["severity"] == "error"]
    entries = (data.get("citations") or {}).get("entries") or []
    if len(entries) != count:
        raise SystemExit(f"the gate reported {len(entries)} citations of {count}: {report.stdout[:400]!r}")
    fixed = doc_path + ".fixed"
    shutil.copyfile(doc_path, fixed)
    subprocess.run([binary, "--fix", fixed, tree], capture_output=True)
    after = json.loads(subprocess.run([binary, "--format", "json", fixed, tree], capture_output=True).stdout)
    healed = (after.get("citations") or {}).get("entries") or []
    if len(healed) != count:
        healed = [None] * count
    place = lambda e: (e["resolved"], int(e["lineref"])) if e and e["verdict"] == "ok" and e["resolved"] else None
    places = []
    for e, h in zip(entries, healed):
        if e["verdict"] == "ok":
            places.append(place(e))
        elif h is not None and (h["citation"], h["lineref"]) != (e["citation"], e["lineref"]):
            places.append(place(h))
        else:
            places.append(None)
    return tuple(places)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("repo")
    ap.add_argument("binary")
    ap.add_argument("--steps", default="10,50,200,500")
    ap.add_argument("--bases", type=int, default=10)
    ap.add_argument("--per-base", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--samples", help="write each lost or wrong sample here (JSON lines)")
    args = ap.parse_args()
    repo = os.path.abspath(args.repo)
    binary = os.path.abspath(args.binary)
    history = first_parent(repo)
    scratch = tempfile.mkdtemp(prefix="replay-")
    tree = os.path.join(scratch, "tree")
    git(repo, "worktree", "add", "--detach", "-f", tree, history[0])
    log = open(args.samples, "w") if args.samples else None
    print(f"{os.path.basename(repo)}: {len(history)} first-parent commits")
    print("| commits later | sampled | git can follow | vouched | lost | wrong |")
    print("|---|---|---|---|---|---|")
    try:
        for k in [int(s) for s in args.steps.split(",")]:
            if k >= len(history):
                print(f"| {k} | (history has {len(history)} commits) | | | | |")
                continue
            rng = random.Random(args.seed * 1000 + k)
            last = len(history) - 1 - k
            bases = sorted({round(i * last / max(args.bases - 1, 1)) for i in range(args.bases)})
            n = follow = vouched = lost = wrong = 0
            for b in bases:
                old, new = history[b], history[b + k]
                cites = sample(repo, old, args.per_base, rng)
                if not cites:
                    continue
                git(repo, "-C", tree, "checkout", "-q", "--detach", "-f", new)
                doc = os.path.join(scratch, "handoff.md")
                pointers = "\n".join(f"{p}:{l} | {t}" for p, l, t in cites)
                first = DOC.split("\n").index("{pointers}") + 1
                for _ in range(3):
                    open(doc, "w", encoding="utf-8").write(DOC.format(head=old, pointers=pointers))
                    places = gate(binary, doc, tree, len(cites))
                    if isinstance(places, tuple):
                        break
                    cites = [c for i, c in enumerate(cites) if first + i not in places]
                    pointers = "\n".join(f"{p}:{l} | {t}" for p, l, t in cites)
                else:
                    raise SystemExit("the gate calls the replay's handoff malformed")
                pairs = diff_map(repo, old, new)
                for (p, l, t), place in zip(cites, places):
                    real = truth(repo, pairs, new, p, l, t)
                    n += 1
                    follow += real is not None
                    if place is None:
                        kind = "lost" if real is not None else None
                    else:
                        kind = None if place == real else "wrong"
                    vouched += place is not None and place == real
                    lost += kind == "lost"
                    wrong += kind == "wrong"
                    if kind and log:
                        log.write(json.dumps({"kind": kind, "old": old, "new": new, "cited": [p, l],
                                              "text": t, "truth": real, "gate": place}) + "\n")
            pct = lambda x: f"{100 * x / n:.1f} %" if n else "-"
            print(f"| {k} | {n} | {pct(follow)} | {pct(vouched)} | {pct(lost)} | {pct(wrong)} |")
            sys.stdout.flush()
    finally:
        git(repo, "worktree", "remove", "--force", tree, check=False)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
