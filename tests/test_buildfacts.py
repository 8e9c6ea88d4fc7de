"""Build facts travel with every result; an assertions-enabled library is flagged."""
import kvlab
from kvlab import buildfacts, cli

from .conftest import require


def test_results_carry_build_facts():
    require("lmdb")
    b = kvlab.run("lmdb", "fillseq", num=100)[0]
    facts = b.versions["engine_build"]
    assert set(facts) >= {"library", "origin", "assertions", "crc32", "compiler_flags"}
    assert facts["library"].endswith(".so") or ".so." in facts["library"]


def test_debian_rocksdb_is_detected_as_assertions_enabled(capsys):
    require("rocksdb")
    facts = buildfacts.library_facts("rocksdb")
    if not facts["origin"].startswith("Debian package"):
        import pytest
        pytest.skip(f"RocksDB here is {facts['origin']}, not Debian's")
    assert facts["assertions"] is True
    b = kvlab.run("rocksdb", "fillseq", num=100)[0]
    assert b.versions["engine_build"]["crc32"]          # from RocksDB's own LOG
    assert any("assertions compiled in" in w for w in b.warnings)
    assert cli.main(["run", "--engine", "rocksdb", "--workload", "fillseq", "--num", "100", "--no-store"]) == 0
    assert "assertions compiled in" in capsys.readouterr().out
