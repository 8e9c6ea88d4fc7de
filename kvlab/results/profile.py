"""A phase's CPU profile: the stacks `perf` sampled in the trial's worker while the phase was measured, folded
(one line per distinct stack, root first, with its sample count, as Brendan Gregg's flame graphs take them), and
what they say per operation: the CPU an operation costs in each component (the engine's library, kvlab's harness,
libc and the allocator, the kernel, Python) and in each function.  Two profiles side by side (`why`): per operation,
the components and functions whose cost changed most.

    folded = fold(perf_script_text, windows)          # {phase: {"frame;frame;...": samples}}
    p = record_profile(folded["..."], rate_hz, ops, seconds, engine_dsos)    # what a record keeps
    per_op(p)                                          # {"components": {...}, "functions": [...]}
    why(pa, pb)                                        # the changes, per op

A frame is written "symbol (library)": the library's file name, [kernel] for the kernel; where perf could not
name the function, "[unknown] (library)".  Libraries Debian ships are stripped to their exported symbols, so a
static function inside one is named after the exported symbol before it (perf's nearest symbol) or [unknown]:
the component is right, the function is the nearest exported one (docs/profile.md).
"""
from __future__ import annotations

import re

OTHER = "[other stacks]"      # the stacks beyond the ones a record keeps, folded into one
KEEP_STACKS = 3000            # a record keeps the most sampled stacks, the rest counted as OTHER
COMPONENTS = ("engine", "kvlab", "libc+alloc", "kernel", "python", "other")
COMPONENT_WORDS = {
    "engine": "the engine's library (and the libraries it brings: compression)",
    "kvlab": "kvlab's harness: the native loop, the adapter, key and value generation, the clock",
    "libc+alloc": "libc, the C++ runtime and the allocator (memcpy, malloc, locks)",
    "kernel": "the kernel: system calls, page faults, interrupts",
    "python": "the Python interpreter (little while a native loop runs with the GIL released: the sampler)",
    "other": "what is none of these ([unknown] libraries, perf itself)",
}
LIBC = re.compile(r"^(libc|libm|libstdc\+\+|libgcc_s|ld-linux|libpthread|libjemalloc|libtcmalloc|libmimalloc|"
                  r"librt|libdl)[.-]")
PYTHON = re.compile(r"^(python\d|libpython)")
KVLAB = re.compile(r"^(_native|kvlab|libkvlab)")
KERNEL = "[kernel]"

_HEAD = re.compile(r"^(\S.*?)\s+(\d+)\s+(\d+\.\d+):")
_FRAME = re.compile(r"^\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$")


def library_name(dso: str) -> str:
    """'/usr/lib/x86_64-linux-gnu/liblmdb.so.0.0.0' -> 'liblmdb.so.0.0.0'; the kernel's -> '[kernel]'."""
    if dso.startswith("[kernel") or dso in ("[vdso]",):
        return KERNEL if dso.startswith("[kernel") else dso
    return dso.rsplit("/", 1)[-1] or dso


def _symbol(text: str) -> str:
    sym = text.split("+0x", 1)[0].strip()
    return sym or "[unknown]"


# glibc's own functions, by name: perf marks some "(inlined)" at an address of their own (memcpy's ifunc variants,
# pwrite's wrapper), which is no inlining into the frame after them
GLIBC = re.compile(r"^(__(mem|str|wmem|libc_|GI_|lll_|pthread|futex|nptl)|_int_|_IO_|mem(cpy|move|set|cmp)$|"
                   r"str(len|cmp|ncmp)$|(malloc|free|calloc|realloc|pthread_\w+|pwrite64|pread64|fdatasync|fsync|"
                   r"syscall|clock_gettime)$|_*(dlopen|dl_|mmap|munmap|mprotect|madvise|open64|close|read|write)\w*$)")


def _unnamed_library(sym: str) -> str:
    """The library of a frame perf named but whose library it did not: glibc's by its name, else unknown."""
    return "libc.so.6" if GLIBC.match(sym) else "[unknown library]"


