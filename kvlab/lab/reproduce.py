"""The published benchmarks, as functions the notebooks call.

Each function runs one seed's experiment at a given scale on the engines asked
for and returns tidy pandas frames in the seed's own columns, so a notebook
stays a parameters cell plus calls.  `published(name)` loads the seed's table
from data/reference/ (shipped in the package: kvlab._resources) to show beside the measurement.
"""
from __future__ import annotations

import os
import shutil
import tempfile

from .. import _resources
from ..execution import native
from ..model import engines as engine_registry
from .api import run

# Per notebook: the scale presets.  "full" is the seed's own scale.
SCALES = {
    "read_scalability": {
        "smoke": dict(num=20_000, reads=20_000, threads=[1, 2], repeats=2),
        "default": dict(num=1_000_000, reads=1_000_000, threads=[1, 2, 4], repeats=3),
        "full": dict(num=10_000_000, reads=10_000_000, threads=[1, 2, 4, 8, 12, 16, 20, 24, 28, 32], repeats=3),
    },
    "readwhilewriting": {
        "smoke": dict(num=20_000, readers=[1, 2], duration=1.0, writes_per_second=1000),
        "default": dict(num=1_000_000, readers=[1, 2, 4], duration=10.0, writes_per_second=10_000),
        "full": dict(num=100_000_000, readers=[1, 2, 4, 8, 16, 32, 64], duration=600.0, writes_per_second=10_000),
    },
    "dbbench_suite": {
        "smoke": dict(num=10_000, reads=2_000, threads=2),
        "default": dict(num=500_000, reads=100_000, threads=2),
        "full": dict(num=50_000_000, reads=500_000, threads=32),
    },
    "transactions": {
        "smoke": dict(num=5_000, duration=0.5, max_clients=10),
        "default": dict(num=100_000, duration=3.0, max_clients=100),
        "full": dict(num=1_000_000, duration=60.0, max_clients=100),
    },
    "ycsb": {
        "smoke": dict(num=5_000, operations=4_000, clients=2, rates=[1_000, 10_000, 1_000_000_000], seconds=0.3),
        "default": dict(num=100_000, operations=100_000, clients=2,
                        rates=[1_000, 10_000, 100_000, 400_000, 1_000_000, 2_000_000, 4_000_000], seconds=2.0),
        "full": dict(num=10_000_000, operations=10_000_000, clients=2,
                     rates=[1_000, 10_000, 100_000, 200_000, 400_000, 700_000, 1_000_000, 1_500_000, 2_000_000,
                            3_000_000, 4_000_000], seconds=10.0),
    },
    "linkbench": {
        "smoke": dict(maxid1=5_001, requesters=4, intervals=3, interval_seconds=0.5, memory_limit="256M",
                      bounded_maxid1=150_001),
        "default": dict(maxid1=100_001, requesters=12, intervals=12, interval_seconds=5.0, memory_limit="384M",
                        bounded_maxid1=1_000_001),
        "full": dict(maxid1=10_000_001, requesters=12, intervals=12, interval_seconds=60.0, memory_limit="2G",
                     bounded_maxid1=30_000_001),
    },
    "quickstart": {
        "smoke": dict(num=5_000),
        "default": dict(num=200_000),
        "full": dict(num=1_000_000),
    },
}


def resolve(notebook: str, scale: str, **given) -> dict:
    """The notebook's parameters: `given` (the parameters cell) at scale "default",
    else the preset of that scale."""
    presets = SCALES[notebook]
    if scale not in presets:
        from ..errors import SpecError
        raise SpecError(f"scale {scale!r} is unknown; allowed: {', '.join(presets)}")
    return dict(given) if scale == "default" else {**given, **presets[scale]}


def built(names) -> list:
    """The engines of `names` that this kvlab has built, in order."""
    have = native.built_adapters()
    return [n for n in names if engine_registry.get(n).adapter in have]


def published(name: str):
    import pandas as pd
    path = _resources.folder("reference") / f"{name}.csv"
    return pd.read_csv(path) if path.exists() else None


