"""The published benchmarks, as functions the notebooks call.

Each function runs one seed's experiment at a given scale on the engines asked
for and returns tidy pandas frames in the seed's own columns, so a notebook
stays a parameters cell plus calls.  `published(name)` loads the seed's table
from data/reference/ (shipped in the package: kvlab._resources) to show beside the measurement.

The experiments live one seed a module in kvlab/lab/seeds/ (its docstring lists them); this module is the
one name the notebooks import, and re-exports them.  Each takes `memory=` (a size, or None for the engines'
defaults), the budget every run it makes gets; `budget_line(memory, engines, given=given(seed, p))` is the line a notebook prints
about it near the top (with the settings the seed's runs give over the budget), and `verdicts(seed, measured, p, results=..., store=...)` the verdict table its last cell shows
(kvlab.lab.seeds.claims: the same table `kvlab reproduce` prints, stored with the runs behind it where given a
store).  Which engines a notebook runs and leaves out, and the engines a figure has no bar for, each with why, are
kvlab.lab.coverage's, re-exported here too (`chosen`, `engines_text`, `python_loop_note`).
"""
from __future__ import annotations

from .coverage import chosen, engines_text, every_built, python_loop_gaps, python_loop_note
from .seeds.claims import given, setup_of, verdicts
from .seeds.common import MEMORY, SCALES, budget_line, built, published, resolve
from .seeds.dbbench_suite import dbbench_suite, dbbench_timelines, engine_ratio
from .seeds.durability import durability
from .seeds.field import (
    curves_frame,
    mixgraph_queries,
    same_ops,
    sla_curves,
    sla_searches,
    trace_replay,
    varying_rate,
)
from .seeds.linkbench import (
    SEED004_OPS,
    linkbench_timeline,
    seed004,
    seed004_latency_table,
    seed004_ratios,
    seed004_sentences,
)
from .seeds.lsm_family import FAMILY, lsm_family, lsm_family_table
from .seeds.quickstart import native_loop, python_loop_baseline
from .seeds.read_scalability import read_scalability, read_scalability_table, scaling_vs_published
from .seeds.readwhilewriting import (
    LOAD_COLUMNS,
    SEED001_COLUMNS,
    load_and_readwhilewriting,
    readwhilewriting_table,
    rocksdb_tuning_report,
)
from .seeds.transactions import SEED003_METRIC, seed003, seed003_sentences, seed003_shape
from .seeds.versions import SETUP_BUILDS, versions, versions_table
from .seeds.ycsb import latency_throughput, ycsb_suite

__all__ = [
    "SCALES", "MEMORY", "resolve", "built", "published", "budget_line",
    "verdicts", "setup_of", "given",                                                       # every seed's claims
    "read_scalability", "read_scalability_table", "scaling_vs_published",                   # seed 000
    "LOAD_COLUMNS", "SEED001_COLUMNS", "load_and_readwhilewriting", "readwhilewriting_table",
    "rocksdb_tuning_report",                                                               # seed 001
    "dbbench_suite", "dbbench_timelines", "engine_ratio",                                  # seed 002
    "SEED003_METRIC", "seed003", "seed003_shape", "seed003_sentences",                     # seed 003
    "ycsb_suite", "latency_throughput",                                                    # YCSB
    "SEED004_OPS", "seed004", "seed004_latency_table", "seed004_ratios", "seed004_sentences",  # seed 004
    "linkbench_timeline",
    "durability",                                                                          # durability
    "versions", "versions_table", "SETUP_BUILDS",                                          # engine versions
    "FAMILY", "lsm_family", "lsm_family_table",                                            # the LSM family
    "trace_replay", "same_ops", "mixgraph_queries", "varying_rate", "sla_searches", "curves_frame",
    "sla_curves",                                                                          # from the field
    "native_loop", "python_loop_baseline",                                                 # quickstart
    "every_built", "chosen", "engines_text", "python_loop_gaps", "python_loop_note",        # what runs, what not
]
