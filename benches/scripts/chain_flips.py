# A chain of N commits of one text whose progress flips (complete, consumed, ...), as a read
# after every write leaves it: with `since:` naming the first commit (what the recorder writes
# since issue 49) or without it (a chain recorded before, or a remote's).
import subprocess, sys
repo = sys.argv[1]; n = int(sys.argv[2]); doc = open(sys.argv[3], 'rb').read(); with_since = sys.argv[4] == "since"
consumed = doc.replace(b"progress: complete", b"progress: consumed")
older = doc.replace(b"status: ", b"status: older ")
out = []
def blob(mark, data):
    out.append(b"blob\nmark :%d\ndata %d\n" % (mark, len(data)) + data + b"\n")
blob(1, doc); blob(2, consumed); blob(3, older)
t = 1764800000
first = None
for i in range(1, n + 1):
    d = 3 if i == 1 else (1 if i % 2 == 0 else 2)
    seq = 1 if i == 1 else 2
    meta = b"written-at: %d\nbranch: main\nhost: h\nseq: %d\n" % (t, seq)
    if with_since and i > 2:
        meta += b"since: " + b"S" * 40 + b"\n"
    c = b"commit refs/handoffs/main\nmark :%d\ncommitter a <a@b> %d +0000\ndata 2\nv\n" % (i + 10, t + i)
    if i > 1: c += b"from :%d\n" % (i + 9)
    c += b"M 100644 :%d handoff.md\nM 100644 inline meta\ndata %d\n" % (d, len(meta)) + meta + b"\n"
    out.append(c)
data = b"".join(out)
if with_since:
    # The text's first commit (mark :12) is known only after import: import up to it first.
    cut = b"commit refs/handoffs/main\nmark :13\n"
    head, rest = data.split(cut)
    marks = repo + "/.git/bench-marks"
    subprocess.run(["git", "fast-import", "--quiet", "--force", "--export-marks=" + marks], cwd=repo, input=head, check=True)
    second = [l.split()[1] for l in open(marks) if l.startswith(":12 ")][0].encode()
    rest = cut + rest.replace(b"S" * 40, second)
    subprocess.run(["git", "fast-import", "--quiet", "--force", "--import-marks=" + marks], cwd=repo, input=rest, check=True)
else:
    subprocess.run(["git", "fast-import", "--quiet", "--force"], cwd=repo, input=data, check=True)
