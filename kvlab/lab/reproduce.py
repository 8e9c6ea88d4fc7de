"""The published benchmarks, as functions the notebooks call.

Each function runs one seed's experiment at a given scale on the engines asked
for and returns tidy pandas frames in the seed's own columns, so a notebook
stays a parameters cell plus calls.  `published(name)` loads the seed's table
from data/reference/ (shipped in the package: kvlab._resources) to show beside the measurement.

The experiments live one seed a module in kvlab/lab/seeds/ (its docstring lists them); this module is the
one name the notebooks import, and re-exports them.
"""
from __future__ import annotations

from .seeds.common import SCALES, built, published, resolve
from .seeds.dbbench_suite import dbbench_suite, dbbench_timelines, engine_ratio
from .seeds.durability import durability
from .seeds.linkbench import (
    SEED004_OPS,
    linkbench_timeline,
    seed004,
    seed004_latency_table,
    seed004_ratios,
    seed004_sentences,
)
from .seeds.quickstart import native_loop, python_loop_baseline
from .seeds.read_scalability import read_scalability, read_scalability_table, scaling_vs_published
from .seeds.readwhilewriting import LOAD_COLUMNS, load_and_readwhilewriting, rocksdb_tuning_report
from .seeds.transactions import SEED003_METRIC, seed003, seed003_sentences, seed003_shape
from .seeds.ycsb import latency_throughput, ycsb_suite

__all__ = [
    "SCALES", "resolve", "built", "published",
    "read_scalability", "read_scalability_table", "scaling_vs_published",                   # seed 000
    "LOAD_COLUMNS", "load_and_readwhilewriting", "rocksdb_tuning_report",                  # seed 001
    "dbbench_suite", "dbbench_timelines", "engine_ratio",                                  # seed 002
    "SEED003_METRIC", "seed003", "seed003_shape", "seed003_sentences",                     # seed 003
    "ycsb_suite", "latency_throughput",                                                    # YCSB
    "SEED004_OPS", "seed004", "seed004_latency_table", "seed004_ratios", "seed004_sentences",  # seed 004
    "linkbench_timeline",
    "durability",                                                                          # durability
    "native_loop", "python_loop_baseline",                                                 # quickstart
]