def _tmpdb():
    d = tempfile.mkdtemp(prefix="kvlab-nb-")
    shutil.rmtree(d)
    return d


# --- seed 000: read scalability ----------------------------------------------------------

def read_scalability(engines, threads, num, reads, cache_size=None, seed=1, repeats=1, store=None,
                     name="read-scalability"):
    """Seed 000's thread ladder as a sweep (engine x threads, each point repeated): every point loads a fresh
    database (fillseq, the load phase) and reads it with that many threads.  Returns the Sweep; run it, then
    read_scalability_table(sweep.frame()).  Points already in `store` are not run again."""
    from .sweeps import sweep
    base = {"workload": "readrandom", "num": num, "reads": reads, "seed": seed, "interval": 0}
    if cache_size:
        base["cache_size"] = cache_size
    return sweep(name, axes={"engine": list(engines), "threads": list(threads)}, repeats=repeats, base=base,
                 store=store)


def read_scalability_table(frame):
    """The seed's columns from a read-scalability sweep's tidy frame (medians across repeats, CI95 beside)."""
    t = frame[(frame.workload == "readrandom") & (frame.phase == "run")]
    return t.rename(columns={"micros_per_op": "us_per_op"})[
        ["engine", "threads", "repeats", "us_per_op", "ops_per_sec", "ops_per_sec_ci95_lo", "ops_per_sec_ci95_hi",
         "p99_us"]].reset_index(drop=True)


def scaling_vs_published(measured, published_df):
    """Throughput relative to each engine's 1-thread figure, measured beside published."""
    import pandas as pd
    frames = []
    for label, df in (("measured", measured), ("published", published_df)):
        if df is None or df.empty:
            continue
        d = df[["engine", "threads", "ops_per_sec"]].copy()
        base = d[d.threads == 1].set_index("engine")["ops_per_sec"]
        d["speedup"] = d.apply(lambda r: r.ops_per_sec / base.get(r.engine, float("nan")), axis=1)
        d["source"] = label
        frames.append(d)
    return pd.concat(frames, ignore_index=True)


# --- seed 001: load + readwhilewriting ---------------------------------------------------

LOAD_COLUMNS = ["engine", "wall_s", "user_s", "sys_s", "cpu_pct", "db_size_kb", "process_size_kb", "total_size_kb",
                "ctx_voluntary", "ctx_involuntary"]


def _row(engine, b):
    a = b.accounting
    return {"engine": engine, "wall_s": a["wall_s"], "user_s": a["cpu_user_s"], "sys_s": a["cpu_sys_s"],
            "cpu_pct": a["cpu_pct"],
            "db_size_kb": (a.get("db_size_after_close_bytes") or a["db_size_bytes"] or 0) / 1024,
            "process_size_kb": a["process_peak_rss_bytes"] / 1024,
            "total_size_kb": (a["total_size_bytes"] or 0) / 1024,
            "ctx_voluntary": a["ctx_voluntary"], "ctx_involuntary": a["ctx_involuntary"]}


def load_and_readwhilewriting(engines, num, readers, duration, writes_per_second, seed=1):
    """Seed 001: load (fillseq) then readwhilewriting per reader count: (load table, rww table, results)."""
    import pandas as pd
    load_rows, rww_rows, results = [], [], []
    for name in engines:
        db = _tmpdb()
        try:
            b = run(name, "fillseq", num=num, db=db, seed=seed, interval=0)[0]
            results.append(b)
            load_rows.append(_row(name, b))
            for n in readers:
                r = run(name, "readwhilewriting", num=num, threads=n, duration=duration, db=db, use_existing_db=True,
                        writes_per_second=writes_per_second, seed=seed + n)
                b = r.by_workload("readwhilewriting")
                results.append(b)
                rww_rows.append({**_row(name, b), "readers": n, "writes_per_sec": b.writer["ops_per_sec"],
                                 "reads_per_sec": b.ops_per_sec, "read_p99_us": b.latency_us["p99"],
                                 "ideal_cpu_pct": 100 * (n + 1)})
        finally:
            shutil.rmtree(db, ignore_errors=True)
    return pd.DataFrame(load_rows, columns=LOAD_COLUMNS), pd.DataFrame(rww_rows), results


