#!/usr/bin/env bash
# `make engines`: release builds of RocksDB and LevelDB (Debian's own source packages) and
# WiredTiger 11.3.1 (the PyPI `wiredtiger` sdist, WiredTiger's own source), into
# engines-build/prefix/<engine>, then a rebuild of kvlab against them.  Optional, separate
# from the test command, and it skips whatever is already built.  Run as root or with sudo.
#
#   scripts/build_engines.sh [rocksdb] [rocksdb-ie] [dbbench] [leveldb] [wiredtiger] [pywiredtiger]   (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=$ROOT/engines-build
SRC=$WORK/src
PREFIX=$WORK/prefix
JOBS=${JOBS:-$(nproc)}
ENGINES=("$@")
[ ${#ENGINES[@]} -eq 0 ] && ENGINES=(rocksdb rocksdb-ie dbbench leveldb wiredtiger pywiredtiger)
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
mkdir -p "$SRC" "$PREFIX"

need_pkgs() {
    local missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
    fi
}

# Debian source packages come from the same mirror as the binaries: add a deb-src entry once.
enable_deb_src() {
    local list=/etc/apt/sources.list.d/kvlab-deb-src.sources
    if ! grep -rqs "^Types:.*deb-src" /etc/apt/sources.list.d/ && ! grep -qs "^deb-src" /etc/apt/sources.list; then
        printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
            | $SUDO tee "$list" >/dev/null
        $SUDO apt-get update -qq
    fi
}

fetch_debian_source() {  # $1 = source package; prints the unpacked directory
    local pkg=$1
    local dir
    dir=$(find "$SRC" -maxdepth 1 -type d -name "$pkg-*" | head -1)
    if [ -z "$dir" ]; then
        enable_deb_src
        (cd "$SRC" && apt-get source -qq "$pkg" >/dev/null 2>&1)
        dir=$(find "$SRC" -maxdepth 1 -type d -name "$pkg-*" | head -1)
    fi
    echo "$dir"
}

write_info() {  # $1 = prefix, $2 = source, $3 = flags
    printf '{"source": "%s", "compiler_flags": "%s", "built": "%s"}\n' "$2" "$3" "$(date -u +%FT%TZ)" > "$1/build-info.json"
}

# $1 = prefix, $2 = CMake build directory's name, $3 = TLS flag, $4 = what the flag is, for build-info.json
rocksdb_release() {
    local out=$1 build=$2 tls=$3
    if [ -f "$out/lib/librocksdb.a" ]; then echo "== rocksdb ($4): already built in $out"; return; fi
    need_pkgs dpkg-dev cmake libsnappy-dev liblz4-dev libzstd-dev zlib1g-dev libbz2-dev
    local dir; dir=$(fetch_debian_source rocksdb)
    echo "== rocksdb ($4): Release build of $(basename "$dir") (static library only)"
    local start=$SECONDS
    local flags="-O2 -DNDEBUG -march=native (PORTABLE=OFF: SSE4.2/native CRC32) $tls"
    cmake -S "$dir" -B "$dir/$build" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release -DPORTABLE=OFF \
        -DCMAKE_CXX_FLAGS="$tls" \
        -DFAIL_ON_WARNINGS=OFF -DWITH_SNAPPY=ON -DWITH_LZ4=ON -DWITH_ZSTD=ON -DWITH_ZLIB=ON -DWITH_BZ2=ON \
        -DWITH_GFLAGS=OFF -DWITH_TESTS=OFF -DWITH_TOOLS=OFF -DWITH_BENCHMARK_TOOLS=OFF -DWITH_CORE_TOOLS=OFF \
        -DWITH_TRACE_TOOLS=OFF -DWITH_JNI=OFF -DROCKSDB_BUILD_SHARED=OFF -DUSE_RTTI=1 \
        -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DCMAKE_INSTALL_PREFIX="$out" >/dev/null
    cmake --build "$dir/$build" --target rocksdb -j "$JOBS" 2>&1 | grep -E "(^| )error:|\*\*\* \[" || true
    mkdir -p "$out/lib"
    cp "$dir/$build/librocksdb.a" "$out/lib/"
    rm -rf "$out/include" && cp -r "$dir/include" "$out/include"
    write_info "$out" "Debian source package $(basename "$dir"), CMake Release" "$flags"
    echo "== rocksdb ($4): built in $((SECONDS - start)) s"
}

# RocksDB's thread-locals (perf level and context, I/O stats, its thread-local pointers: ~1.2 KB) cost a
# dlopen'ed module more than db_bench's executable, which reads them at a fixed offset from %fs.  Two
# builds of the same source, and kvlab links one module against each (setup.py):
#   rocksdb     -mtls-dialect=gnu2 (TLS descriptors): a descriptor call returns the offset, instead of
#               __tls_get_addr's PLT call; it loads in any process (kvlab._native).
#   rocksdb-ie  -ftls-model=initial-exec: a load of the offset from the GOT, as an executable's; but its
#               module loads only where glibc has ~1.2 KB of static TLS left, which after numpy, pandas
#               and duckdb it has not unless the process started with glibc.rtld.optional_static_tls
#               (the kvlab command and kvlab's kernel do; kvlab/execution/native.py picks the module).
build_rocksdb() {
    rocksdb_release "$PREFIX/rocksdb" build-kvlab "-mtls-dialect=gnu2" "TLS descriptors"
}
build_rocksdb_ie() {
    rocksdb_release "$PREFIX/rocksdb-ie" build-kvlab-ie "-ftls-model=initial-exec" "initial-exec TLS"
}

# db_bench from the same RocksDB source, linked to the release library above: the reference
# `benchmarks/vs_dbbench.py` compares kvlab against.  Compiled with the library's own defines
# and flags (read from its CMake build), plus gflags, which db_bench needs for its flags.
build_dbbench() {
    local out=$PREFIX/rocksdb
    if [ -x "$out/bin/db_bench" ]; then echo "== db_bench: already built in $out/bin"; return; fi
    [ -f "$out/lib/librocksdb.a" ] || build_rocksdb
    need_pkgs libgflags-dev
    local dir; dir=$(fetch_debian_source rocksdb)
    local flagsfile=$dir/build-kvlab/CMakeFiles/rocksdb.dir/flags.make
    echo "== db_bench: building from $(basename "$dir") against the release library"
    local start=$SECONDS
    mkdir -p "$out/bin"
    # shellcheck disable=SC2046
    c++ $(sed -n 's/^CXX_FLAGS = //p' "$flagsfile") $(sed -n 's/^CXX_DEFINES = //p' "$flagsfile") -DGFLAGS=1 \
        -w -I"$dir" -I"$dir/include" "$dir/tools/db_bench.cc" "$dir/tools/db_bench_tool.cc" \
        "$dir/tools/simulated_hybrid_file_system.cc" "$out/lib/librocksdb.a" \
        -lgflags -lsnappy -llz4 -lzstd -lz -lbz2 -lpthread -ldl -o "$out/bin/db_bench"
    echo "== db_bench: built in $((SECONDS - start)) s"
}

build_leveldb() {
    local out=$PREFIX/leveldb
    if [ -f "$out/lib/libleveldb.a" ]; then echo "== leveldb: already built in $out"; return; fi
    need_pkgs dpkg-dev cmake libsnappy-dev
    local dir; dir=$(fetch_debian_source leveldb)
    echo "== leveldb: Release build of $(basename "$dir")"
    local start=$SECONDS
    cmake -S "$dir" -B "$dir/build-kvlab" -DCMAKE_BUILD_TYPE=Release -DLEVELDB_BUILD_TESTS=OFF \
        -DLEVELDB_BUILD_BENCHMARKS=OFF -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
        -DCMAKE_INSTALL_PREFIX="$out" >/dev/null
    cmake --build "$dir/build-kvlab" -j "$JOBS" >/dev/null
    cmake --install "$dir/build-kvlab" >/dev/null
    [ -d "$out/lib64" ] && [ ! -d "$out/lib" ] && mv "$out/lib64" "$out/lib"
    write_info "$out" "Debian source package $(basename "$dir"), CMake Release, snappy" "-O3 -DNDEBUG"
    echo "== leveldb: built in $((SECONDS - start)) s"
}

build_wiredtiger() {
    local out=$PREFIX/wiredtiger
    if [ -f "$out/lib/libwiredtiger.so" ]; then echo "== wiredtiger: already built in $out"; return; fi
    need_pkgs cmake libsnappy-dev swig
    local dir
    dir=$(find "$SRC" -maxdepth 1 -type d -name "wiredtiger-11*" | head -1)
    if [ -z "$dir" ]; then
        "$ROOT/.venv/bin/python" -m pip download -q --no-deps --no-binary :all: -d "$SRC" "wiredtiger==11.3.1"
        tar -xzf "$SRC"/wiredtiger-11.3.1.tar.gz -C "$SRC"
        dir=$SRC/wiredtiger-11.3.1
    fi
    echo "== wiredtiger: Release build of $(basename "$dir")"
    local start=$SECONDS
    cmake -S "$dir" -B "$dir/build-kvlab" -DCMAKE_BUILD_TYPE=Release -DENABLE_PYTHON=0 -DENABLE_SNAPPY=1 \
        -DHAVE_DIAGNOSTIC=0 -DENABLE_STRICT=0 -DENABLE_COLORIZE_OUTPUT=0 -DENABLE_STATIC=0 -DENABLE_SHARED=1 -DHAVE_UNITTEST=0 -DENABLE_LLVM=0 \
        -DCMAKE_INSTALL_PREFIX="$out" -DCMAKE_INSTALL_LIBDIR=lib >/dev/null
    cmake --build "$dir/build-kvlab" -j "$JOBS" --target wiredtiger_shared wiredtiger_snappy 2>&1 | grep -E "(^| )error:|\*\*\* \[" || true
    mkdir -p "$out/lib" "$out/include"
    cp -a "$dir"/build-kvlab/libwiredtiger.so* "$out/lib/"
    find "$dir/build-kvlab" -name "libwiredtiger_snappy.so" -exec cp {} "$out/lib/" \;
    cp "$dir/build-kvlab/include/wiredtiger.h" "$dir/src/include/wiredtiger_ext.h" "$out/include/" 2>/dev/null \
        || cp "$dir"/build-kvlab/include/*.h "$out/include/"
    write_info "$out" "PyPI wiredtiger 11.3.1 sdist (WiredTiger's source), CMake Release, snappy" "-O2 -DNDEBUG"
    echo "== wiredtiger: built in $((SECONDS - start)) s"
}

# The `wiredtiger` Python module (PyPI sdist, built from source with swig and cmake, about 2
# minutes): the quickstart's Python-loop baseline uses it where present.
build_pywiredtiger() {
    if "$ROOT/.venv/bin/python" -c "import wiredtiger" 2>/dev/null; then
        echo "== wiredtiger Python module: already installed"; return
    fi
    need_pkgs cmake swig libsnappy-dev
    echo "== wiredtiger Python module: building the PyPI sdist"
    local start=$SECONDS
    # its strict mode turns GCC 12's false array-bounds warnings into errors
    CFLAGS="-Wno-error=array-bounds -Wno-error=stringop-overflow -Wno-error=maybe-uninitialized" \
        "$ROOT/.venv/bin/python" -m pip install -q "wiredtiger==11.3.1"
    echo "== wiredtiger Python module: built in $((SECONDS - start)) s"
}

for e in "${ENGINES[@]}"; do "build_${e//-/_}"; done

echo "== rebuilding kvlab against the release builds"
env_args=()
for e in rocksdb rocksdb-ie leveldb wiredtiger; do
    v=${e^^}
    [ -d "$PREFIX/$e/lib" ] && env_args+=("KVLAB_${v//-/_}_PREFIX=$PREFIX/$e")
done
env "${env_args[@]}" "$ROOT/.venv/bin/python" -m pip install -q --no-build-isolation --force-reinstall --no-deps -e "$ROOT"
"$ROOT/.venv/bin/kvlab" engines
