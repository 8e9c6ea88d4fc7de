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
     "cmake, configure and targets are for a pypi or debian-source recipe"),
    ({"source": "pypi", "package": "x", "pin": "1.0", "sha256": SHA, "library": "x", "include": ".",
      "targets": ("x.la",), "cmake": ("-DA=1",), "configure": ("--with-pic",)}, "one build system: cmake or configure"),
    ({"source": "pypi", "package": "x", "pin": "1.0", "sha256": SHA, "library": "x", "include": ".",
      "targets": ("x.la",), "configure": ("CFLAGS=-O0",)}, "configure options are --NAME[=VALUE], not ['CFLAGS=-O0']"),
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
    """Where it is built (`kvlab engines build`, minutes; the suite does not build it; 3.2.1+release by autotools):
    the version's object runs
    in the process that has Debian's WiredTiger compiled in, reports its own version and source, and loads the
    snappy module kept beside it."""
    if where.built(f"wiredtiger@{version}") is None:
        pytest.skip(f"not built: kvlab engines build wiredtiger@{version}")
    r = kvlab.run(f"wiredtiger-btree@{version}", "fillseq,readrandom", num=2000, db=str(tmp_path / "db"), seed=1,
                  interval=0, compression="snappy")[1]
    assert r.found == r.ops and r.versions["engine_library"] == version.split("+")[0]   # a label names the build
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


def _dsc(orig: str, sha: str) -> bytes:
    return (f"Format: 3.0 (quilt)\nSource: rocksdb\nVersion: 7.8.3-2\nChecksums-Sha256:\n {sha} 10782632 {orig}\n"
            f" {'cd' * 32} 9216 rocksdb_7.8.3-2.debian.tar.xz\nFiles:\n").encode()


def test_a_debian_source_tarball_is_checked_against_the_dsc_and_the_recipe_before_it_is_unpacked(monkeypatch,
                                                                                                  tmp_path):
    """Debian's archive is served from here (no network): the .dsc names the upstream tarball and its sha256; one
    that is not the recipe's is refused before the tarball is fetched, and a tarball whose bytes are not it is
    refused before it is unpacked; nothing is configured or installed either way."""
    name = "rocksdb@7.8.3+release"
    recipe = plugin_build.recipe_of(name)[2]
    assert (recipe.source, recipe.package, recipe.pin) == ("debian-source", "rocksdb", "7.8.3-2")
    orig = "rocksdb_7.8.3.orig.tar.gz"
    fetched = []
    monkeypatch.setenv("KVLAB_ENGINES_DIR", str(tmp_path))
    for dsc_sha, said in ((SHA, r"rocksdb_7\.8\.3-2\.dsc gives rocksdb_7\.8\.3\.orig\.tar\.gz sha256 (ab)+, the "
                                r"recipe pins b85408a3"),
                          (recipe.sha256, r"rocksdb_7\.8\.3\.orig\.tar\.gz has sha256 [0-9a-f]{64}, the recipe and "
                                          r"rocksdb_7\.8\.3-2\.dsc pin b85408a3")):
        fetched.clear()

        def fetch(url, recipe, dsc_sha=dsc_sha):
            fetched.append(url)
            return _dsc(orig, dsc_sha) if url.endswith(".dsc") else _sdist("rocksdb-7.8.3")

        monkeypatch.setattr(plugin_build, "_fetch", fetch)
        with pytest.raises(errors.KvlabError, match=said):
            plugin_build.build(name, log=lambda line: None)
        pool = "http://deb.debian.org/debian/pool/main/r/rocksdb/"
        assert fetched == [pool + "rocksdb_7.8.3-2.dsc"] + ([pool + orig] if dsc_sha == recipe.sha256 else [])
        work = tmp_path / ".work" / name
        assert not (work / "src").exists() and not (work / "cmake-build").exists() and not (tmp_path / name).exists()


def test_an_autotools_recipe_needs_autotools_and_records_the_flags_its_makefile_gave(monkeypatch, tmp_path):
    """wiredtiger@3.2.1+release predates WiredTiger's CMake: its recipe's `configure` makes it an autotools build,
    which needs autoreconf, libtoolize and make instead of cmake (said before anything is fetched, with how to get
    them), and whose facts are the flags its Makefile gave the compiler, summed up as a CMake build's are."""
    from kvlab.execution import native
    name = "wiredtiger@3.2.1+release"
    recipe = plugin_build.recipe_of(name)[2]
    assert recipe.source == "pypi" and recipe.pin == "3.2.1" and recipe.configure and not recipe.cmake
    assert plugin_build._tools(recipe) == plugin_build.AUTOTOOLS
    monkeypatch.setattr(plugin_build.shutil, "which", lambda tool: None if tool == "libtoolize" else "/usr/bin/x")
    assert plugin_build.cannot_build_here(name) == "needs libtoolize, which is not on PATH"
    assert "apt-get install autoconf automake libtool make" in plugin_build.how_to_get(name)
    (tmp_path / "Makefile").write_text("CC = gcc\nCPPFLAGS = \nAM_CFLAGS =  -std=c11 -D_GNU_SOURCE\n"
                                       f"CFLAGS = {plugin_build.RELEASE_CFLAGS}\nLIBS = -ldl\n")
    flags = plugin_build._make_flags(tmp_path)
    assert flags == "-std=c11 -D_GNU_SOURCE -O3 -DNDEBUG -g"
    said = native._built_by({"kind": "pypi", "build_system": "autotools", "compile_flags": flags})
    assert said == "-O3, NDEBUG, x86-64 baseline (autotools: -std=c11 -O3 -DNDEBUG -g)"


def test_a_version_label_names_a_build_and_builds_alike_are_told_apart_by_their_flags():
    """rocksdb@7.8.3+release reports 7.8.3 (the label after + names the build); a CMake Release build at -O3 with
    NDEBUG on the x86-64 baseline is built as the crates build theirs, and one with -march=native or -O2 is not."""
    from kvlab.execution import native
    from kvlab.services import versions
    crate = native._built_by({"kind": "crate"})
    alike = native._built_by({"kind": "debian-source", "compile_flags": "-O3 -DNDEBUG -DROCKSDB_PORTABLE -fPIC"})
    native_cpu = native._built_by({"kind": "debian-source", "compile_flags": "-O3 -DNDEBUG -march=native"})
    assert crate.startswith("-O3, NDEBUG, x86-64 baseline (") and alike.startswith("-O3, NDEBUG, x86-64 baseline (")
    assert native_cpu.startswith("-O3, NDEBUG, native (")
    rows = [{"engine": e, "assertions": False, "flags": f + "; the adapter: -O2"}
            for e, f in (("rocksdb@7.8.3+release", alike), ("rocksdb@8.10.0", crate))]
    assert versions.build_difference(rows) is None
    rows[0]["flags"] = native_cpu
    assert "compiler flags:" in versions.build_difference(rows)
