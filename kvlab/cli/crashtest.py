"""`kvlab crashtest --engine E --kills N [--sync] [--db DIR] [--power-loss [--loss all|random|torn]]
[--durability NAME|all] [--set KEY=VALUE] [--fault fsync-eio|write-eio|enospc]`: kill a writing process N
times, reopen, check that every acknowledged transaction is there (sync on) and none is half there; a table per
engine configuration.  With --power-loss the writer writes through forgetfs, a FUSE file system that forgets what
was never synced, and every kill is also a power cut.  With --fault forgetfs also makes a call fail (a failed
fsync, a failed write, a full disk): the table says whether the engine's caller saw it, and what the cut that
follows cost."""
from __future__ import annotations

from .. import engines, errors
from ..execution.crash import forgetfs
from ..execution.crash.crashtest import DURABILITY, crashtest, durability, format_table
from ..results.result import write_json_atomic
from ..results.store import Store
from .common import check_output_file
from .parsing import add_store_option, amount, count, tag_value

NAME = "crashtest"
HELP = "SIGKILL a writing process (or cut its power) N times; check durability and atomicity after each reopen"


def add_parser(sub, make):
    c = make(sub, NAME, help=HELP, description=__doc__)
    c.add_argument("--engine", default="lmdb", metavar="NAMES",
                   help=f"one or a comma list of: {', '.join(n for n, e in engines.REGISTRY.items() if e.stores_data)}")
    c.add_argument("--kills", type=count(1, 100_000), default=10, metavar="N",
                   help="how many times to kill the writer (default 10)")
    c.add_argument("--sync", action="store_true",
                   help="fsync every commit: then no acknowledged write may be lost (without it, the loss is "
                        "measured and reported)")
    c.add_argument("--batch", type=count(1, 100_000), default=10, metavar="K",
                   help="puts and deletes per transaction (default 10; 1: single writes)")
    c.add_argument("--num", type=count(1, 10**9), default=10_000, metavar="N", help="key space (default 10,000)")
    c.add_argument("--value-size", type=count(1, 1 << 20), default=100, metavar="BYTES",
                   help="value size (default 100)")
    c.add_argument("--max-delay", type=amount(0.01, 3600), default=0.8, metavar="S",
                   help="kill at a random moment up to S seconds into each round (default 0.8)")
    c.add_argument("--power-loss", action="store_true",
                   help="write through forgetfs (a FUSE file system that keeps what was never fsynced in its own "
                        "buffers) and cut its power at every kill: un-synced writes and entries of directories "
                        "never fsynced are lost, as a machine crash would lose them (needs /dev/fuse and root)")
    c.add_argument("--loss", choices=forgetfs.LOSS_MODELS, default="all",
                   help="what a power cut loses: all pending state (default), a seeded random half of the pending "
                        "pages kept ('random'), or the newest pending write torn at a 512-byte sector ('torn')")
    c.add_argument("--names", choices=forgetfs.NAME_MODELS, default="posix",
                   help="with --power-loss, when a created, renamed or removed entry survives a cut: once its "
                        "directory is fsynced (posix, default: all POSIX promises) or once any file is fsynced "
                        "(ext4: its journal commits every entry with the fsync)")
    c.add_argument("--same-boot", action="store_true",
                   help="with --power-loss, the reopen after a cut sees the host's boot id, as if the machine had "
                        "stayed up (default: a power cut is a reboot, each cut's reopen and writer see a new boot id; "
                        "libmdbx trusts an unsynced meta page within one boot)")
    c.add_argument("--cut-on", default=None, metavar="REGEX",
                   help="a crash point: kill (and cut) --min-delay seconds after a new entry whose name matches REGEX "
                        "appears in the database directory, once the writer has opened it (e.g. '^log\\.0+2$', "
                        "BerkeleyDB's second log file); at --max-delay when none does")
    c.add_argument("--min-delay", type=amount(0, 3600), default=0.05, metavar="S",
                   help="kill no sooner than S seconds into a round, or S seconds after the --cut-on entry (default "
                        "0.05)")
    c.add_argument("--fault", choices=forgetfs.FAULTS, default=None,
                   help="make forgetfs fail a call in every round (implies --power-loss): fsync-eio (an fsync or "
                        "fdatasync fails with EIO, once), write-eio (a write fails with EIO, once), enospc (writes "
                        "that grow files fail with ENOSPC after --enospc-bytes); the writer reads back the first "
                        "transaction its engine fails and tries --go-on more (default 20), then the power is cut "
                        "(docs/crashtest.md, Faults)")
    c.add_argument("--fault-at", type=count(1, 10**9), default=1, metavar="N",
                   help="--fault fsync-eio/write-eio: the Nth matching fsync (of a file with pending writes) or "
                        "write request of each round fails, counted from the writer's open (default 1)")
    c.add_argument("--fault-on", default=None, metavar="REGEX",
                   help="--fault: only files whose path matches REGEX (POSIX extended, e.g. '[.]log$' for "
                        "RocksDB's WAL; default: every file)")
    c.add_argument("--after-error", choices=forgetfs.AFTER_ERROR, default="keep",
                   help="--fault fsync-eio: keep (default; ext4: the failed pages stay readable in the page cache, "
                        "marked clean, never written, until the cut), evict (the same until the file is no longer "
                        "open: the cache evicted them), late (ext4 data=journal: as keep, but the failing fsync "
                        "returns success and the next fsync of the file fails) or drop (the file reverts to what was "
                        "durable, its cached pages invalidated)")
    c.add_argument("--enospc-bytes", type=count(0, 2**62), default=1 << 20, metavar="BYTES",
                   help="--fault enospc: the bytes files may grow by in a round before writes fail (default 1 MiB)")
    c.add_argument("--go-on", type=count(0, 1_000_000), default=None, metavar="N",
                   help="--fault: after the first transaction its engine fails, the writer reads it back and tries N "
                        "more, as a caller that retries would (default 20; 0: stop at the first error)")
    c.add_argument("--restart", action="store_true",
                   help="--fault: once the writer has stopped, a new process reopens the database before the power "
                        "is cut, through the page cache that still holds what failed (the application restarts, as "
                        "in Rebello et al.'s study); the table says whether it read the failed transaction")
    c.add_argument("--durability", default=None, metavar="NAME",
                   help="a durability setting of the engine, with what its documentation promises (decides the "
                        "verdict); 'all' runs each in turn. "
                        + "; ".join(f"{e}: {', '.join(d.name for d in ds)}" for e, ds in DURABILITY.items()))
    c.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="an engine setting on top (repeatable), as kvlab run takes them: e.g. options=nometasync")
    c.add_argument("--verbose", action="store_true", help="a line per kill")
    g = c.add_argument_group("common to every running command")
    g.add_argument("--db", default=None, metavar="DIR",
                   help="a new or empty directory to write in, left for inspection (default: a temporary one)")
    g.add_argument("--seed", type=count(0, 2**63 - 1), default=None, metavar="N",
                   help="kill times and keys (default: random, printed)")
    g.add_argument("--json", default=None, metavar="FILE", help="write every kill's record here")
    add_store_option(g)
    g.add_argument("--no-store", action="store_true", help="do not append the report to the results store")
    g.add_argument("--tag", action="append", default=[], metavar="TAG",
                   help="label the stored report (repeatable)")
    return c


