"""A phase's amplification as the runner measures it: the engine's counters before the phase, the live set it
starts from, then the figures of the whole phase and of each interval (the arithmetic is
kvlab.results.amplification's).  What carries from one phase to the next (the live set, where the engine's own
account ended) is a Carried value, handed in and handed back: nothing here writes into the session."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

from ...results import amplification
from ..host import accounting


@dataclass(frozen=True)
class Carried:
    """What one phase's amplification hands the next."""
    live: dict                             # the live set (amplification.live_start, live_after)
    engine_counted: tuple | None = None    # (engine handle, its statistics, its log's mark) where the last phase ended
    log_state: dict = field(default_factory=dict)   # the engine counters' reader's own state (RocksDB's jobs)


class PhaseAmp:
    """A phase's amplification (kvlab.results.amplification): the engine's own counters before it, the live set
    it starts from, then the figures of the phase (whole, warm-up included) and of each interval.

    `phase`: execution.run.phases.Phase; `carried`: what the last phase handed on; `counters`: the engine's
    EngineCounters (ENGINE_COUNTERS) or None; `engine_stats`: whether the run reads the engine's statistics (and
    `off_note` why not);
    `storage_why`: amplification.storage_notes()."""

    def __init__(self, phase, plan, engine, carried: Carried, counters, engine_stats: bool, db_path,
                 storage_why: dict, off_note: str = "the engine's statistics were not collected (engine_stats=False)"):
        self.pattern, self.plan = phase.live_pattern, plan
        self.n, self.key_size, self.threads, self.seed = phase.num, phase.key_size, phase.threads, phase.seed
        self.value_size = (plan["value_min"] + plan["value_max"]) / 2 if plan else phase.value_size
        self.carried, self.storage_why, self.has_counters = carried, storage_why, counters is not None
        self.counters = counters if engine_stats else None
        self.off_note = off_note   # why the engine's own account is not read, when it is not
        self.engine, self.stats_before, self.log_mark = engine, None, None
        self.log = db_path / counters.log_file if self.counters and counters.log_file else None
        if self.counters is not None:
            last = carried.engine_counted
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
        out: dict[str, int] = {}
        for side in ("workers", "writer"):
            s = snap[side]
            counts = ({op: int(c.sum()) for op, c in s["hist"].items() if op not in ("txn", "response", "lag")}
                      if self.plan is not None else s["ops"])
            for op, k in counts.items():
                out[op] = out.get(op, 0) + k
        return out

    def _live(self, ops, arcs=None, streams=None) -> dict:
        return amplification.apply_phase(self.carried.live, self.pattern, self.n, ops,
                                         self.key_size + self.value_size, arcs=arcs, streams=streams)

    def _stream(self, role, index):
        """The key stream a write thread draws from (the native driver's: the seed, the writer's or the writers'
        stream, the thread's index): the same in every phase of this seed, so an overwrite retraces a fillrandom."""
        return (self.seed, role, index)

    def interval(self, na, nb, acct, db_bytes) -> dict:
        a, b = self._ops(na), self._ops(nb)
        ops = {op: k - a.get(op, 0) for op, k in b.items()}
        # the threads' own counts are known only at the end: so far, the workers' writes shared evenly
        workers = nb["workers"]["ops"].get("write", 0) + nb["workers"]["ops"].get("rmw", 0)
        streams = [(self._stream("worker", i), workers / self.threads) for i in range(self.threads)]
        streams.append((self._stream("writer", self.threads), nb["writer"]["ops"].get("write", 0)))
        return amplification.interval_figures(
            user_bytes=amplification.user_write_bytes(ops, self.key_size, self.value_size),
            reads=amplification.read_ops(ops), delta=acct, allocated=db_bytes,
            live_bytes=self._live(b, streams=streams).get("bytes"), storage_why=self.storage_why)

    def phase(self, threads, before, after, allocated, engine_stats) -> tuple[dict, Carried]:
        """(the phase's figures, what it hands the next phase)."""
        ops: dict[str, int] = {}
        for t in threads:
            for op, k in t["ops"].items():
                ops[op] = ops.get(op, 0) + k
        # fillseq: each thread writes its share of the key space from its first key on (the native driver's split)
        arcs = [(self.n * t["index"] // self.threads, t["ops"].get("write", 0)) for t in threads
                if t["role"] == "worker"]
        # a thread's draws of its key stream: its writes (updaterandom's rmw ops too; readrandomwriterandom's
        # writes are taken as its stream's first draws, though its reads draw from it too: an estimate)
        streams = [(self._stream(t["role"], t["index"]), t["ops"].get("write", 0) + t["ops"].get("rmw", 0))
                   for t in threads]
        live = self._live(ops, arcs, streams)
        carried = Carried(live=live, engine_counted=self.carried.engine_counted, log_state=self.carried.log_state)
        engine = None
        if self.counters is not None:
            text: str | None = ""
            mark = None
            if self.log is not None and self.log_mark is not None:
                text, mark = accounting.log_since(self.log, self.log_mark)
            if self.log is not None and not self.log.exists():
                text = None   # the engine keeps its info log elsewhere (an options string's db_log_dir)
            state = copy.deepcopy(self.carried.log_state)
            engine = self.counters.read(self.stats_before, engine_stats, text, state)
            carried = Carried(live=live, engine_counted=(self.engine, engine_stats, mark), log_state=state)
        elif self.has_counters:
            engine = {"bytes_written": None, "blocks_read": None, "source": None,
                      "note": self.off_note}
        return amplification.figures(
            user_bytes=amplification.user_write_bytes(ops, self.key_size, self.value_size),
            reads=amplification.read_ops(ops), delta=accounting.delta(before, after),
            allocated=allocated, live=live, storage_why=self.storage_why, engine=engine), carried
