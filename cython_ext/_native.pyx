# cython: language_level=3, boundscheck=False, wraparound=False
"""kvlab._native: the engine adapters and the workload driver.

Errors cross into Python in one place, `check()`, which hands an adapter's
code and the engine's own error (kv_failure: message, code, its name, errno) to
kvlab.errors.from_code, which picks the exception.  A workload run
releases the GIL once, for the whole run; other Python threads may call
`request_stop()` and `progress()` on the same Run meanwhile.
"""
from libc.stdint cimport uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy, memset, strlen
from posix.dlfcn cimport RTLD_LOCAL, RTLD_NOW, dlclose, dlerror, dlopen, dlsym
from posix.stdlib cimport posix_memalign

# the C core's declarations, one .pxd beside each header (cython_ext/include)
from kv_dist cimport (KV_STREAM_READ, kv_dist, kv_dist_fill, kv_dist_init, kv_dist_key_ranges, kv_fnv_abs,
                      kv_key_hash, kv_pareto_size, kv_rng, kv_rng_seed)
from kv_driver cimport (KV_CRASH_MAX_BATCH, KV_MIX_MAX_DISTS, KV_MIX_MAX_OPS, KV_MIX_MAX_TXNS, KV_NOPTYPES,
                        KV_ROLE_WRITER, KV_W__COUNT, kv_mix, kv_run, kv_run_execute, kv_run_init, kv_run_request_stop,
                        kv_run_thread_count, kv_thread_result, kv_workload_table)
from kv_engine cimport (KV_E_NOTSUP, KV_ENGINE_ABI, KV_ENGINE_OPS_MIN_SIZE, KV_NOTFOUND, KV_OK, KV_PLUGIN_SYMBOL,
                        KV_TXN_WRITE, kv_config, kv_db, kv_engine_ops, kv_engines, kv_failure, kv_plugin_entry,
                        kv_thread, kv_thread_error)
from kv_gen cimport KV_KEY_ENCODING, KV_KEY_MAX, KV_VALUE_BUFFER, kv_make_key, kv_make_key_portable
from kv_graph cimport KV_G__COUNT, kv_graph, kv_graph_degree, kv_graph_state, kv_graph_state_init
from kv_hist cimport KV_HIST_BUCKETS, KV_HIST_SUB_BITS, kv_hist, kv_hist_finish, kv_hist_init, kv_hist_record
from kv_trace cimport KV_TRACE_BATCHED, KV_TRACE_BLOCK_TAG, KV_TRACE_COMMIT
from kv_trace cimport kv_replay, kv_replay_op, kv_trace, kv_trace_rec
from kv_names cimport (kv_compression_names, kv_dist_names, kv_error_names, kv_graph_op_names, kv_length_dist_names,
                       kv_name, kv_optype_names, kv_txn_kind_names)
from kv_rate cimport kv_rate, kv_rate_time

import operator
import os
from collections import namedtuple

import numpy as np

from kvlab import errors as _errors


cdef dict _codes(const kv_name *table):
    """{name: code} from one of kv_names.h's tables, in the order of its X-macro list."""
    out = {}
    cdef int i = 0
    while table[i].name != NULL:
        out[table[i].name.decode()] = table[i].code
        i += 1
    return out


cdef tuple _in_code_order(const kv_name *table):
    """The names of an enum that counts from 0, each at its code's position."""
    codes = _codes(table)
    names = tuple(codes)
    if [codes[n] for n in names] != list(range(len(names))):
        raise ImportError(f"kvlab._native: a name table is not in its enum's order: {codes}")
    return names


# The facts the C core owns, read from its tables (kv_names.h) once, as the module loads.
KEY_ENCODING = KV_KEY_ENCODING.decode()
KEY_MAX = KV_KEY_MAX
HIST_BUCKETS = KV_HIST_BUCKETS
HIST_SUB_BITS = KV_HIST_SUB_BITS
MIX_MAX_TXNS, MIX_MAX_OPS, MIX_MAX_DISTS = KV_MIX_MAX_TXNS, KV_MIX_MAX_OPS, KV_MIX_MAX_DISTS
OP_TYPES = _in_code_order(kv_optype_names)          # enum kv_optype: histograms are named by these
GRAPH_OPS = _in_code_order(kv_graph_op_names)        # enum kv_graph_op: LinkBench's operations
DISTRIBUTION_CODES = _codes(kv_dist_names)
LENGTH_CODES = _codes(kv_length_dist_names)          # how a range op draws its length
COMPRESSION_CODES = _codes(kv_compression_names)
TEMPLATE_TXN_KINDS = _codes(kv_txn_kind_names)       # a mix template's: "none" (no transaction), "read", "write"
TXN_KINDS = {k: v for k, v in TEMPLATE_TXN_KINDS.items() if v}   # what txn_begin takes
ERROR_CODES = _codes(kv_error_names)                 # {"KV_E_IO": -2, ...}: kvlab.errors' classes by C name

