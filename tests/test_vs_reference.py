"""The reference loops of benchmarks/vs_reference.py (benchmarks/reference/<engine>.c) build against the engine
libraries kvlab was built with and run correctly at a tiny scale: every read finds its key, and each phase prints
its JSON line.  A correctness test: no timing is asserted (benchmarks/vs_reference.py times them)."""
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import kvlab
from kvlab import engines
from kvlab.execution import native

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
NUM, READS, THREADS = 2000, 2000, 2
FIELDS = {"workload", "ops", "seconds", "ops_per_sec", "found"}


def _vs_reference():
    sys.path.insert(0, str(BENCH))
    try:
        return importlib.import_module("vs_reference")
    finally:
        sys.path.remove(str(BENCH))


def _configurations() -> list[str]:
    """One kvlab configuration per adapter, variant and options string, among the built ones that store data."""
    seen, names = set(), []
    for name, cfg in engines.REGISTRY.items():
        key = (cfg.adapter, cfg.variant, cfg.defaults.get("options"))
        if cfg.stores_data and cfg.adapter in native.built_adapters() and key not in seen:
            seen.add(key)
            names.append(name)
    return names


@pytest.fixture(scope="module")
def built():
    vs = _vs_reference()
    cache = {}

    def binary(adapter):
        if adapter not in cache:
            cache[adapter] = vs.build_reference(adapter)
        return cache[adapter]
    return vs, binary


def _lines(out: str) -> dict:
    lines = [json.loads(line) for line in out.splitlines() if line.strip()]
    for d in lines:
        assert FIELDS <= d.keys(), d
    return {d["workload"]: d for d in lines}


@pytest.mark.parametrize("name", _configurations())
def test_reference_loads_then_finds_every_key(name, built, tmp_path):
    vs, binary = built
    cfg = engines.get(name)
    args = vs.reference_args(cfg, 64 << 20)
    out = subprocess.run([str(binary(cfg.adapter)), str(tmp_path), str(NUM), str(READS), str(THREADS), *args],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    got = _lines(out.stdout)
    assert got["fillseq"]["ops"] == NUM
    read = got["readrandom"]
    assert read["ops"] == READS * THREADS and read["found"] == read["ops"], read
    assert read["seconds"] > 0 and read["ops_per_sec"] > 0
    assert got["fillseq"]["config"] == read["config"] and read["config"]


@pytest.mark.parametrize("name", [n for n in ("lmdb", "leveldb", "rocksdb") if n in _configurations()])
def test_reference_reads_the_keys_kvlab_writes(name, built, tmp_path):
    """The same key bytes: a database kvlab loaded, read by the reference (by duration, so the count is its own),
    finds every key (these engines' files name no object, so either side opens the other's)."""
    vs, binary = built
    cfg = engines.get(name)
    kvlab.run(name, "fillseq", num=NUM, db=str(tmp_path), seed=1)
    out = subprocess.run([str(binary(cfg.adapter)), str(tmp_path), str(NUM), "0.05s", "1",
                          *vs.reference_args(cfg, 64 << 20), "--phases", "readrandom"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    read = _lines(out.stdout)["readrandom"]
    assert read["ops"] > 0 and read["found"] == read["ops"], read
