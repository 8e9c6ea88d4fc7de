"""kvlab's own memory as num grows: keys and values are made in C, so the harness's
anonymous memory (RssAnon: excludes LMDB's file-backed map) should stay flat.

Each size runs in a fresh process; a sampler thread records peak RssAnon during the run.

    python benchmarks/memory.py [--engine lmdb] [--sizes 10000,100000,1000000]
"""
import argparse
import json
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, sys, threading, time
sys.path.insert(0, {root!r})
import kvlab
def anon():
    for line in open('/proc/self/status'):
        if line.startswith('RssAnon:'):
            return int(line.split()[1])
base = anon(); peak = [base]; done = []
def sample():
    while not done:
        peak[0] = max(peak[0], anon()); time.sleep(0.005)
t = threading.Thread(target=sample); t.start()
r = kvlab.run({engine!r}, 'fillseq,readrandom', num={num}, seed=1)
done.append(1); t.join()
print(json.dumps({{'base_kib': base, 'peak_kib': peak[0], 'ops': sum(b.ops for b in r)}}))
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default="lmdb")
    ap.add_argument("--sizes", default="10000,100000,1000000")
    args = ap.parse_args()
    root = str(Path(__file__).resolve().parent.parent)
    print(f"harness memory ({args.engine}, fillseq+readrandom): peak RssAnon above the process baseline")
    rows = []
    for num in map(int, args.sizes.split(",")):
        out = subprocess.run([sys.executable, "-c", CHILD.format(root=root, engine=args.engine, num=num)],
                             check=True, capture_output=True, text=True)
        d = json.loads(out.stdout.strip().splitlines()[-1])
        growth = (d["peak_kib"] - d["base_kib"]) / 1024
        rows.append(growth)
        print(f"  num={num:>9,}: +{growth:7.1f} MiB")
    print(f"  spread across sizes: {max(rows) - min(rows):.1f} MiB for a "
          f"{int(args.sizes.split(',')[-1]) // int(args.sizes.split(',')[0])}x larger num")


if __name__ == "__main__":
    main()
