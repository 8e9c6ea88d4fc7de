"""The results store never loses a run: a child process appends runs to one DuckDB store as fast as it
can and says each run id once `Store.append` has returned; the parent kills it with SIGKILL at a random
moment (seeded, every delay recorded), opens the store, and checks that every run the child finished
appending is there, every time, across all kills (the store keeps growing).

    python benchmarks/store_kill_campaign.py [--kills 100] [--seed 1] [--dir DIR] [--max-delay 0.6]

Prints: kills, runs finished appending, runs lost (must be 0), unopenable stores (must be 0), and the
runs that were committed before the kill but not yet reported (neither lost nor counted as finished).
Exit status 1 if a run was lost or a store did not open.  tests/test_store_safety.py runs it small.
"""
import argparse
import json
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHILD = """
import sys
sys.path.insert(0, {root!r})
from kvlab.results.result import load_json
from kvlab.results.store import Store
result = load_json({run_json!r})
store = Store({store!r})
print("ready", flush=True)
n = 0
while True:
    run_id = "{tag}-%06d" % n
    store.append(result, run_id=run_id)
    print("appended", run_id, flush=True)
    n += 1
"""


def make_run(path: Path):
    """One real run (null engine: the harness alone, with per-interval rows) as the record to append."""
    import kvlab
    r = kvlab.run("null", "fillseq,readrandom", num=100_000, duration=0.3, interval=0.05, seed=1)
    r.write_json(path)


def stored_ids(store_path: Path) -> set:
    """The run ids in the store; no file yet (killed before its first append) holds none."""
    from kvlab.results.store import Store
    if not store_path.exists():
        return set()
    return set(Store(store_path).frame()["run_id"])


def campaign(kills: int, seed: int, folder: Path, max_delay: float, out=print) -> dict:
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    run_json = folder / "run.json"
    if not run_json.exists():
        make_run(run_json)
    store = folder / "kvlab.duckdb"
    finished, stored, delays, unopenable, lost_total = set(), set(), [], 0, set()
    for k in range(kills):
        delay = rng.uniform(0.0, max_delay)
        delays.append(delay)
        code = CHILD.format(root=str(ROOT), run_json=str(run_json), store=str(store), tag=f"k{k:03d}")
        child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
        first = child.stdout.readline()
        if first.strip() != "ready":
            raise SystemExit(f"child {k} did not start: {first}{child.stderr.read()}")
        time.sleep(delay)
        child.send_signal(signal.SIGKILL)
        rest, err = child.communicate()
        if child.returncode != -signal.SIGKILL:
            raise SystemExit(f"child {k} ended by itself ({child.returncode}): {err[-2000:]}")
        finished |= {line.split()[1] for line in rest.splitlines() if line.startswith("appended ")}
        try:
            stored = stored_ids(store)
        except Exception as exc:   # noqa: BLE001 - any failure to open counts, and is shown
            unopenable += 1
            out(f"kill {k}: the store did not open: {type(exc).__name__}: {exc}")
            continue
        lost = finished - stored
        if lost - lost_total:
            out(f"kill {k} (after {delay:.3f} s): lost {sorted(lost - lost_total)}")
        lost_total |= lost
    return {"kills": kills, "seed": seed, "runs_finished": len(finished), "runs_lost": len(lost_total),
            "unopenable_stores": unopenable, "runs_stored": len(stored),
            "stored_not_reported": len(stored - finished), "delay_s": [round(d, 4) for d in delays]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", default=None, help="where the store goes (default: a new temporary folder)")
    ap.add_argument("--max-delay", type=float, default=0.6, help="kill within this many seconds of start")
    ap.add_argument("--json", default=None, help="also write the figures here")
    args = ap.parse_args()
    folder = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="kvlab-store-kills-"))
    t0 = time.monotonic()
    res = campaign(args.kills, args.seed, folder, args.max_delay)
    res["seconds"] = round(time.monotonic() - t0, 1)
    res["store"] = str(folder / "kvlab.duckdb")
    print(f"kills: {res['kills']}  (seed {res['seed']}, kill delays 0-{args.max_delay:g} s after start)")
    print(f"runs finished appending: {res['runs_finished']}")
    print(f"runs lost: {res['runs_lost']}")
    print(f"unopenable stores: {res['unopenable_stores']}")
    print(f"committed before the kill but not yet reported: {res['stored_not_reported']}")
    print(f"store: {res['store']} ({res['runs_stored']} runs), {res['seconds']} s")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1) + "\n")
    return 1 if res["runs_lost"] or res["unopenable_stores"] else 0


if __name__ == "__main__":
    sys.exit(main())
