"""The seeds' claims in a report: where the store holds verdict tables (kvlab reproduce, a notebook's verdicts
call) whose runs are among the report's, each table as `kvlab reproduce` prints it, with when, the scale, the
budget and kvlab's version; and where those runs are seed 001's, its readwhilewriting table in full, the
published row beside the measured one per engine and reader count (kvlab.lab.seeds.readwhilewriting)."""
from __future__ import annotations

import json

from ...results.formatting import missing, num
from ...results.store import Store
from ..seeds import claims as seed_claims
from ..seeds.common import published
from ..seeds.readwhilewriting import SEED001_COLUMNS, readwhilewriting_table, tables_of
from .text import e

_VERDICT_CSS = {"reproduced": "good", "not reproduced": "bad", "cannot test here": "same"}
_SEED001_HEADS = {"wall_s": "run time s", "cpu_pct": "CPU %", "user_s": "user s", "sys_s": "sys s",
                  "db_size_kb": "DB KB", "process_size_kb": "process KB", "total_size_kb": "total KB",
                  "ctx_voluntary": "ctx vol", "ctx_involuntary": "ctx invol", "writes_per_sec": "writes/s",
                  "reads_per_sec": "reads/s"}


def stored_verdicts(store: Store, entries):
    """The stored verdict rows whose runs include one of the report's stored runs (an empty frame where none)."""
    runs = sorted({en.run for en in entries if not en.run.startswith("in hand")})
    if not runs or not store.path.exists():
        return None
    found = store.verdicts(run_ids=runs)
    return None if found.empty else found


def section(verdicts, entries) -> str:
    """The report's section on the seeds' claims, or '' where the store holds none for these runs."""
    if verdicts is None:
        return ""
    parts = ["<section id=\"claims\">", "<h2>The seeds' claims</h2>",
             "<p class=\"legend\">Verdicts stored with these runs: each claim of the seed (data/reference/claims.toml) "
             "tested on what the runs measured, as <code>kvlab reproduce</code> prints it: reproduced, not reproduced, "
             "or cannot test here, with the reason.</p>"]
    for rid, rows in verdicts.groupby("reproduction", sort=False):
        first = rows.iloc[0]
        setup = json.loads(first.setup) if isinstance(first.setup, str) else (first.setup or {})
        budget = setup.get("memory") or "engine defaults"
        parts.append(f"<h3>Seed {e(first.seed)}{' at scale ' + e(first.scale) if not missing(first.scale) else ''}"
                     f"</h3>\n<p class=\"runline\">stored {e(str(first.stored_at)[:19])} by kvlab "
                     f"{e(first.kvlab_version)} ({e(rid)}); engines {e(', '.join(first.engines) or '-')}; memory "
                     f"{e(budget)}; {e(seed_claims.counts(rows))}</p>")
        parts.append(_table(rows))
        if first.seed == "001":
            parts.append(_seed001(entries, set(first.run_ids)))
    parts.append("</section>")
    return "\n".join(parts)


def _table(rows) -> str:
    head = "".join(f"<th class=\"l\" scope=\"col\">{h}</th>" for h in seed_claims.logic.COLUMNS)
    body = []
    for r in rows.itertuples():
        css = _VERDICT_CSS.get(r.verdict, "same")
        cells = [e(r.claim), e(r.statement), e(r.published), e(r.measured),
                 f"<span class=\"verdict {css}\">{e(r.verdict)}</span>", e(r.reason)]
        body.append("<tr>" + "".join(f"<td class=\"l\">{c}</td>" for c in cells) + "</tr>")
    return (f"<div class=\"scroll\"><table class=\"data claims\"><thead><tr>{head}</tr></thead><tbody>"
            + "".join(body) + "</tbody></table></div>")


def _seed001(entries, runs) -> str:
    """Seed 001's readwhilewriting table in full from the report's benchmarks of those runs."""
    _, rww = tables_of([en.b for en in entries if en.run in runs])
    if rww.empty:
        return ""
    table = readwhilewriting_table(rww, published("seed001_readwhilewriting")).reset_index()
    head = "".join(f"<th class=\"{'l' if c in ('engine', 'source') else 'r'}\" scope=\"col\">{e(h)}</th>"
                   for c, h in [("engine", "engine"), ("readers", "readers"), ("source", "source")]
                   + [(c, _SEED001_HEADS[c]) for c in SEED001_COLUMNS])
    body = []
    for r in table.to_dict("records"):
        cells = [f"<td class=\"l\">{e(r['engine'])}</td>", f"<td class=\"r\">{num(r['readers'])}</td>",
                 f"<td class=\"l\">{e(r['source'])}</td>"]
        cells += [f"<td class=\"r\">{num(r[c])}</td>" for c in SEED001_COLUMNS]
        body.append("<tr>" + "".join(cells) + "</tr>")
    return ("<h4>Seed 001's readwhilewriting table: published beside measured</h4>\n"
            f"<div class=\"scroll\"><table class=\"data\"><thead><tr>{head}</tr></thead><tbody>" + "".join(body)
            + "</tbody></table></div>\n<p class=\"legend\">Per engine and reader count (one writer beside them): "
              "run time (wall seconds), CPU % (user + system over wall), user and system CPU seconds, the DB's size "
              "after close, the process's peak size and the total (DB + process; LMDB's: the process, its map "
              "included) in KB, voluntary and involuntary context switches, the writer's and the readers' rates "
              "(ops/s). The published rows are the seed's (100M keys, 10 minutes a run, 64 cores).</p>")
