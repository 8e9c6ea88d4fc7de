"""Open loop holds its schedule: a rate ladder from light load past saturation, on one engine, with
YCSB-C (reads) by default.  For each target rate: achieved rate and its ratio to the target, the
median lag between a transaction's intended and actual start, and service time (from the actual
start) beside response time (from the intended start: what a client of a system under this
arrival rate would see; YCSB's "intended" latency).  The rows are the latency-throughput curve.

    python benchmarks/open_loop.py [--engine lmdb] [--workload ycsb-c] [--clients 2] [--seconds 3]
                                   [--rates 1000,10000,50000,100000,200000,400000,1000000]

Targets (issue "Workloads as data"): at a rate the engine sustains, achieved within 1% of the
target and median start lag under 5 us.
"""
import argparse

from _common import kvlab


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default="lmdb")
    ap.add_argument("--workload", default="ycsb-c")
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--num", type=int, default=100_000)
    ap.add_argument("--rates", default="1000,10000,100000,400000,1000000,2000000,4000000")
    args = ap.parse_args()
    print(f"{args.engine} {args.workload}, {args.clients} clients, {args.seconds:g} s a rate, uniform arrivals")
    print(f"{'target/s':>10} {'achieved/s':>11} {'ratio':>7} {'lag p50 us':>11} {'service p50':>12} "
          f"{'service p99':>12} {'response p50':>13} {'response p99':>13}")
    for rate in (float(x) for x in args.rates.split(",")):
        reads = max(1, int(rate * args.seconds / args.clients))
        r = kvlab.run(args.engine, args.workload, num=args.num, reads=reads, threads=args.clients,
                      target_rate=rate, seed=1, interval=0)
        b = r[-1]
        p = b.mix["pacing"]
        svc = b.latency_us
        resp = b.latency_by_op["response"]
        print(f"{rate:>10,.0f} {p['achieved_rate']:>11,.0f} {p['achieved_ratio']:>7.4f} "
              f"{p['start_lag_us']['p50']:>11.2f} {svc['p50']:>12.2f} {svc['p99']:>12.2f} "
              f"{resp['p50']:>13.2f} {resp['p99']:>13.2f}")


if __name__ == "__main__":
    main()