# A native loop (enum kv_workload): its code, the op type its progress counts, whether its threads write,
# whether a count-bounded run of it does `num` ops (its threads split num keys) rather than `reads` each, whether
# its ops are of several types (each in its own histogram, its progress counting them all).
NativeLoop = namedtuple("NativeLoop", "code optype writes ops_are_num several")
WORKLOADS = {kv_workload_table[i].name.decode(): NativeLoop(i, OP_TYPES[kv_workload_table[i].optype],
                                                            bool(kv_workload_table[i].writes),
                                                            bool(kv_workload_table[i].ops_are_num),
                                                            bool(kv_workload_table[i].several))
             for i in range(KV_W__COUNT)}
WORKLOAD_CODES = {name: w.code for name, w in WORKLOADS.items()}
# a trace's records and a replay's ops, as numpy reads and writes them (kv_trace.h)
TRACE_BLOCK_TAG = KV_TRACE_BLOCK_TAG
TRACE_BATCHED = KV_TRACE_BATCHED   # a record's flags: one of a batch's puts
TRACE_COMMIT = KV_TRACE_COMMIT     # ... and the last, its commit after it
TRACE_DTYPE = np.dtype([("key", "<u8"), ("start", "<u8"), ("intended", "<u8"), ("size", "<u4"), ("op", "u1"),
                        ("flags", "u1"), ("reserved", "<u2")])
REPLAY_DTYPE = np.dtype([("key", "<u8"), ("at_ns", "<i8"), ("size", "<u4"), ("op", "u1"), ("flags", "u1"),
                         ("pad", "u1", (2,))])
if TRACE_DTYPE.itemsize != sizeof(kv_trace_rec) or REPLAY_DTYPE.itemsize != sizeof(kv_replay_op):
    raise ImportError("kvlab._native: kv_trace.h's records are not the size TRACE_DTYPE and REPLAY_DTYPE say")
_GRAPH_OPTYPE = OP_TYPES.index("graph")

_errors.bind_codes(ERROR_CODES)


cdef int check(int rc, kv_failure *e) except -1:
    """The one place an adapter's failure becomes a Python exception: kvlab's code and the engine's own error,
    whole, to kvlab.errors.from_code (which picks the class)."""
    if rc >= 0:
        return 0
    if e == NULL:
        raise _errors.from_code(rc, "no message")
    cdef const char *msg = e.msg
    text = msg.decode("utf-8", "replace") if msg[0] != 0 else "no message"
    raise _errors.from_code(rc, text, code=e.code or None,
                            code_name=e.code_name.decode() if e.code_name != NULL else None,
                            errno=e.sys_errno or None)


cdef inline void _no_failure(kv_failure *e) noexcept nogil:
    memset(e, 0, sizeof(kv_failure))


# The adapters loaded at run time (kv_plugin.h): name -> (the shared object's path, its table's address).  A loaded
# object stays mapped for the process's life: a run on another thread may be calling through its table.
cdef dict _loaded = {}


cdef const kv_engine_ops *find_adapter(str name) except NULL:
    cdef int i = 0
    if name in _loaded:
        return <const kv_engine_ops *><size_t>_loaded[name][1]
    while kv_engines[i] != NULL:
        if kv_engines[i].name.decode() == name:
            return kv_engines[i]
        i += 1
    raise _errors.EngineNotBuilt(name)


