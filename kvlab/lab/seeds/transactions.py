"""Seed 003: FoundationDB's six transaction tests (the fdb-* presets) on the embedded engines, and the
sentences written from their numbers (notebook 04_transactions)."""
from __future__ import annotations

from ...model import engines as engine_registry
from ..api import run

SEED003_METRIC = {"fdb-write-1": "writes_per_sec", "fdb-write-10": "writes_per_sec",
                  "fdb-write-10-c100": "writes_per_sec", "fdb-read-10-c100": "reads_per_sec",
                  "fdb-90-10-c100": "ops_per_sec", "fdb-range-1000-c100": "keys_per_sec"}


def seed003(engines, num, duration, max_clients=100, sync=True, cpus=None, seed=1):
    """Seed 003's six tests (the fdb-* presets) per engine, with sync on as the seed's FDB commits:
    (table in the seed's units, results).  `max_clients` caps the seed's 100 clients (smoke scale)."""
    import pandas as pd

    from ...model.workloads.presets import PRESETS
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
