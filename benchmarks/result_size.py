"""Size and append time of a stored result now that it keeps its whole latency histograms (target: at most
32 KB per db_bench result in the store on average, an append at most 50 ms).

Runs fillseq, readrandom and ycsb-a on LMDB (1 and 2 threads), then for each result prints the record as the
store keeps it (the `record` JSON column, before DuckDB compresses it: the figure held to the target), the
part of it that is histograms, and the median time of `Store.append` of that one result into a store of
`--copies` results.  Beside it, the same result with its histograms dropped (what a kvlab.result/5 record
held), measured in the same invocation: the difference is what keeping the distributions costs.  The
blocks DuckDB used per result after the appends (compressed; counted in 256 KB blocks, so it resolves only
a few KB per result at the default number of appends) are printed too.

    python benchmarks/result_size.py [--num 1000000] [--reads 1000000] [--copies 60]
"""
import argparse
import dataclasses
import json
import os
import tempfile
import time
from pathlib import Path

from _common import kvlab, median

from kvlab.results.result import RunResult, _jsonable
from kvlab.store import Store

SIZE_TARGET, APPEND_TARGET = 32 * 1024, 0.050


def stored_bytes(b) -> int:
    return len(json.dumps(b.to_dict(), default=_jsonable))   # as Store.append writes the record column


def used_bytes(store) -> int:
    row = store.query("SELECT used_blocks, block_size FROM pragma_database_size()").iloc[0]
    return int(row["used_blocks"]) * int(row["block_size"])


def measure(results, copies: int, folder: Path, tag: str) -> dict:
    """Append each result `copies` times, one append per result, into a fresh store: append times and the
    file's growth per result."""
    store = Store(folder / f"{tag}.duckdb")
    store.check()
    before = used_bytes(store)
    times = []
    for _ in range(copies):
        for b in results:
            t0 = time.perf_counter()
            store.append(RunResult([b]))
            times.append(time.perf_counter() - t0)
    growth = (used_bytes(store) - before) / (copies * len(results))
    return {"append_s": median(times), "append_p90_s": sorted(times)[int(0.9 * len(times))], "growth": growth}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--num", type=int, default=1_000_000)
    ap.add_argument("--reads", type=int, default=1_000_000, help="per thread (readrandom), operations (ycsb-a)")
    ap.add_argument("--copies", type=int, default=60, help="appends of each result per store")
    args = ap.parse_args()
    results = []
    for threads in (1, 2):
        r = kvlab.run("lmdb", "fillseq,readrandom", num=args.num, reads=args.reads, threads=threads, seed=1)
        results += [b for b in r if b.phase == "run"]
        r = kvlab.run("lmdb", "ycsb-a", num=args.num, reads=args.reads, threads=threads, seed=1)
        results += [b for b in r if b.phase == "run"]
    bare = [dataclasses.replace(b, histograms=None) for b in results]
    with tempfile.TemporaryDirectory(prefix="kvlab-result-size-", dir=os.environ.get("KVLAB_TMPDIR")) as tmp:
        kept = measure(results, args.copies, Path(tmp), "with")
        without = measure(bare, args.copies, Path(tmp), "without")
    print(f"LMDB, num={args.num:,}, reads={args.reads:,}; {args.copies} appends of each result per store\n")
    print(f"{'workload':<12} {'threads':>7} {'record':>9} {'histograms':>10} {'without':>9}")
    for b, nb in zip(results, bare):
        hist = len(json.dumps(b.histograms))
        print(f"{b.workload:<12} {b.threads:>7} {stored_bytes(b) / 1024:>7.1f}KB {hist / 1024:>8.1f}KB "
              f"{stored_bytes(nb) / 1024:>7.1f}KB")
    avg = sum(map(stored_bytes, results)) / len(results)
    avg_bare = sum(map(stored_bytes, bare)) / len(bare)
    print(f"\naverage record: {avg / 1024:.1f} KB with histograms, {avg_bare / 1024:.1f} KB without "
          f"(target <= {SIZE_TARGET // 1024} KB: {'met' if avg <= SIZE_TARGET else 'MISSED'})")
    print(f"DuckDB blocks used per result (compressed, 256 KB granularity): {kept['growth'] / 1024:.1f} KB with "
          f"histograms, {without['growth'] / 1024:.1f} KB without")
    print(f"append of one result: median {kept['append_s'] * 1e3:.1f} ms (p90 {kept['append_p90_s'] * 1e3:.1f} ms) "
          f"with histograms, {without['append_s'] * 1e3:.1f} ms without "
          f"(target <= {APPEND_TARGET * 1e3:.0f} ms: {'met' if kept['append_s'] <= APPEND_TARGET else 'MISSED'})")


if __name__ == "__main__":
    main()