def rocksdb_tuning_report() -> dict:
    """Seed 001's RocksDB 'pfx' flags: which became RocksDB 7.8 options, which it no longer has."""
    from ..model.dbbench_flags import FLAGS, translate_rocksdb_flags
    flags = engine_registry.ROCKSDB_PFX_FLAGS.split()
    names = [f[2:].split("=")[0] for f in flags]
    gone = [n for n in names if FLAGS[n].kind == "gone"]
    ignored = [n for n in names if FLAGS[n].kind == "ignored"]
    return {"options_string": translate_rocksdb_flags(flags).options, "no_longer_in_rocksdb": gone,
            "not_honoured": ignored}


# --- seed 002: the db_bench suite ----------------------------------------------------------

def dbbench_suite(engines, num, reads, threads, value_size=800, compression="snappy", seed=1):
    """fillseq; fillrandom then compact; overwrite; readrandom, per engine, as seed 002 ran them."""
    import pandas as pd
    rows, results = [], []
    steps = [("fillseq", "fillseq", False), ("fillrandom", "fillrandom", False), ("compact", "compact", True),
             ("overwrite", "overwrite", True), ("readrandom", "readrandom", True)]
    for name in engines:
        db = _tmpdb()
        try:
            comp = compression if compression in engine_registry.get(name).compressions else "none"
            for test, workload, existing in steps:
                r = run(name, workload, num=num, reads=reads, threads=threads if workload == "readrandom" else 1,
                        value_size=value_size, db=db, use_existing_db=existing, seed=seed, compression=comp,
                        compression_ratio=0.5, interval=0)
                b = r.by_workload(workload)
                results.append(b)
                lat = b.latency_us
                rows.append({"engine": name, "benchmark": test, "ops_per_sec": b.ops_per_sec,
                             "micros_per_op": b.micros_per_op, "mb_per_sec": b.mb_per_sec, "p99_us": lat["p99"],
                             "p9999_us": lat["p9999"], "max_us": lat["max"],
                             "db_size_gb": (b.accounting["db_size_bytes"] or 0) / 1e9, "compression": comp})
        finally:
            shutil.rmtree(db, ignore_errors=True)
    return pd.DataFrame(rows), results


def engine_ratio(df, value="ops_per_sec", by="benchmark", base=None):
    """Each engine's figure relative to `base` (default: the first engine), per `by`."""
    engines_ = list(dict.fromkeys(df.engine))
    base = base or engines_[0]
    piv = df.pivot_table(index=by, columns="engine", values=value)
    return piv.div(piv[base], axis=0)


# --- quickstart: native loop vs Python bindings ------------------------------------------