def load_adapter(str name, str path):
    """Map the loadable adapter at `path` (a shared object exporting kvlab_engine: kv_plugin.h) as adapter
    `name`, local to itself (RTLD_LOCAL: two versions of one engine coexist), and return (its table's name, the
    library version it reports).  Loading a name again with the same path is a no-op; with another, a SpecError.
    An object that is no kvlab adapter, or one built against another contract version, is refused unloaded
    where dlopen allows (the object's own initialisers have run by then)."""
    cdef void *handle
    cdef kv_plugin_entry entry
    cdef int abi = -1
    cdef size_t size = 0
    cdef const kv_engine_ops *ops
    cdef kv_engine_ops *full
    if name in _loaded:
        if _loaded[name][0] != path:
            raise _errors.SpecError(f"adapter {name!r} is already loaded from {_loaded[name][0]}, not {path}")
        ops = <const kv_engine_ops *><size_t>_loaded[name][1]
        return ops.name.decode(), ops.version().decode()
    handle = dlopen(path.encode(), RTLD_NOW | RTLD_LOCAL)
    if handle == NULL:
        raise _errors.EngineNotBuilt(name, f"cannot load {path}: {dlerror().decode(errors='replace')}")
    entry = <kv_plugin_entry>dlsym(handle, KV_PLUGIN_SYMBOL)
    if entry == NULL:
        dlclose(handle)
        raise _errors.EngineNotBuilt(name, f"{path} is not a kvlab engine: it exports no "
                                           f"{KV_PLUGIN_SYMBOL.decode()} (cython_ext/include/kv_plugin.h)")
    ops = entry(&abi, &size)
    if abi != KV_ENGINE_ABI or size < KV_ENGINE_OPS_MIN_SIZE or size > sizeof(kv_engine_ops) or ops == NULL:
        dlclose(handle)
        raise _errors.EngineNotBuilt(name, f"{path} was built against kv_engine.h version {abi} ({size}-byte table); "
                                           f"this kvlab has version {KV_ENGINE_ABI} ({sizeof(kv_engine_ops)} bytes): "
                                           "rebuild it (`kvlab engines build`, or its own build line)")
    if size < sizeof(kv_engine_ops):   # built before fields were appended to the table: those are NULL here
        full = <kv_engine_ops *>calloc(1, sizeof(kv_engine_ops))
        if full == NULL:
            raise MemoryError()
        memcpy(full, ops, size)
        ops = full
    _loaded[name] = (path, <size_t>ops)
    return ops.name.decode(), ops.version().decode()


def loaded_adapters():
    """{name: (path, library version)} for every adapter loaded at run time in this process."""
    return {name: (path, (<const kv_engine_ops *><size_t>addr).version().decode())
            for name, (path, addr) in _loaded.items()}


def adapters():
    """{adapter name: linked library version} for every adapter compiled in."""
    out = {}
    cdef int i = 0
    while kv_engines[i] != NULL:
        out[kv_engines[i].name.decode()] = kv_engines[i].version().decode()
        i += 1
    return out


cdef list _tables():
    """[(adapter name, its table's address)] for every adapter: those compiled in, then those loaded at run time, by
    the name each was loaded as.  What an adapter can do beside the contract's calls is read from its table here,
    the same way for both."""
    out = []
    cdef int i = 0
    while kv_engines[i] != NULL:
        out.append((kv_engines[i].name.decode(), <size_t>kv_engines[i]))
        i += 1
    for name, (path, addr) in _loaded.items():
        out.append((name, addr))
    return out


cdef str _said(const char *how):
    return how.decode() if how != NULL else ""


def bulk_loads():
    """{adapter name: how its bulk load works, one sentence} for every adapter with a bulk path (kv_engine.h's
    bulk_* calls; kvlab's load="bulk"), compiled in or loaded at run time (_tables)."""
    out = {}
    cdef const kv_engine_ops *ops
    for name, addr in _tables():
        ops = <const kv_engine_ops *><size_t>addr
        if ops.bulk_begin != NULL:
            out[name] = _said(ops.bulk_how)
    return out


def batched_reads():
    """{adapter name: how its batched read works, one sentence} for every adapter with one (kv_engine.h's multi_get;
    db_bench's multireadrandom uses it, elsewhere a loop of gets), compiled in or loaded at run time (_tables)."""
    out = {}
    cdef const kv_engine_ops *ops
    for name, addr in _tables():
        ops = <const kv_engine_ops *><size_t>addr
        if ops.multi_get != NULL:
            out[name] = _said(ops.multi_get_how)
    return out


def own_loops():
    """{adapter name: what its own measured loop is, one sentence} for every adapter that runs db_bench's write and
    read loops itself (kv_engine.h's own_loop: an engine in Go), compiled in or loaded at run time (_tables)."""
    out = {}
    cdef const kv_engine_ops *ops
    for name, addr in _tables():
        ops = <const kv_engine_ops *><size_t>addr
        if ops.own_loop != NULL:
            out[name] = _said(ops.own_loop_how)
    return out


# The module's parts, one concern each (Cython's include: one module, so the engines link once)
include "engine.pxi"
include "session.pxi"
include "keys.pxi"
include "graphs.pxi"
include "histograms.pxi"
include "run.pxi"
