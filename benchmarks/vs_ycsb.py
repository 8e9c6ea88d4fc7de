"""kvlab's generic loop on the null engine against YCSB 0.17.0's own Java client on its null store
(site.ycsb.BasicDB), the same core workload properties, 1 client thread each, alternating rounds.

Both sides do no storage work, so the ratio is the harness: YCSB's CoreWorkload, generators and
measurements against kvlab's native loop.  YCSB's client comes from Maven Central (site.ycsb:core:0.17.0
with HdrHistogram 2.1.4, jackson-*-asl 1.9.4 and htrace-core4 4.1.0-incubating; the script fetches them
with `mvn dependency:get`).  YCSB's figure is its [OVERALL] Throughput; its run time includes the JVM's
warm-up, which a large operation count amortises.  kvlab's figure is the run's transactions / wall seconds.

    python benchmarks/vs_ycsb.py [--operations 5000000] [--rounds 3] [--workloads a,b,c,d,e,f] [--client go]

Target (issue "Workloads as data"): kvlab at least 5x YCSB's client on every workload.

`--client go`: PingCAP's go-ycsb (v1.0.3, from the Go module proxy: benchmarks/goycsb, its go.mod and go.sum
committed, built here with `go build -mod=readonly`) instead of the Java client, on go-ycsb's basic DB (verbose off,
no delay), the same properties; its figure is the operation count over its client's run.  The target there (issue
"engines, part two"): kvlab's harness at least as fast as go-ycsb's.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
from pathlib import Path

from _common import kvlab

from kvlab.model.workloads import presets

ARTIFACTS = ("site.ycsb:core:0.17.0", "org.hdrhistogram:HdrHistogram:2.1.4",
             "org.codehaus.jackson:jackson-core-asl:1.9.4", "org.codehaus.jackson:jackson-mapper-asl:1.9.4",
             "org.apache.htrace:htrace-core4:4.1.0-incubating")


def classpath() -> str:
    if not shutil.which("mvn") or not shutil.which("java"):
        raise SystemExit("needs java and mvn (Maven Central has YCSB's client)")
    repo = Path.home() / ".m2" / "repository"
    jars = []
    for art in ARTIFACTS:
        group, name, version = art.split(":")
        jar = repo / group.replace(".", "/") / name / version / f"{name}-{version}.jar"
        if not jar.exists():
            subprocess.run(["mvn", "-q", "dependency:get", f"-Dartifact={art}"], check=True)
        jars.append(str(jar))
    return ":".join(jars)


def ycsb_props(workload: str, records: int, operations: int) -> dict:
    _, props = presets.YCSB[workload]
    return {**props, "recordcount": str(records), "operationcount": str(operations)}


def run_ycsb(cp, props) -> float:
    args = ["java", "-cp", cp, "site.ycsb.Client", "-t", "-db", "site.ycsb.BasicDB", "-threads", "1",
            "-p", "workload=site.ycsb.workloads.CoreWorkload", "-p", "basicdb.verbose=false"]
    for k, v in props.items():
        args += ["-p", f"{k}={v}"]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return float(re.search(r"\[OVERALL\], Throughput\(ops/sec\), ([\d.]+)", out).group(1))


GOYCSB = Path(__file__).resolve().parent / "goycsb"


def build_goycsb() -> Path:
    if not shutil.which("go"):
        raise SystemExit("--client go needs Go 1.24 or newer (go-ycsb comes from the Go module proxy)")
    out = Path(__file__).resolve().parents[1] / "build" / "goycsb"
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["go", "build", "-trimpath", "-o", str(out), "."], cwd=GOYCSB, check=True,
                   env={**os.environ, "GOFLAGS": "-mod=readonly", "GOTOOLCHAIN": "local"})
    return out


def run_goycsb(binary, props) -> float:
    args = [str(binary)]
    for k, v in props.items():
        args += ["-p", f"{k}={v}"]
    out = subprocess.run(args + ["-p", "threadcount=1"], capture_output=True, text=True, check=True).stdout
    return float(re.search(r"^THROUGHPUT ([\d.]+)$", out, re.M).group(1))


def run_kvlab(workload, records, operations) -> float:
    b = kvlab.run("null", workload, num=records, reads=operations, threads=1, seed=1, interval=0)[-1]
    return b.mix["txn_per_sec"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--operations", type=int, default=5_000_000)
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workloads", default="a,b,c,d,e,f")
    ap.add_argument("--client", choices=("java", "go"), default="java",
                    help="YCSB 0.17.0's Java client (default) or PingCAP's go-ycsb")
    args = ap.parse_args()
    if args.client == "go":
        binary = build_goycsb()
        theirs_name = "go-ycsb 1.0.3 ops/s"

        def run_theirs(props):
            return run_goycsb(binary, props)
    else:
        cp = classpath()
        theirs_name = "YCSB 0.17.0 ops/s"

        def run_theirs(props):
            return run_ycsb(cp, props)
    print(f"null stores, 1 client, {args.operations:,} operations over {args.records:,} records, "
          f"{args.rounds} rounds (median, range)")
    print(f"{'workload':<9} {theirs_name:>20} {'kvlab ops/s':>14} {'ratio':>7} {'range':>13}")
    for w in args.workloads.split(","):
        name = f"ycsb-{w.strip()}"
        props = ycsb_props(name, args.records, args.operations)
        ours, theirs, ratios = [], [], []
        for r in range(args.rounds):
            if r % 2 == 0:
                a, b = run_theirs(props), run_kvlab(name, args.records, args.operations)
            else:
                b, a = run_kvlab(name, args.records, args.operations), run_theirs(props)
            theirs.append(a)
            ours.append(b)
            ratios.append(b / a)
        print(f"{name:<9} {statistics.median(theirs):>20,.0f} {statistics.median(ours):>14,.0f} "
              f"{statistics.median(ratios):>6.1f}x {min(ratios):>5.1f}-{max(ratios):.1f}x")


if __name__ == "__main__":
    main()
