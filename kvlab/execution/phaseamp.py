"""A phase's amplification as the runner measures it: the engine's counters before the phase, the live set it
starts from, then the figures of the whole phase and of each interval (the arithmetic is
kvlab.results.amplification's)."""
from __future__ import annotations

from ..results import amplification
from . import accounting


class PhaseAmp:
    """A phase's amplification (kvlab.results.amplification): the engine's own counters before it, the live set
    it starts from, then the figures of the phase (whole, warm-up included, as its accounting) and of each
    interval."""

    def __init__(self, session, wl, params, plan, engine, graph: bool):
        self.session, self.native, self.plan, self.graph = session, wl.native, plan, graph
        self.n, self.key_size, self.threads = params["num"], params["key_size"], params["threads"]
        self.seed = params["seed"]
        self.value_size = (plan["value_min"] + plan["value_max"]) / 2 if plan else params["value_size"]
        self.live0 = session.live
        counters = amplification.ENGINE_COUNTERS.get(session.cfg.adapter)
        self.counters = counters if session.spec.engine_stats else None
        self.engine, self.stats_before, self.log_mark = engine, None, None
        self.log = session.where.path / counters.log_file if self.counters and counters.log_file else None
        if self.counters is not None:
            last = session.engine_counted
            if last is not None and last[0] is engine:
                # on from where the last phase's account ended: what the engine did between phases counts too
                _, self.stats_before, self.log_mark = last
            else:
                got = engine.stats()
                self.stats_before = {"numbers": got[0], "text": got[1]} if got is not None else None
                self.log_mark = accounting.log_mark(self.log) if self.log else None

    def _ops(self, snap) -> dict:
        """Ops per op type so far, workers and writer together, from a native snapshot (a mix's from its op
        histograms: its progress counts transactions)."""
        out = {}
        for side in ("workers", "writer"):
            s = snap[side]
            counts = ({op: int(c.sum()) for op, c in s["hist"].items() if op not in ("txn", "response", "lag")}
                      if self.plan is not None else s["ops"])
            for op, k in counts.items():
                out[op] = out.get(op, 0) + k
        return out

    def _live(self, ops, arcs=None, streams=None) -> dict:
        return amplification.apply_phase(self.live0, self.native, self.n, ops, self.key_size + self.value_size,
                                         arcs=arcs, streams=streams, graph=self.graph)

    def _stream(self, role, index):
        """The key stream a write thread draws from (the native driver's: the seed, the writer's or the writers'
        stream, the thread's index): the same in every phase of this seed, so an overwrite retraces a fillrandom."""
        return (self.seed, role, index)

    def interval(self, na, nb, acct, db_bytes) -> dict:
        a, b = self._ops(na), self._ops(nb)
        ops = {op: k - a.get(op, 0) for op, k in b.items()}
        # the threads' own counts are known only at the end: so far, the workers' writes shared evenly
        workers = nb["workers"]["ops"].get("write", 0)
        streams = [(self._stream("worker", i), workers / self.threads) for i in range(self.threads)]
        streams.append((self._stream("writer", self.threads), nb["writer"]["ops"].get("write", 0)))
        return amplification.interval_figures(
            user_bytes=amplification.user_write_bytes(ops, self.key_size, self.value_size),
            reads=amplification.read_ops(ops), delta=acct, allocated=db_bytes,
            live_bytes=self._live(b, streams=streams).get("bytes"), storage_why=self.session.storage_why)

    def phase(self, threads, before, after, acct, engine_stats) -> dict:
        ops = {}
        for t in threads:
            for op, k in t["ops"].items():
                ops[op] = ops.get(op, 0) + k
        # fillseq: each thread writes its share of the key space from its first key on (the native driver's split)
        arcs = [(self.n * t["index"] // self.threads, t["ops"].get("write", 0)) for t in threads
                if t["role"] == "worker"]
        streams = [(self._stream(t["role"], t["index"]), t["ops"].get("write", 0)) for t in threads]
        live = self._live(ops, arcs, streams)
        self.session.live = live
        engine = None
        if self.counters is not None:
            text, mark = accounting.log_since(self.log, self.log_mark) if self.log else ("", None)
            if self.log is not None and not self.log.exists():
                text = None   # the engine keeps its info log elsewhere (an options string's db_log_dir)
            engine = self.counters.read(self.stats_before, engine_stats, text, self.session.engine_log_state)
            self.session.engine_counted = (self.engine, engine_stats, mark)
        elif amplification.ENGINE_COUNTERS.get(self.session.cfg.adapter) is not None:
            engine = {"bytes_written": None, "blocks_read": None, "source": None,
                      "note": "the engine's statistics were not collected (engine_stats=False)"}
        return amplification.figures(
            user_bytes=amplification.user_write_bytes(ops, self.key_size, self.value_size),
            reads=amplification.read_ops(ops), delta=accounting.delta(before, after),
            allocated=acct.get("db_size_bytes"), live=live, storage_why=self.session.storage_why, engine=engine)

