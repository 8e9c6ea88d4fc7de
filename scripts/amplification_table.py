"""The amplification table of a campaign folder (scripts/seed002_amplification.sh writes one --json per engine):
per engine and phase, write amplification from the process's storage writes and from the engine's own counters,
read amplification as the process's bytes read per read op, space amplification, the phase's ops/s and wall time,
as a Markdown table.  Device-wide figures (/proc/diskstats) are left out: another process writing to the same disk
meanwhile counts in them.

    python scripts/amplification_table.py DIR
"""
import json
import sys
from pathlib import Path


def fmt(v, spec="{:.2f}"):
    return "-" if v is None else spec.format(v)


def main(folder: str) -> None:
    rows = ["| engine | phase | ops/s | wall s | write amp (process) | write amp (engine) | read bytes/read (process)"
            " | space amp | DB size after |",
            "|---|---|---|---|---|---|---|---|---|"]
    for path in sorted(Path(folder).glob("*.json")):
        for b in json.loads(path.read_text()):
            a = b.get("amplification") or {}
            acct = b.get("accounting") or {}
            rows.append(f"| {b['engine']} | {b['workload']} | {b['ops'] / b['seconds']:,.0f} | {b['seconds']:.0f} | "
                        f"{fmt(a.get('write_amp'))} | {fmt(a.get('write_amp_engine'))} | "
                        f"{fmt(a.get('process_read_bytes_per_read'), '{:,.0f}')} | {fmt(a.get('space_amp'))} | "
                        f"{fmt((acct.get('db_size_bytes') or 0) / 2**30, '{:.1f} GiB')} |")
    print("\n".join(rows))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "results/seed002-amplification")
