"""Layer 2, results: what a run produced, as versioned data. Result objects and the JSON
schema, histograms, statistics across repeats, the DuckDB store."""
from .result import SCHEMA, BenchmarkResult, RunResult, load_json, upgrade, write_json_atomic  # noqa: F401