def python_loop_baseline(num, threads=(1, 2), seed=1):
    """fillseq + readrandom through the Python bindings, in a plain Python loop with 1 and 2
    Python threads (the GIL serialises them); bindings not installed are skipped."""
    import random
    import threading
    import time

    import pandas as pd
    make_key = native.load().make_key
    rows = []
    keys = [make_key(i) for i in range(num)]
    value = b"x" * 100

    def bench(name, put, get, close):
        for t in threads:
            rng = random.Random(seed)
            order = [keys[rng.randrange(num)] for _ in range(num)]
            t0 = time.perf_counter()
            for k in keys:
                put(k, value)
            fill = num / (time.perf_counter() - t0)
            chunks = [order[i::t] for i in range(t)]
            t0 = time.perf_counter()
            ths = [threading.Thread(target=lambda c=c: [get(k) for k in c]) for c in chunks]
            for th in ths:
                th.start()
            for th in ths:
                th.join()
            read = num / (time.perf_counter() - t0)
            rows.append({"engine": name, "loop": "python", "threads": t, "fillseq_ops_per_sec": fill,
                         "readrandom_ops_per_sec": read})
        close()

    d = tempfile.mkdtemp(prefix="kvlab-py-")
    try:
        try:
            import lmdb
            env = lmdb.open(f"{d}/lmdb", map_size=1 << 32, sync=False)

            def lput(k, v):
                with env.begin(write=True) as txn:
                    txn.put(k, v)

            def lget(k):
                with env.begin() as txn:
                    return txn.get(k)
            bench("lmdb", lput, lget, env.close)
        except ImportError:
            pass
        try:
            import plyvel
            db = plyvel.DB(f"{d}/leveldb", create_if_missing=True)
            bench("leveldb", db.put, db.get, db.close)
        except ImportError:
            pass
        try:
            import rocksdict
            rdb = rocksdict.Rdict(f"{d}/rocksdb")
            bench("rocksdb", rdb.put, rdb.get, rdb.close)
        except ImportError:
            pass
        try:
            import wiredtiger  # built from its PyPI sdist by `make engines`
            os.makedirs(f"{d}/wt")
            conn = wiredtiger.wiredtiger_open(f"{d}/wt", "create,cache_size=512MB")
            conn.open_session().create("table:kv", "key_format=u,value_format=u")
            local = threading.local()  # WiredTiger sessions and cursors are per thread

            def cursor():
                if not hasattr(local, "cursor"):
                    local.cursor = conn.open_session().open_cursor("table:kv")
                return local.cursor

            def wput(k, v):
                cursor()[k] = v

            def wget(k):
                c = cursor()
                c.set_key(k)
                return c.get_value() if c.search() == 0 else None
            bench("wiredtiger-btree", wput, wget, lambda: conn.close())
        except ImportError:
            pass
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return pd.DataFrame(rows)


