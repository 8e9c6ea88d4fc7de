"""Layer 2, results: what a run produced, as versioned data. Result objects and the JSON
schema, histograms, statistics across repeats, the DuckDB store."""
from .result import (BenchmarkResult, RunResult, SCHEMA, load_json, upgrade,  # noqa: F401
                     write_json_atomic)
