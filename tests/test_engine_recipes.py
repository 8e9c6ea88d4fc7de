"""The recipes `kvlab engines build` follows (kvlab.engines.descriptor.Recipe): each source's fields checked when the
recipe is made, and a PyPI sdist whose sha256 is not the pinned one refused before anything is unpacked or built.
No engine is built here (RocksDB's take most of an hour on 2 cores)."""
import io
import json
import tarfile

import pytest

import kvlab
from kvlab import engines, errors
from kvlab.engines.descriptor import RECIPE_SOURCES, Recipe
from kvlab.execution.plugins import build as plugin_build
from kvlab.execution.plugins import where

SHA = "ab" * 32


@pytest.mark.parametrize("kwargs, said", [
    ({"source": "tarball", "package": "x"}, "recipe source 'tarball' is unknown; allowed: debian, crate, shim, go, debian-source, pypi"),
    ({"source": "crate", "package": "x-sys", "pin": "1.0"}, "crate recipe 'x-sys' needs its sha256, library"),
    ({"source": "pypi", "package": "x", "pin": "1.0", "sha256": SHA, "library": "x"},
     "pypi recipe 'x' needs its include, targets"),
    ({"source": "pypi", "package": "x", "pin": "1.0", "sha256": "ABC", "library": "x", "include": "include",
      "targets": ("x",)}, "sha256 'ABC' is not 64 lower-case hex digits"),
    ({"source": "pypi", "package": "x", "pin": "1.0", "sha256": SHA, "library": "x", "include": "include",
      "targets": ("x",), "cmake": ("-DA=1", "--fresh")}, "CMake options are -DNAME=VALUE, not ['--fresh']"),
    ({"source": "crate", "package": "x-sys", "pin": "1.0", "sha256": SHA, "library": "x", "cmake": ("-DA=1",)},
     "cmake and targets are for a pypi or debian-source recipe"),
])
def test_a_recipe_missing_what_its_source_needs_is_refused(kwargs, said):
    with pytest.raises(ValueError) as got:
        Recipe(**kwargs)
    assert said in str(got.value)


def test_every_engine_recipe_names_a_known_source_and_the_newer_versions_are_there():
    recipes = {f"{a}@{v}": r for a, d in engines.DESCRIPTORS.items() for v, r in d.versions.items()}
    assert all(r.source in RECIPE_SOURCES for r in recipes.values())
    assert {n for n, r in recipes.items() if r.source == "pypi"} >= {"wiredtiger@11.3.1", "wiredtiger@11.0.0"}
    newer = {n: r.pin for n, r in recipes.items() if n.startswith("rocksdb@") and r.source == "crate"}
    assert newer == {"rocksdb@8.10.0": "0.16.0+8.10.0", "rocksdb@10.4.2": "0.17.3+10.4.2",
                     "rocksdb@11.12.0": "0.49.0+11.12.0"}
    assert all("stdc++" in recipes[n].link for n in newer)      # RocksDB is C++: its static library needs it


def _sdist(top: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        data = b"project(x C)\n"
        info = tarfile.TarInfo(f"{top}/CMakeLists.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_a_pypi_sdist_with_another_sha256_is_refused_before_it_is_unpacked(monkeypatch, tmp_path):
    """PyPI's answers are served from here (no network): the index names the sdist, whose bytes are not the
    recipe's; the build stops at the check, with nothing unpacked, configured or installed."""
    sdist = _sdist("wiredtiger-11.3.1")
    index = {"releases": {"11.3.1": [{"packagetype": "sdist", "filename": "wiredtiger-11.3.1.tar.gz",
                                      "url": "https://files.example/wiredtiger-11.3.1.tar.gz"}]}}
    fetched = []

    def fetch(url, recipe):
        fetched.append(url)
        return json.dumps(index).encode() if url.endswith("/json") else sdist

    monkeypatch.setattr(plugin_build, "_fetch", fetch)
    monkeypatch.setenv("KVLAB_ENGINES_DIR", str(tmp_path))
    with pytest.raises(errors.KvlabError, match=r"the sdist wiredtiger-11\.3\.1\.tar\.gz has sha256 [0-9a-f]{64}, "
                                                r"the recipe pins 95052d1b.*; nothing was built"):
        plugin_build.build("wiredtiger@11.3.1", log=lambda line: None)
    assert fetched == ["https://pypi.org/pypi/wiredtiger/json", index["releases"]["11.3.1"][0]["url"]]
    work = tmp_path / ".work" / "wiredtiger@11.3.1"
    assert not (work / "src").exists() and not (work / "cmake-build").exists()
    assert not (tmp_path / "wiredtiger@11.3.1").exists()


def test_a_pypi_version_without_an_sdist_names_the_releases_that_have_one(monkeypatch, tmp_path):
    index = {"releases": {"11.3.1": [{"packagetype": "bdist_wheel", "filename": "w.whl", "url": "u"}],
                          "11.2.0": [{"packagetype": "sdist", "filename": "w.tar.gz", "url": "u"}]}}
    monkeypatch.setattr(plugin_build, "_fetch", lambda url, recipe: json.dumps(index).encode())
    monkeypatch.setenv("KVLAB_ENGINES_DIR", str(tmp_path))
    with pytest.raises(errors.KvlabError, match=r"PyPI has no sdist of wiredtiger 11\.3\.1 \(releases with one: "
                                                r"11\.2\.0\)"):
        plugin_build.build("wiredtiger@11.3.1", log=lambda line: None)


WT_FROM_PYPI = [v for v, r in engines.DESCRIPTORS["wiredtiger"].versions.items() if r.source == "pypi"]


@pytest.mark.parametrize("version", WT_FROM_PYPI)
def test_a_wiredtiger_built_from_pypi_runs_with_its_own_snappy_module(version, tmp_path):
    """Where it is built (`kvlab engines build`, minutes; the suite does not build it): the version's object runs
    in the process that has Debian's WiredTiger compiled in, reports its own version and source, and loads the
    snappy module kept beside it."""
    if where.built(f"wiredtiger@{version}") is None:
        pytest.skip(f"not built: kvlab engines build wiredtiger@{version}")
    r = kvlab.run(f"wiredtiger-btree@{version}", "fillseq,readrandom", num=2000, db=str(tmp_path / "db"), seed=1,
                  interval=0, compression="snappy")[1]
    assert r.found == r.ops and r.versions["engine_library"] == version
    build = r.versions["engine_build"]
    assert build["build"]["source"]["kind"] == "pypi" and "sdist (PyPI, sha256" in build["origin"]
    assert f"wiredtiger@{version}/engine/libwiredtiger_snappy.so" in (tmp_path / "db" / "WiredTiger.basecfg").read_text()


def test_a_built_rocksdbs_assertions_are_read_from_its_own_archive(tmp_path):
    """RocksDB's own static library answers, not the object, whose zstd (linked beside it by librocksdb-sys) keeps
    an assert in its dictionary builder; no archive (Debian's build): no answer from here."""
    from kvlab.engines import rocksdb
    library = tmp_path / "libkvlab_rocksdb.so"
    assert rocksdb.assertions(str(library)) is None
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "librocksdb.a").write_bytes(b"!<arch>\n db_impl.o memcpy")
    assert rocksdb.assertions(str(library)) is False
    (tmp_path / "engine" / "librocksdb.a").write_bytes(b"!<arch>\n db_impl.o __assert_fail memcpy")
    assert rocksdb.assertions(str(library)) is True