def handle(args) -> int:
    return cmd_crashtest(args)


def cmd_crashtest(args) -> int:
    names = [n.strip() for n in args.engine.split(",") if n.strip()]
    if args.db and len(names) > 1:
        raise errors.SpecError("crashtest: --db takes one engine (each needs its own directory)")
    settings = dict(engines.parse_setting(s, "--set") for s in args.set)
    runs = []   # (engine, durability setting or None)
    for name in names:
        engines.get(name)
        if args.durability == "all":
            runs += [(name, d.name) for d in DURABILITY.get(name, ())] or [(name, None)]
        else:
            if args.durability is not None:
                durability(name, args.durability)
            runs.append((name, args.durability))
    if args.db and len(runs) > 1:
        raise errors.SpecError("crashtest: --db takes one engine and one durability setting (each needs its own "
                               "directory)")
    fault = None
    if args.fault:
        fault = forgetfs.Fault(args.fault, at=args.fault_at, on=args.fault_on, after=args.after_error,
                               enospc_bytes=args.enospc_bytes)
        args.power_loss = True   # forgetfs injects it
    elif args.fault_on or args.fault_at != 1 or args.go_on is not None or args.restart:
        raise errors.SpecError("crashtest: --fault-at, --fault-on, --go-on and --restart need --fault NAME (allowed: "
                               f"{', '.join(forgetfs.FAULTS)})")
    if not args.fault and (args.after_error != "keep" or args.enospc_bytes != 1 << 20):
        raise errors.SpecError("crashtest: --after-error and --enospc-bytes need --fault NAME (fsync-eio and enospc)")
    if args.fault and ((args.after_error != "keep" and args.fault != "fsync-eio")
                       or (args.enospc_bytes != 1 << 20 and args.fault != "enospc")):
        raise errors.SpecError("crashtest: --after-error applies to --fault fsync-eio, --enospc-bytes to --fault enospc")
    if args.same_boot and not args.power_loss:
        raise errors.SpecError("crashtest: --same-boot needs --power-loss (a kill alone never reboots)")
    if args.power_loss:
        forgetfs.require()
    if args.db:
        from ..execution.dbfiles import dbdir
        dbdir.check(args.db)
    if args.json:
        check_output_file(args.json, "--json")
    for t in args.tag:
        tag_value(t)
    if not args.no_store:
        Store(args.store).check()
    reports = []
    for name, setting in runs:
        def show(i, k, name=name):
            if k.kept_at:
                print(f"  {name} kill {i + 1}: the damaged database is kept in {k.kept_at}", flush=True)
            if args.verbose:
                state = k.reopen_error or (f"TORN ({k.torn_kind})" if k.torn else f"recovered to txn {k.recovered_to}")
                cut = "" if not k.cut else (f", the cut dropped {k.cut['pages_dropped']} pages and undid "
                                            f"{k.cut['entries_undone']} entries")
                print(f"  {name} kill {i + 1}: after {k.after_s:.2f} s, {k.acked} acked, {state}, "
                      f"{k.lost_txns} acked txns lost, reopen {k.recovery_ms or 0:.1f} ms{cut}"
                      + (f", boot id {k.boot_id[:8]}" if k.boot_id else ""), flush=True)
                for line in k.reopen_log[-3:]:
                    print(f"    the reader said: {line[:200]}", flush=True)
                if k.fault:
                    said = (f"the writer saw {k.writer_error['error']}: {k.writer_error['message'][:160]}"
                            if k.writer_error else "the writer saw no error")
                    print(f"    fault: {k.fault['errors']} error(s) on {k.fault['file'] or '-'}; {said}"
                          + (f"; the failed transaction {k.failed_txn} is "
                             f"{'present' if k.failed_present else 'absent'}" if k.failed_txn else ""), flush=True)
                if k.readback is not None:
                    print(f"    then: a get returned {k.readback['shown']} of its {k.readback['puts']} puts; "
                          f"{k.acked_after_error} later transactions acknowledged ({k.lost_after_error} of them lost "
                          f"at the cut)" + (f", until {k.later_error['error']}: {k.later_error['message'][:120]}"
                                            if k.later_error else ""), flush=True)
                if k.restart_saw_failed is not None or k.restart_error:
                    print("    restarted before the cut: " + (k.restart_error or (
                        "read the failed transaction" if k.restart_saw_failed else "no trace of the failed transaction")),
                          flush=True)
        r = crashtest(name, args.kills, sync=args.sync, db=args.db, seed=args.seed, batch=args.batch, num=args.num,
                      value_size=args.value_size, min_s=min(args.min_delay, args.max_delay), max_s=args.max_delay,
                      on_kill=show, power_loss=args.power_loss, loss=args.loss, setting=setting, settings=settings,
                      names=args.names, cut_on=args.cut_on, fault=fault, reboot_on_cut=not args.same_boot,
                      go_on=args.go_on, restart=args.restart)
        what = f"power cuts (loss {args.loss}, names {args.names})" if args.power_loss else "kills"
        if fault is not None:
            what += f", each after {fault.words()}"
        print(f"{name}{f' ({setting})' if setting else ''}: seed {r.seed}, {args.kills} {what}, {args.batch} writes "
              f"a transaction, keys 0..{args.num - 1}", flush=True)
        reports.append(r)
    print(format_table(reports))
    if args.json:
        write_json_atomic(args.json, [r.to_dict() for r in reports])
    if not args.no_store:
        store = Store(args.store)
        ids = [store.append_crashtest(r.to_dict(), args.tag) for r in reports]
        print(f"stored as {', '.join(ids)} in {store.path} (table crashtests)")
    bad = [r for r in reports if r.broken_promises]
    for r in bad:
        s = r.summary
        print(f"FAILED: {s['engine']} ({s['setting'] or 'sync ' + ('on' if s['sync'] else 'off')}, "
              f"promises {r.claim}): {s['reopen_failures']} reopen failures, "
              f"{s['torn_txns']} torn transactions, {s['acked_writes_lost']} acknowledged writes lost"
              + (f"; kept in {', '.join(s['kept'])}" if s["kept"] else ""))
    return 1 if bad else 0
