#!/usr/bin/env bash
# Everything kvlab needs on Debian 12, from nothing: the engines' Debian packages,
# a virtual environment in .venv, and the native build.  Safe to re-run: it skips
# what is already there.  Run as root or with sudo available.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(build-essential pkg-config python3-dev python3-venv
      fuse3 libfuse3-dev   # forgetfs, the power-loss crash tests' FUSE file system (kvlab/execution/crash/forgetfs.py)
      clang-format         # make format-c (cython_ext/.clang-format)
      linux-perf           # --profile: perf samples a trial's worker (kvlab/execution/run/profiler.py)
      valgrind             # --count instructions: callgrind counts a trial's worker; its headers, the extension's
                           # client requests (cython_ext/src/count.c); the benchmarks' instruction counts
      chromium fonts-dejavu-core)  # chromium: the JupyterLab browser test (driven by Playwright)
install_missing() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        local SUDO=""
        [ "$(id -u)" -ne 0 ] && SUDO="sudo"
        echo "== installing Debian packages: ${missing[*]}"
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
    fi
}
install_missing "${PKGS[@]}"
# the engines' libraries: each engine folder's BUILD row names its package (kvlab/engines/<adapter>/__init__.py),
# read with the system Python the line above installed
read -r -a ENGINE_PKGS <<< "$(python3 kvlab/engines/buildrows.py --packages)"
install_missing "${ENGINE_PKGS[@]}"

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    echo "== creating .venv with $($PY --version)"
    $PY -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -r requirements-dev.txt
# Release engine builds from `make engines`, where present, replace the Debian libraries.
env_args=()
for e in rocksdb rocksdb-ie leveldb wiredtiger; do   # rocksdb-ie: the initial-exec RocksDB (kvlab/_native_ie)
    if [ -z "${KVLAB_NO_RELEASE_ENGINES:-}" ] && [ -f "engines-build/prefix/$e/build-info.json" ]; then
        v=${e^^}
        env_args+=("KVLAB_${v//-/_}_PREFIX=$PWD/engines-build/prefix/$e")
    fi
done
# The build's inputs: the sources setup.py compiles and reads (tracked or new, never what a build writes: git's
# ignores), the release engines given, the engines' Debian packages and the Python.  An editable install rebuilds the
# whole extension (30 s here) each time it runs, so a build whose inputs match the last one's is skipped; outside a
# git checkout (an unpacked sdist) the extension is always built.
build_inputs() {
    git rev-parse --is-inside-work-tree >/dev/null 2>&1 || return 1
    { git ls-files -co --exclude-standard -- setup.py pyproject.toml cython_ext kvlab/engines \
          | grep -E '\.(c|h|pyx|pxd|py|toml|rs)$' | xargs -r sha256sum
      echo "${env_args[*]} $EDITABLE"; dpkg-query -W "${ENGINE_PKGS[@]}"; .venv/bin/python --version; } | sha256sum
}
# the checkout's root as a path entry (setuptools' compat mode, a .pth line) rather than an import hook: a regular
# package found on the path wins over a folder named kvlab in the current directory (a checkout beside it), which
# an import hook, consulted after the path, cannot outrank
EDITABLE="--config-settings editable_mode=compat"
STAMP=.venv/kvlab-native-build.sha256
inputs=$(build_inputs || true)
if [ -n "$inputs" ] && [ "$inputs" = "$(cat "$STAMP" 2>/dev/null)" ] && .venv/bin/python -c "import kvlab._native" 2>/dev/null; then
    echo "== kvlab's native extension: built already from these sources"
else
    echo "== building kvlab's native extension${env_args[*]:+ (release engines: ${env_args[*]})}"
    rm -f "$STAMP"
    env "${env_args[@]}" .venv/bin/python -m pip install -q --no-build-isolation -e . $EDITABLE 2>&1 | grep -v "^\s*$" || true
    .venv/bin/python -c "import kvlab._native" && [ -n "$inputs" ] && echo "$inputs" > "$STAMP"
fi
# the kernel starts with room in glibc's static TLS for a RocksDB linked into kvlab (kvlab.execution.native)
tls=$(.venv/bin/python -c 'from kvlab.execution.native import with_static_tls_room; print(with_static_tls_room({})["GLIBC_TUNABLES"])')
.venv/bin/python -m ipykernel install --sys-prefix --name python3 --env GLIBC_TUNABLES "$tls" >/dev/null
# the versions loaded at run time that set-up builds (others: `kvlab engines build NAME@VERSION`): the two LMDB
# versions (seconds each), and the default version of each engine never compiled into kvlab, which its plain name
# runs (BUILD's `loaded`: mdbx@0.14.4, about a minute from the mdbx-sys crate; redb@4.6.0 and fjall@3.1.13, under a
# minute each from their shim crates, kvlab/engines/{redb,fjall}/shim).  Those from crates need cargo, which a fresh
# Debian 12 lacks (and its own Rust, 1.63, is older than redb's and fjall's 1.90): each is skipped with one line saying why and how to get it, and the main job
# runs on the engines that are built.
read -r -a LOADED <<< "$(python3 kvlab/engines/buildrows.py --loaded)"
.venv/bin/python -m kvlab.cli engines build --skip-built --where-possible lmdb@0.9.24 lmdb@0.9.70 "${LOADED[@]}"
.venv/bin/python -c "import kvlab._native as n; print('== engines built:', ', '.join(f'{k} {v}' for k, v in n.adapters().items()))"