def fold(script: str, windows: dict) -> dict:
    """perf script's samples (its default fields with -F comm,tid,time,ip,sym,dso and callchains) folded per
    window: `windows` is {name: (start_s, end_s)} on perf's clock (CLOCK_MONOTONIC with -k mono); a sample belongs
    to the window its time falls in.  Returns {name: {stack: samples}}, a stack written root first."""
    out: dict = {name: {} for name in windows}
    spans = sorted((lo, hi, name) for name, (lo, hi) in windows.items())

    def add(t, frames):
        if t is None or not frames:
            return
        named, pending = [], []
        for ip, sym, dso in frames:   # leaf first: perf lists an inlined function before its containing one
            if dso == "inlined":
                pending.append((ip, sym))
                continue
            lib = library_name(dso)
            # an inlined frame is the next real frame's library's (a build with -g names them): at that frame's
            # address, or at one of its own unless glibc's by its name (memcpy's variants, which perf marks so)
            named += [f"{s} ({lib if i == ip or not GLIBC.match(s) else _unnamed_library(s)})"
                      for i, s in pending] + [f"{sym} ({lib})"]
            pending = []
        named += [f"{s} ({_unnamed_library(s)})" for _, s in pending]
        named.reverse()   # root first
        for lo, hi, name in spans:
            if lo <= t <= hi:
                stack = ";".join(named)
                out[name][stack] = out[name].get(stack, 0) + 1
                return

    t: float | None = None
    frames: list = []
    for line in script.splitlines():
        if not line.strip():
            add(t, frames)
            t, frames = None, []
            continue
        m = _FRAME.match(line)
        if m and t is not None:
            frames.append((m.group(1), _symbol(m.group(2)), m.group(3)))
            continue
        h = _HEAD.match(line)
        if h:
            add(t, frames)
            t, frames = float(h.group(3)), []
    add(t, frames)
    return out


def kept(folded: dict, most: int = KEEP_STACKS) -> dict:
    """The `most` most sampled stacks, the rest's samples under OTHER."""
    ranked = sorted(folded.items(), key=lambda kv: -kv[1])
    out = dict(ranked[:most])
    rest = sum(n for _, n in ranked[most:])
    if rest:
        out[OTHER] = out.get(OTHER, 0) + rest
    return out


def frame_library(frame: str) -> str:
    m = re.search(r"\(([^()]*)\)$", frame)
    return m.group(1) if m else ""


def component(frame: str, engine_libraries) -> str:
    """Which component a frame's library (and, in a loaded engine object holding both, its symbol) is."""
    lib = frame_library(frame)
    sym = frame.rsplit(" (", 1)[0]
    if lib == KERNEL:
        return "kernel"
    if any(lib.startswith(e) for e in engine_libraries):
        # a version kvlab built links the adapter into the engine's object: kvlab's own functions are kv_*
        return "kvlab" if sym.startswith(("kv_", "kvlab")) else "engine"
    if KVLAB.match(lib):
        return "kvlab"
    if LIBC.match(lib) or lib == "[vdso]":   # the vDSO: clock reads without a system call
        return "libc+alloc"
    if PYTHON.match(lib):
        return "python"
    return "other"


def record_profile(folded: dict, rate_hz: int, ops: int, seconds: float, engine_libraries, *, event: str,
                   unwind: str, threads_note: str = "") -> dict:
    """What a record keeps (params["profile"]): the folded stacks and how they were taken."""
    samples = sum(folded.values())
    return {"event": event, "rate_hz": rate_hz, "unwind": unwind, "samples": samples, "ops": ops,
            "seconds": seconds, "engine_libraries": list(engine_libraries), "folded": kept(folded),
            **({"threads": threads_note} if threads_note else {})}