def native_loop(engines, num, threads=(1, 2), seed=1):
    import pandas as pd
    rows, results = [], []
    for name in engines:
        for t in threads:
            r = run(name, "fillseq,readrandom", num=num, reads=max(1, num // t), threads=t, seed=seed, interval=0)
            results += list(r)
            rows.append({"engine": name, "loop": "kvlab native", "threads": t,
                         "fillseq_ops_per_sec": r.by_workload("fillseq").ops_per_sec,
                         "readrandom_ops_per_sec": r.by_workload("readrandom").ops_per_sec})
    return pd.DataFrame(rows), results


# --- seed 003: FoundationDB's transaction tests, on the embedded engines ----------------------

SEED003_METRIC = {"fdb-write-1": "writes_per_sec", "fdb-write-10": "writes_per_sec",
                  "fdb-write-10-c100": "writes_per_sec", "fdb-read-10-c100": "reads_per_sec",
                  "fdb-90-10-c100": "ops_per_sec", "fdb-range-1000-c100": "keys_per_sec"}


def seed003(engines, num, duration, max_clients=100, sync=True, cpus=None, seed=1):
    """Seed 003's six tests (the fdb-* presets) per engine, with sync on as the seed's FDB commits:
    (table in the seed's units, results).  `max_clients` caps the seed's 100 clients (smoke scale)."""
    import pandas as pd

    from ..model.workloads.presets import PRESETS
    rows, results = [], []
    for name in engines:
        scans = engine_registry.get(name).ordered_scan
        for test, metric in SEED003_METRIC.items():
            mix = PRESETS[test]
            if not scans and "range" in test:
                continue
            clients = min(mix.run_defaults["clients"], max_clients)
            b = run(name, test, num=num, duration=duration, clients=clients, sync=sync, cpus=cpus, seed=seed,
                    interval=0)[-1]
            results.append(b)
            m = b.mix
            value = m["reads_per_sec"] + m["writes_per_sec"] if metric == "ops_per_sec" else m[metric]
            rows.append({"engine": name, "test": test, "clients": clients, "metric": metric, "value": value,
                         "mean_latency_ms": b.latency_us["mean"] / 1000, "txn_per_sec": m["txn_per_sec"]})
    return pd.DataFrame(rows), results


def seed003_shape(measured, published_df):
    """The seed's two comparisons, as ratios that mean something across machines: batching 10 writes
    per commit (fdb-write-10 / fdb-write-1) and 100 clients (fdb-write-10-c100 / fdb-write-10)."""
    import pandas as pd
    rows = []
    frames = [("FoundationDB (published)", published_df.assign(engine="fdb"))] if published_df is not None else []
    frames += [(e, measured[measured.engine == e]) for e in measured.engine.unique()]
    for label, df in frames:
        v = df.set_index("test")["value"]
        get = lambda t: float(v[t]) if t in v else float("nan")  # noqa: E731
        rows.append({"engine": label, "batching 10 per commit": get("fdb-write-10") / get("fdb-write-1"),
                     "100 clients": get("fdb-write-10-c100") / get("fdb-write-10")})
    return pd.DataFrame(rows)


def seed003_sentences(measured, published_df) -> list:
    """One sentence per test of seed 003, and one per ratio, written from the numbers: where the
    embedded engines land beside FoundationDB's published figure, and whether the page's two shapes
    (batching pays ~9x with sync on; 100 clients help) hold here."""
    import math
    pub = published_df.set_index("test") if published_df is not None else None
    out = []
    for test, rows in measured.groupby("test", sort=False):
        metric = rows["metric"].iloc[0].replace("_per_sec", "/s").replace("_", " ")
        best, worst = rows.loc[rows.value.idxmax()], rows.loc[rows.value.idxmin()]
        n = int(rows["clients"].iloc[0])
        s = (f"**{test}** ({metric}, {n} client{'s' if n != 1 else ''}): the embedded engines range from "
             f"{worst.value:,.0f} ({worst.engine}) to {best.value:,.0f} ({best.engine})")
        if pub is not None and test in pub.index:
            fdb = float(pub.loc[test, "value"])
            s += (f"; FoundationDB published {fdb:,.0f}, so {worst.value / fdb:.2g}x to {best.value / fdb:.2g}x "
                  "of it (a server over the network against a library in the process: the ratio is not a verdict)")
        out.append(s + ".")
    shape = seed003_shape(measured, published_df)
    fdb_row = shape[shape.engine.str.startswith("FoundationDB")]
    ours = shape[~shape.engine.str.startswith("FoundationDB")]
    for col, claim, threshold in (("batching 10 per commit", "pays because each commit waits for an fsync", 3.0),
                                  ("100 clients", "helps when writers can share a commit", 1.5)):
        vals = {r.engine: r[col] for _, r in ours.iterrows() if not math.isnan(r[col])}
        if not vals:
            continue
        ref = f"FoundationDB gained {float(fdb_row[col].iloc[0]):.1f}x" if len(fdb_row) else "the page's figure"
        gain = sorted((e for e, v in vals.items() if v >= threshold), key=lambda e: -vals[e])
        flat = sorted((e for e, v in vals.items() if v < threshold), key=lambda e: -vals[e])
        listing = ", ".join(f"{e} {vals[e]:.1f}x" for e in gain + flat)
        verdict = ("the same shape on every engine" if not flat else
                   "the same shape on " + ", ".join(gain) + ", not on " + ", ".join(flat) if gain else
                   "not the page's shape on any engine")
        out.append(f"**{col.capitalize()}** ({claim}): {ref}; here {listing}: {verdict} "
                   f"(a gain of {threshold:g}x or more counts).")
    return out


# --- YCSB A-F and the latency-throughput curve -----------------------------------------------

def ycsb_suite(engines, num, operations, clients, seed=1):
    """YCSB's core workloads A-F per engine (closed loop): (table, results)."""
    import pandas as pd
    rows, results = [], []
    for name in engines:
        for w in "abcdef":
            if w == "e" and not engine_registry.get(name).ordered_scan:
                continue
            b = run(name, f"ycsb-{w}", num=num, reads=max(1, operations // clients), clients=clients, seed=seed,
                    interval=0)[-1]
            results.append(b)
            rows.append({"engine": name, "workload": f"YCSB-{w.upper()}", "txn_per_sec": b.mix["txn_per_sec"],
                         "p50_us": b.latency_us["p50"], "p99_us": b.latency_us["p99"]})
    return pd.DataFrame(rows), results


def latency_throughput(engine, rates, seconds, clients, num, workload="ycsb-c", seed=1):
    """An open-loop rate ladder: per target rate, the achieved rate, service time (from the actual
    start) and response time (from the intended start): (table, results)."""
    import pandas as pd
    rows, results = [], []
    for rate in rates:
        reads = max(1, min(int(rate * seconds / clients), 50_000_000))
        b = run(engine, workload, num=num, reads=reads, clients=clients, target_rate=float(rate), seed=seed,
                interval=0)[-1]
        results.append(b)
        p, resp = b.mix["pacing"], b.latency_by_op["response"]
        rows.append({"engine": engine, "target_rate": rate, "achieved_rate": p["achieved_rate"],
                     "achieved_ratio": p["achieved_ratio"], "lag_p50_us": p["start_lag_us"]["p50"],
                     "service_p50_us": b.latency_us["p50"], "service_p99_us": b.latency_us["p99"],
                     "response_p50_us": resp["p50"], "response_p99_us": resp["p99"]})
    return pd.DataFrame(rows), results


# --- seed 004: LinkBench, cached and larger than RAM ------------------------------------------

SEED004_OPS = ("add_link", "update_link", "get_links_list")


def seed004(engines, maxid1, requesters, intervals, interval_seconds, memory_limit=None, loaders=2, seed=1):
    """LinkBench on each engine: a load, then `intervals` x `interval_seconds` of requests; cached (no limit)
    or in a memory cgroup of `memory_limit` (larger than RAM when the database outgrows it).  Returns
    (qps per interval, per-operation latency, I/O per query, results)."""
    import pandas as pd

    from ..execution.linkbench import run_linkbench
    from ..model.workloads.linkbench import LinkBench
    setting = "cached" if memory_limit is None else "larger_than_ram"
    if memory_limit is not None:
        from ..execution.cgroup import parse_size, unavailable
        why = unavailable(parse_size(memory_limit))
        if why:   # say so, never run unbounded under that name
            print(f"larger than RAM is not measured here: {why}")
            empty = pd.DataFrame(columns=["setting", "engine"])
            return empty, pd.DataFrame(columns=["setting", "engine", "operation"]), empty, []
    lb = LinkBench(maxid1=maxid1, requesters=requesters, loaders=loaders, intervals=intervals,
                   interval_seconds=interval_seconds, seed=seed)
    qps, lat, io, results = [], [], [], []
    for engine in engines:
        db = _tmpdb()
        try:
            load = run_linkbench(engine, lb, "load", db=db)[0]
            req = run_linkbench(engine, lb, "request", db=db, memory_limit=memory_limit)[-1]
        finally:
            shutil.rmtree(db, ignore_errors=True)
        results += [load, req]
        for i, iv in enumerate([iv for iv in req.intervals if iv["seconds"] > 0.5 * interval_seconds], 1):
            qps.append({"setting": setting, "engine": engine, "interval": i,
                        "qps": iv["workers"]["ops_per_sec"].get("txn", 0.0)})
        for op, t in req.mix["templates"].items():
            l = t["latency_us"]
            lat.append({"setting": setting, "engine": engine, "operation": op, "count": t["count"],
                        **{k: (l[k] / 1000 if l[k] is not None else None) for k in ("mean", "p50", "p95", "p99", "p999", "max")}})
        a = req.accounting
        io.append({"setting": setting, "engine": engine, "qps": req.mix["txn_per_sec"],
                   "reads_per_query": a.get("disk_reads_per_op"), "kb_read_per_query": a.get("disk_kb_read_per_op"),
                   "kb_written_per_query": a.get("disk_kb_written_per_op"), "db_size_mib": (a.get("db_size_bytes") or 0) / 2**20,
                   "load_s": load.seconds, "cgroup_peak_mib": (a.get("cgroup_peak_bytes") or 0) / 2**20 or None})
    return pd.DataFrame(qps), pd.DataFrame(lat), pd.DataFrame(io), results


def seed004_latency_table(lat, published_df, setting):
    """The seed's latency table (mean ms of add_link, update_link, get_links_list) beside ours, each row
    also normalised to wiredtiger-btree (absolute times across machines mean little)."""
    import pandas as pd
    ours = lat[(lat.setting == setting) & lat.operation.isin(SEED004_OPS)].pivot(index="engine", columns="operation",
                                                                                 values="mean")[list(SEED004_OPS)]
    pub = published_df[published_df.setting == setting].pivot(index="engine_published", columns="operation",
                                                               values="mean_ms")[list(SEED004_OPS)]
    out = pd.concat({"measured": ours, "published": pub})
    for name, frame, base in (("measured / wiredtiger-btree", ours, "wiredtiger-btree"),
                              ("published / wiredtiger", pub, "wiredtiger")):
        if base in frame.index:
            out = pd.concat([out, pd.concat({name: frame / frame.loc[base]})])
    return out


def seed004_ratios(qps, lat, io, pub_qps, pub_lat, pub_io) -> "pd.DataFrame":  # noqa: F821  (pandas is imported inside)
    """The seed's claims as ratios between RocksDB and WiredTiger (btree), published beside measured."""
    import pandas as pd
    rows = []

    def ratio(df, value, a="rocksdb", b="wiredtiger-btree", **where):
        d = df
        for k, v in where.items():
            d = d[d[k] == v]
        x = d[d.engine == a][value].mean()
        y = d[d.engine == b][value].mean()
        return x / y if y else float("nan")
    for setting in ("cached", "larger_than_ram"):
        last = pub_qps[pub_qps.interval == 12]
        rows.append({"claim": f"QPS rocksdb / wiredtiger, {setting}",
                     "published": ratio(last, "qps", setting=setting),
                     "measured": ratio(qps, "qps", setting=setting) if (qps.setting == setting).any() else None})
        for op in SEED004_OPS:
            rows.append({"claim": f"{op} mean latency rocksdb / wiredtiger, {setting}",
                         "published": ratio(pub_lat.rename(columns={"mean_ms": "mean"}), "mean", setting=setting, operation=op),
                         "measured": ratio(lat, "mean", setting=setting, operation=op) if (lat.setting == setting).any() else None})
    for col in ("reads_per_query", "kb_read_per_query", "kb_written_per_query"):
        rows.append({"claim": f"{col} rocksdb / wiredtiger, larger_than_ram",
                     "published": ratio(pub_io, col),
                     "measured": ratio(io, col, setting="larger_than_ram") if (io.setting == "larger_than_ram").any() else None})
    return pd.DataFrame(rows)


def seed004_sentences(ratios) -> list:
    """One sentence per claim: does the measured ratio point the same way as the published one?"""
    out = []
    for r in ratios.itertuples():
        if r.measured is None or r.measured != r.measured or r.published != r.published:
            out.append(f"- **{r.claim}**: published {r.published:.2f}; not measured here.")
            continue
        if abs(r.published - 1) <= 0.1:   # the seed found no difference worth a direction
            near = abs(r.measured - 1) <= 0.1
            out.append(f"- **{r.claim}**: published {r.published:.2f}, measured {r.measured:.2f}: the seed found the two "
                       f"about equal (within 10%); {'so do we' if near else 'here they differ'}.")
            continue
        same = (r.measured > 1) == (r.published > 1)
        out.append(f"- **{r.claim}**: published {r.published:.2f}, measured {r.measured:.2f}: the shape "
                   f"{'agrees' if same else 'does not agree'} (RocksDB {'higher' if r.published > 1 else 'lower'} than "
                   f"WiredTiger in the seed{'' if same else ', the other way round here'}).")
    return out
