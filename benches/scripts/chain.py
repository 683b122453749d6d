import subprocess, sys, os, time
repo=sys.argv[1]; n=int(sys.argv[2])
doc=open(sys.argv[3],'rb').read()
# A fourth argument `legacy`: commits without `seq:`, as recorded before versions carried it.
legacy=len(sys.argv)>4 and sys.argv[4]=="legacy"
doc2=doc.replace(b"status: ", b"status: older ")
out=[]
def blob(mark,data):
    out.append(b"blob\nmark :%d\ndata %d\n" % (mark,len(data))+data+b"\n")
blob(1,doc); blob(2,doc2)
t=1764800000
for i in range(1,n+1):
    meta=b"written-at: %d\nbranch: main\nhost: h\n" % (t+i)
    if not legacy: meta+=b"seq: %d\n" % i
    d=1 if i==n else 2
    c=b"commit refs/handoffs/main\nmark :%d\ncommitter a <a@b> %d +0000\ndata 2\nv\n" % (i+10,t+i)
    if i>1: c+=b"from :%d\n" % (i+9)
    c+=b"M 100644 :%d handoff.md\nM 100644 inline meta\ndata %d\n" % (d,len(meta))+meta+b"\n"
    out.append(c)
p=subprocess.run(["git","fast-import","--quiet","--force"],cwd=repo,input=b"".join(out))
print("imported", p.returncode)
