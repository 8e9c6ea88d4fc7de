#!/usr/bin/env bash
# Seed 002's write-heavy sequence at 10M x 800 B on every built engine: fillrandom, overwrite, readrandom
# in one run per engine, 1 s intervals (engine events on), stored under one tag.  Prints each engine's
# write, read and space amplification per phase at the end (kvlab results list).  Several hours on a
# 2-core VM and ~12 GB of free disk per engine at once (each engine's database is removed after its run).
#   scripts/seed002_amplification.sh [OUT_DIR] [NUM] [READS]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-results/seed002-amplification}"
num="${2:-10000000}"
reads="${3:-2000000}"
engines="${ENGINES:-rocksdb lmdb leveldb rocksdb-tuned wiredtiger-btree wiredtiger-lsm bdb}"
mkdir -p "$out"
store="$out/store.duckdb"
for e in $engines; do
    db="$(mktemp -d "${TMPDIR:-/tmp}/kvlab-amp-$e-XXXXXX")/db"
    echo "== $e  ($(date -u +%H:%M:%S))"
    /usr/bin/time -v .venv/bin/kvlab run --engine "$e" --workload fillrandom,overwrite,readrandom \
        --num "$num" --value-size 800 --reads "$reads" --interval 1 --db "$db" \
        --json "$out/$e.json" --store "$store" --tag "seed002-amp-$num" 2> "$out/$e.time" \
        | tee "$out/$e.txt" || echo "!! $e failed (see $out/$e.time)"
    du -sb "$db" >> "$out/$e.txt" 2>/dev/null || true
    rm -rf "$(dirname "$db")"
done
.venv/bin/kvlab results list --store "$store" --tag "seed002-amp-$num" | tee "$out/summary.txt"