def per_op(p: dict) -> dict:
    """The CPU an operation costs, in microseconds: in total, per component (each sample's leaf frame: self time),
    and per function (self and total: inclusive of what it calls)."""
    ops = max(int(p.get("ops") or 0), 1)
    us_per_sample = 1e6 / p["rate_hz"]
    libs = p.get("engine_libraries") or ()
    comps = dict.fromkeys(COMPONENTS, 0.0)
    self_us: dict = {}
    total_us: dict = {}
    for stack, n in p["folded"].items():
        us = n * us_per_sample / ops
        frames = stack.split(";")
        leaf = frames[-1]
        comps[component(leaf, libs) if stack != OTHER else "other"] += us
        self_us[leaf] = self_us.get(leaf, 0.0) + us
        for f in set(frames):
            total_us[f] = total_us.get(f, 0.0) + us
    total = sum(comps.values())
    functions = [{"function": f, "self_us": s, "total_us": total_us.get(f, s), "component": component(f, libs)}
                 for f, s in sorted(self_us.items(), key=lambda kv: -kv[1])]
    return {"total_us": total, "components": comps, "functions": functions, "samples": p["samples"],
            "ops": ops}


def why(pa: dict, pb: dict, most: int = 15) -> dict:
    """B against A, per operation: each component's CPU us/op on both sides and the change, and the functions
    whose self cost changed most (either way)."""
    a, b = per_op(pa), per_op(pb)
    comps = [{"component": c, "a_us": a["components"][c], "b_us": b["components"][c],
              "change_us": b["components"][c] - a["components"][c]} for c in COMPONENTS]
    fa = {f["function"]: f for f in a["functions"]}
    fb = {f["function"]: f for f in b["functions"]}
    rows = []
    for name in set(fa) | set(fb):
        sa, sb = fa.get(name, {}).get("self_us", 0.0), fb.get(name, {}).get("self_us", 0.0)
        comp = (fb.get(name) or fa[name])["component"]
        rows.append({"function": name, "component": comp, "a_us": sa, "b_us": sb, "change_us": sb - sa})
    rows.sort(key=lambda r: -abs(r["change_us"]))
    return {"a_total_us": a["total_us"], "b_total_us": b["total_us"], "components": comps,
            "functions": rows[:most], "a_samples": a["samples"], "b_samples": b["samples"]}


ENGINE_FRAME = "engine"   # what an engine frame's library reads as once two builds' profiles are made comparable


def comparable(p: dict) -> dict:
    """The profile with every engine frame's library written ENGINE_FRAME: two versions of one engine (Debian's
    shared library against an object kvlab built, which also holds the adapter) then share their functions' frames,
    and `why` and a differential flame graph match them by name."""
    libs = p.get("engine_libraries") or ()

    def frame(f: str) -> str:
        if f == OTHER or component(f, libs) != "engine":
            return f
        return f"{f.rsplit(' (', 1)[0]} ({ENGINE_FRAME})"
    folded: dict = {}
    for stack, n in p["folded"].items():
        key = ";".join(frame(f) for f in stack.split(";")) if stack != OTHER else stack
        folded[key] = folded.get(key, 0) + n
    return {**p, "folded": folded, "engine_libraries": [*libs, ENGINE_FRAME]}


def merged(profiles) -> dict:
    """Several records' profiles (one side's repeats) as one: folded stacks summed, ops and seconds summed; they
    must share their rate."""
    profiles = [p for p in profiles if p]
    if not profiles:
        raise ValueError("no profile to merge")
    rates = {p["rate_hz"] for p in profiles}
    if len(rates) > 1:
        raise ValueError(f"profiles sampled at different rates {sorted(rates)} cannot be merged")
    folded: dict = {}
    for p in profiles:
        for stack, n in p["folded"].items():
            folded[stack] = folded.get(stack, 0) + n
    first = profiles[0]
    libs = list(dict.fromkeys(lib for p in profiles for lib in p.get("engine_libraries") or ()))
    return {**first, "folded": folded, "samples": sum(p["samples"] for p in profiles),
            "ops": sum(int(p.get("ops") or 0) for p in profiles),
            "seconds": sum(float(p.get("seconds") or 0) for p in profiles), "engine_libraries": libs}
