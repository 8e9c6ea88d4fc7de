"""Every benchmark of kvlab's own targets, at a scale that finishes in a few minutes on 2 cores."""
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for script, args in (("vs_dbbench.py", []), ("harness_overhead.py", []), ("scaling.py", []), ("memory.py", []),
                     ("accounting_cost.py", []), ("harness_instructions.py", []),
                     ("progress_overhead.py", []), ("distributions.py", []), ("mix_loop.py", []), ("open_loop.py", ["--seconds", "1"]),
                     ("result_size.py", []), ("compare_speed.py", []), ("report_speed.py", [])):
    print(f"\n=== {script}", flush=True)
    subprocess.run([sys.executable, str(HERE / script), *args], check=True)
