"""Every benchmark of kvlab's own targets, at a scale that finishes in a few minutes on 2 cores.

    python benchmarks/run_all.py [--only a.py,b.py]
"""
import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = (("vs_dbbench.py", []), ("harness_overhead.py", []), ("scaling.py", []),
           ("scaling_vs_bare.py", ["--num", "200000", "--reads", "500000", "--rounds", "5"]), ("memory.py", []),
           ("accounting_cost.py", []), ("harness_instructions.py", []), ("progress_overhead.py", []),
           ("distributions.py", []), ("mix_loop.py", []), ("open_loop.py", ["--seconds", "1"]),
           ("result_size.py", []), ("compare_speed.py", []), ("report_speed.py", []),
           ("vs_reference.py", ["--num", "200000", "--duration", "1", "--rounds", "3"]),
           ("instrument_cost.py", ["--num", "200000", "--seconds", "1", "--rounds", "3"]),
           ("worker_cost.py", ["--rounds", "10"]),
           ("profile_cost.py", ["--rounds", "4"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=None, help="comma list of the scripts to run (default: all)")
    args = ap.parse_args()
    wanted = args.only.split(",") if args.only else [s for s, _ in SCRIPTS]
    for script, extra in SCRIPTS:
        if script in wanted:
            print(f"\n=== {script}", flush=True)
            subprocess.run([sys.executable, str(HERE / script), *extra], check=True)


if __name__ == "__main__":
    main()
