"""Build facts travel with every result; an assertions-enabled library is flagged."""
import kvlab
from kvlab import cli
from kvlab.execution import native
from kvlab.execution.host import buildfacts

from .conftest import require


def test_results_carry_build_facts():
    require("lmdb")
    b = kvlab.run("lmdb", "fillseq", num=100)[0]
    facts = b.versions["engine_build"]
    assert set(facts) >= {"library", "origin", "assertions", "crc32", "compiler_flags"}
    assert facts["library"].endswith(".so") or ".so." in facts["library"]


def test_debian_rocksdb_is_detected_as_assertions_enabled(capsys):
    require("rocksdb")
    facts = native.library_facts("rocksdb")
    if not facts["origin"].startswith("Debian package"):
        import pytest
        pytest.skip(f"RocksDB here is {facts['origin']}, not Debian's")
    assert facts["assertions"] is True
    b = kvlab.run("rocksdb", "fillseq", num=100)[0]
    assert b.versions["engine_build"]["crc32"]          # from RocksDB's own LOG
    assert any("assertions compiled in" in w for w in b.warnings)
    assert cli.main(["run", "--engine", "rocksdb", "--workload", "fillseq", "--num", "100", "--no-store"]) == 0
    assert "assertions compiled in" in capsys.readouterr().err   # warnings go to stderr, one line each


def test_debian_library_files_are_classified_whatever_kvlab_links():
    """Debian's RocksDB and LevelDB keep their asserts; its LMDB does not.  Checked on the files
    themselves, so it holds when kvlab is linked against the release builds of `make engines`."""
    import os

    import pytest
    cases = {"librocksdb.so": True, "libleveldb.so": True, "liblmdb.so": False}
    present = {n: e for n, e in cases.items() if os.path.exists(f"/usr/lib/x86_64-linux-gnu/{n}")}
    if not present:
        pytest.skip("Debian's engine libraries are not installed")
    for name, expected in present.items():
        assert buildfacts._has_assertions(os.path.realpath(f"/usr/lib/x86_64-linux-gnu/{name}")) is expected, name


def test_release_build_facts_when_present():
    """After `make engines`, results name the local release build and its flags, assertions off."""
    import pytest
    require("rocksdb")
    facts = native.library_facts("rocksdb")
    if not facts["origin"].startswith("local release build"):
        pytest.skip(f"RocksDB here is {facts['origin']} (`make engines` builds the release one)")
    assert facts["assertions"] is False and "NDEBUG" in (facts["compiler_flags"] or "")
    b = kvlab.run("rocksdb", "fillseq", num=100)[0]
    assert b.versions["engine_build"]["crc32"] == "Supported on x86"
    assert not any("assertions compiled in" in w for w in b.warnings)
