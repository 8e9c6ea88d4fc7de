"""A campaign that tries to lose data (issue 33): random pairs of kvlab commands on one --db and one results store,
started together, each sent SIGINT, SIGTERM, SIGHUP or SIGKILL (or nothing) at a random moment.

After each case it checks what a user may rely on:
  - the database in --db opens and holds every record, unless a command of the pair was asked to replace it (a
    fresh fillseq of the same engine, or --overwrite); one that was so asked and cut leaves a database that opens
    and whose marker says the load was cut;
  - the results store opens and lists its runs;
  - no temporary database is left, except after a SIGKILL, and `kvlab clean` then removes exactly those.
A case that breaks one is a loss, printed with its commands and signals.  The database is put back from a copy
after a case that replaced it.

    python scripts/lose_data_campaign.py --cases 1000 --seed 1            # the campaign (about an hour here)
    python scripts/lose_data_campaign.py --cases 8                        # what tests/test_never_lose.py runs
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

NUM = 20_000
SIGNALS = (None, signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL)


def commands(engine: str, other: str, db: str) -> dict:
    """name -> (argv after `kvlab`, whether it may replace the database)."""
    return {
        "read": (["run", "--engine", engine, "--workload", "readrandom", "--use-existing-db", "--db", db, "--num",
                  str(NUM), "--duration", "1.5"], False),
        "overwrite": (["run", "--engine", engine, "--workload", "overwrite", "--use-existing-db", "--db", db, "--num",
                       str(NUM), "--duration", "1"], False),
        "fresh-fill": (["run", "--engine", engine, "--workload", "fillseq", "--db", db, "--num", str(NUM)], True),
        "other-engine": (["run", "--engine", other, "--workload", "fillseq", "--db", db, "--num", "2000"], False),
        "other-engine-overwrite": (["run", "--engine", other, "--workload", "fillseq", "--db", db, "--num", "2000",
                                    "--overwrite"], True),
        "dbbench-read": (["dbbench", "--engine", engine, "--benchmarks=readrandom", "--use_existing_db=1", f"--db={db}",
                          f"--num={NUM}", "--reads=20000"], False),
        "temporary": (["run", "--engine", engine, "--workload", "fillseq,readrandom", "--num", "200000"], False),
        "results": (["results", "list"], False),
    }


def kvlab(argv, env) -> subprocess.Popen:
    """One command, its stderr in a file (a pipe nobody reads while it runs fills up: `results list` over a
    store of hundreds of runs blocked on its stdout), its stdout dropped."""
    err = tempfile.TemporaryFile(mode="w+")
    p = subprocess.Popen([sys.executable, "-m", "kvlab.cli", *argv, "--quiet"] if argv[0] != "results" else
                         [sys.executable, "-m", "kvlab.cli", *argv], env=env, stdout=subprocess.DEVNULL,
                         stderr=err, text=True, start_new_session=True)
    p.err_file = err
    return p


def stderr_of(p) -> str:
    p.err_file.seek(0)
    text = p.err_file.read()
    p.err_file.close()
    return text


def records(engine: str, db: Path) -> tuple:
    """(records a readseq finds, or None and the error)."""
    import kvlab
    try:
        r = kvlab.run(engine, "readseq", num=NUM, db=str(db), use_existing_db=True, interval=0)
        return r[0].found, None
    except Exception as exc:   # a loss to report, not to stop at
        return None, f"{type(exc).__name__}: {exc}"


def load_reference(engine: str, where: Path) -> Path:
    import kvlab
    ref = where / f"reference-{engine}"
    kvlab.run(engine, "fillseq", num=NUM, db=str(ref), interval=0, seed=1)
    return ref


def restore(ref: Path, db: Path):
    shutil.rmtree(db, ignore_errors=True)
    subprocess.run(["cp", "-a", "--sparse=always", str(ref), str(db)], check=True)


def one_case(i, rng, engines, refs, work, env, store) -> dict:
    engine = rng.choice(engines)
    other = rng.choice([e for e in engines if e != engine])
    db = work / "db"
    if not db.exists() or json.loads((db / ".kvlab-db").read_text()).get("engine") != engine:
        restore(refs[engine], db)
    table = commands(engine, other, str(db))
    names = [rng.choice(list(table)) for _ in range(2)]
    sigs = [rng.choice(SIGNALS) for _ in range(2)]
    delays = [rng.uniform(0.0, 2.5) for _ in range(2)]
    procs = []
    for name in names:
        procs.append(kvlab(table[name][0], env))
        time.sleep(rng.uniform(0, 0.3))
    t0 = time.monotonic()
    pending = sorted(range(2), key=lambda k: delays[k])
    for k in pending:
        if sigs[k] is None:
            continue
        time.sleep(max(0.0, delays[k] - (time.monotonic() - t0)))
        if procs[k].poll() is None:
            procs[k].send_signal(sigs[k])
        else:
            sigs[k] = None   # it ended first: no signal reached it
    codes = [p.wait(300) for p in procs]
    errs = [stderr_of(p) for p in procs]
    case = {"case": i, "engine": engine, "commands": names, "signals": [s.name if s else "-" for s in sigs],
            "codes": codes, "problems": [], "stderr": errs}
    killed = signal.SIGKILL in sigs
    replaced = [table[n][1] for n in names]
    # the store
    check = subprocess.run([sys.executable, "-m", "kvlab.cli", "results", "list", "--store", str(store)], env=env,
                           capture_output=True, text=True)
    if check.returncode != 0:
        case["problems"].append(f"store: {check.stderr.strip()[-300:]}")
    # the database
    marker = json.loads((db / ".kvlab-db").read_text()) if (db / ".kvlab-db").exists() else {}
    now_engine = marker.get("engine", engine)
    found, error = records(now_engine, db)
    # a replacing command that was not refused (exit 2 is also a run whose result the store could not take, saved
    # as a JSON file: that one did replace)
    refused = [codes[k] == 2 and "unsaved-run" not in errs[k] for k in range(2)]
    asked = any(r and not refused[k] for k, r in enumerate(replaced))
    load = marker.get("load") or {}
    if error is not None and not (asked and error.startswith("NoDatabase")):   # cleared as asked, nothing written
        case["problems"].append(f"database does not open: {error}")
    elif error is None and not asked and (now_engine != engine or found != NUM):
        case["problems"].append(f"database lost records: {found} of {NUM} ({now_engine})")
    elif error is None and asked and load.get("complete") and found != load.get("records"):
        # a replacement that says it is whole must hold what it says (a cut one must say it is cut)
        case["problems"].append(f"replacement marked whole holds {found} records, marker {load}")
    elif error is None and asked and not load and found != NUM:
        case["problems"].append(f"replacement without a load record: {found} records")
    for k, code in enumerate(codes):   # a refusal must be the clear one, a stop must say its signal
        if sigs[k] is None and code not in (0, 2):
            case["problems"].append(f"{names[k]} exited {code} without a signal: {errs[k][-400:]}")
        # a signal kvlab handled: 128 + its number; one that came before kvlab started (the interpreter's
        # start-up) ends it as the signal's default does (-N)
        if sigs[k] is not None and code not in (0, 2, 128 + sigs[k], -sigs[k]):
            case["problems"].append(f"{names[k]} exited {code} after {sigs[k].name}: {errs[k][-400:]}")
        if code == 2 and "kvlab: error: " not in errs[k]:
            case["problems"].append(f"{names[k]} exited 2 without an error line: {errs[k][-400:]}")
        early = sigs[k] is not None and code == -sigs[k]   # it came in the interpreter's start-up, before kvlab's
        #                                                    handlers: Python's own (SIGINT: KeyboardInterrupt)
        if "Traceback" in errs[k] and not (early and errs[k].rstrip().endswith("KeyboardInterrupt")):
            case["problems"].append(f"{names[k]} printed a traceback: {errs[k][-400:]}")
    # temporary databases
    left = [p for p in Path(env["KVLAB_TMPDIR"]).iterdir()]
    if left and not killed:
        case["problems"].append(f"temporary databases left without a SIGKILL: {[p.name for p in left]}")
    if killed:
        subprocess.run([sys.executable, "-m", "kvlab.cli", "clean"], env=env, capture_output=True, check=False)
        still = [p.name for p in Path(env["KVLAB_TMPDIR"]).iterdir()]
        if still:
            case["problems"].append(f"kvlab clean left {still}")
    case["replaced"] = asked
    if asked or found != NUM or now_engine != engine:
        restore(refs[engine], db)
    return case


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--engines", default="lmdb,rocksdb", help="comma list: the database's engine and the other")
    ap.add_argument("--workdir", default=None, help="where its databases go (default: a temporary folder)")
    args = ap.parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 2**31)
    rng = random.Random(seed)
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    work = Path(args.workdir or tempfile.mkdtemp(prefix="kvlab-campaign-"))
    work.mkdir(parents=True, exist_ok=True)
    tmp = work / "tmp"
    tmp.mkdir(exist_ok=True)
    store = work / "store.duckdb"
    env = {**os.environ, "KVLAB_TMPDIR": str(tmp), "KVLAB_RESULTS": str(store)}
    os.environ.update(KVLAB_TMPDIR=str(tmp), KVLAB_RESULTS=str(store))
    refs = {e: load_reference(e, work) for e in engines}
    print(f"campaign: {args.cases} cases, seed {seed}, engines {', '.join(engines)}, in {work}", flush=True)
    lost, by_command, by_signal = [], Counter(), Counter()
    started = time.monotonic()
    for i in range(args.cases):
        case = one_case(i, rng, engines, refs, work, env, store)
        by_command.update(case["commands"])
        by_signal.update(case["signals"])
        if case["problems"]:
            lost.append(case)
            print(f"LOSS in case {i}: {json.dumps({k: v for k, v in case.items() if k != 'stderr'})}", flush=True)
            (work / f"problem-{i}.json").write_text(json.dumps(case, indent=1))   # whole stderr, for a diagnosis
        if (i + 1) % 50 == 0:
            print(f"  {i + 1} cases, {len(lost)} with a problem, {time.monotonic() - started:.0f} s", flush=True)
    print()
    print("| cases | commands run | signals sent | databases lost or corrupted | stores corrupted | "
          "temporary databases left |")
    print("|---|---|---|---|---|---|")
    sent = sum(v for k, v in by_signal.items() if k != "-")
    db_lost = sum(any(p.startswith(("database", "cut")) for p in c["problems"]) for c in lost)
    stores = sum(any(p.startswith("store") for p in c["problems"]) for c in lost)
    temps = sum(any(p.startswith(("temporary", "kvlab clean")) for p in c["problems"]) for c in lost)
    print(f"| {args.cases} | {2 * args.cases} | {sent} | {db_lost} | {stores} | {temps} |")
    print("commands: " + ", ".join(f"{k} {v}" for k, v in sorted(by_command.items())))
    print("signals: " + ", ".join(f"{k} {v}" for k, v in sorted(by_signal.items())))
    print(f"seed {seed}; {time.monotonic() - started:.0f} s")
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
