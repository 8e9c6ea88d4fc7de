"""Write the notebooks in notebooks/ (thin: a papermill parameters cell, then calls into kvlab).
Re-run after editing this file; the notebooks are committed without outputs.  Every figure goes out through
plots.save with the results it draws, so the figure check (kvlab.lab.figcheck) runs on it."""
import hashlib
from pathlib import Path

import nbformat as nbf

OUT = Path(__file__).resolve().parent.parent / "notebooks"


def notebook(name, title, params, cells):
    nb = nbf.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells.append(nbf.v4.new_markdown_cell(title))
    p = nbf.v4.new_code_cell(params)
    p.metadata["tags"] = ["parameters"]
    nb.cells.append(p)
    for kind, src in cells:
        nb.cells.append(nbf.v4.new_markdown_cell(src) if kind == "md" else nbf.v4.new_code_cell(src))
    for i, cell in enumerate(nb.cells):   # ids from the place, not at random: regenerating changes only what changed
        cell["id"] = hashlib.sha1(f"{name}:{i}".encode()).hexdigest()[:8]
    nbf.write(nb, OUT / f"{name}.ipynb")


COMMON = '''import kvlab
from kvlab.lab import plots, reproduce
from pathlib import Path
out = Path(output_dir); out.mkdir(parents=True, exist_ok=True)'''

notebook("00_quickstart", "# kvlab quickstart\nEvery built engine on a small fillseq + readrandom, then the same "
         "workload through the Python bindings in a plain Python loop, beside kvlab's native loop.",
         '''# Parameters (papermill). scale: smoke | default | full (full = 1,000,000 keys)
scale = "default"
num = 200_000
engines = ["lmdb", "leveldb", "rocksdb", "wiredtiger-btree", "wiredtiger-lsm", "bdb"]
output_dir = "results/notebooks/00_quickstart"''',
         [("code", COMMON + '''
p = reproduce.resolve("quickstart", scale, num=num)
engines = reproduce.built(engines)'''),
          ("md", "## Run builder\nPick engines, workloads, scale, threads, value size and engine options; the "
                 "equivalent Python call and `kvlab run` command show below it. **Run** starts in the background "
                 "with live progress; **Stop** ends it within a second and keeps a partial result."),
          ("code", '''from kvlab.widgets import RunBuilder
builder = RunBuilder(engine_names=engines, num=10_000 if scale == "smoke" else 100_000)
builder'''),
          ("md", "## A run in the background\n`kvlab.start` returns at once; other cells keep executing while "
                 "the native threads work. `await` the handle (or poll `handle.done()`) for the result; "
                 "`handle.stop()` ends it early, marked partial."),
          ("code", '''handle = kvlab.start("lmdb", "fillseq,readrandom", num=p["num"], threads=2, progress=True)
handle'''),
          ("code", '''# this cell runs while the benchmark does
import os
print("load average while it runs:", os.getloadavg()[0])'''),
          ("code", '''background = await handle
background.to_frame()[["engine", "workload", "phase", "ops_per_sec", "latency_us.p99", "partial"]]'''),
          ("md", "## Every built engine, native loop"),
          ("code", '''native, results = reproduce.native_loop(engines, p["num"])
summary = kvlab.RunResult(results).to_frame()
summary[["engine", "workload", "threads", "ops_per_sec", "micros_per_op", "latency_us.p50", "latency_us.p99", "latency_us.p999"]]'''),
          ("code", '''fig = plots.latency_spectrum([b for b in results if b.workload == "readrandom" and b.threads == 1])
plots.save(fig, out, "quickstart_latency_spectrum", plots.caption(results, f"num={p['num']}"), results)'''),
          ("code", '''baseline = reproduce.python_loop_baseline(p["num"])
import pandas as pd
both = pd.concat([native, baseline], ignore_index=True)
both'''),
          ("code", '''long = both.melt(id_vars=["engine", "loop", "threads"], value_vars=["readrandom_ops_per_sec"], value_name="ops_per_sec")
long["config"] = long.loop + ", " + long.threads.astype(str) + " thr"
fig = plots.bars(long, x="engine", y="ops_per_sec", hue="config", title="readrandom: native loop vs Python loop", log=True)
plots.save(fig, out, "quickstart_native_vs_python", plots.caption(results, f"num={p['num']}"), results)''')])

notebook("01_read_scalability", "# Read scalability (seed 000, WiredTiger wiki 2013)\nreadrandom over a thread "
         "ladder on a freshly loaded database; us/op and ops/sec per thread count, beside the published tables. The "
         "ladder is a **sweep**: a grid (engines x threads, each point repeated) that runs point by point into the "
         "results store, skips the points already there, and comes back as one tidy frame.",
         '''# Parameters (papermill). Full scale (the seed): num = reads = 10_000_000, threads 1..32, cache 10 GB
scale = "default"
num = 1_000_000
reads = 1_000_000
threads = [1, 2, 4]
repeats = 3            # the median's interval needs 3 repeats (with 2 a point has its median and no interval)
cache_size = 1_000_000_000
engines = ["wiredtiger-btree", "leveldb"]
store = None           # None: a store in output_dir; a store's path (kvlab.store.Store().path, the results store) keeps finished points across runs
output_dir = "results/notebooks/01_read_scalability"''',
         [("code", COMMON + '''
p = reproduce.resolve("read_scalability", scale, num=num, reads=reads, threads=threads, repeats=repeats)
engines = reproduce.built(engines)'''),
          ("code", '''sweep = reproduce.read_scalability(engines, p["threads"], p["num"], p["reads"], cache_size=cache_size,
                                  repeats=p["repeats"], store=store or out / "kvlab.duckdb", name=f"read-scalability-{scale}")
sweep   # the grid: how many points, an estimate of the time, how many are stored already'''),
          ("md", "`sweep.run()` runs the points not yet stored, one after another (benchmarks do not share the "
                 "machine); interrupting the kernel loses at most the point in flight, and running the cell again "
                 "resumes. `sweep.start(progress=True)` runs it in the background; `sweep.run(client=...)` sends the "
                 "points to Dask workers, one benchmark per host at a time."),
          ("code", '''sweep.run(progress=True)'''),
          ("code", '''frame = sweep.frame()      # axes as columns; medians and their intervals across repeats (from 3)
measured = reproduce.read_scalability_table(frame)
results = sweep.results()
published = reproduce.published("seed000_read_scalability")
measured'''),
          ("code", '''published'''),
          ("code", '''cap = plots.caption(results, f"num={p['num']}, reads={p['reads']}/thread, threads={p['threads']}, {p['repeats']} repeats")
plots.save(plots.read_scalability(measured, published), out, "read_scalability_ops", cap, results)
plots.save(sweep.plot("ops_per_sec", x="threads"), out, "read_scalability_sweep", cap, results)
rel = reproduce.scaling_vs_published(measured, published)
plots.save(plots.speedup(rel[rel.threads <= max(p["threads"])]), out, "read_scalability_speedup", cap, results)
rel.pivot_table(index=["engine", "threads"], columns="source", values="speedup")'''),
          ("md", "The seed's shape: WiredTiger's throughput grows about linearly with threads while LevelDB's "
                 "flattens past 8 threads. On a 2-core machine only the first rungs exist; compare the speedup "
                 "columns above for the rungs measured.")])

notebook("02_readwhilewriting", "# In-memory readwhilewriting (seed 001, Symas 2014)\nThe load table and, per "
         "engine, readwhilewriting per reader count, with the ideal CPU % line.",
         '''# Parameters (papermill). Full scale (the seed): num = 100_000_000, readers 1..64, 600 s per run
scale = "default"
num = 1_000_000
readers = [1, 2, 4]
duration = 10.0
writes_per_second = 10_000
engines = ["lmdb", "leveldb", "rocksdb", "rocksdb-tuned", "wiredtiger-btree", "wiredtiger-lsm", "bdb"]
output_dir = "results/notebooks/02_readwhilewriting"''',
         [("code", COMMON + '''
p = reproduce.resolve("readwhilewriting", scale, num=num, readers=readers, duration=duration, writes_per_second=writes_per_second)
engines = reproduce.built(engines)'''),
          ("code", '''load, rww, results = reproduce.load_and_readwhilewriting(engines, p["num"], p["readers"], p["duration"], p["writes_per_second"])
load'''),
          ("code", '''reproduce.published("seed001_load")'''),
          ("code", '''rww'''),
          ("code", '''cap = plots.caption(results, f"num={p['num']}, readers={p['readers']}, {p['duration']} s per run")
plots.save(plots.bars(load, x="engine", y="wall_s", hue=None, title="load wall time (s)"), out, "rww_load_wall", cap, results)
plots.save(plots.rww(rww), out, "rww_rates_cpu", cap, results)'''),
          ("code", '''reproduce.rocksdb_tuning_report()'''),
          ("md", "Seed 001 found LMDB's read rate far ahead and scaling with readers, with CPU close to the ideal "
                 "line, while the LSM engines spend CPU in background threads (CPU % above ideal) and context "
                 "switch heavily. Compare the shape above at this machine's reader counts.")])

notebook("03_dbbench_suite", "# WiredTiger LSM vs RocksDB db_bench suite (seed 002)\nfillseq, fillrandom then "
         "compact, overwrite, readrandom with 800-byte values and snappy.",
         '''# Parameters (papermill). Full scale (the seed): num = 50_000_000, reads = 500_000, 32 threads
scale = "default"
num = 500_000
reads = 100_000
threads = 2
value_size = 800
engines = ["wiredtiger-lsm", "rocksdb"]
output_dir = "results/notebooks/03_dbbench_suite"''',
         [("code", COMMON + '''
p = reproduce.resolve("dbbench_suite", scale, num=num, reads=reads, threads=threads)
engines = reproduce.built(engines)'''),
          ("code", '''measured, results = reproduce.dbbench_suite(engines, p["num"], p["reads"], p["threads"], value_size=value_size)
measured'''),
          ("code", '''published = reproduce.published("seed002_dbbench")
published'''),
          ("code", '''reproduce.engine_ratio(measured, base=engines[-1]) if len(engines) > 1 else None'''),
          ("code", '''cap = plots.caption(results, f"num={p['num']}, reads={p['reads']}, {p['threads']} threads, {value_size} B values")
plots.save(plots.bars(measured, x="benchmark", y="ops_per_sec", title="db_bench suite: ops/sec", log=True), out, "dbbench_ops", cap, results)
plots.save(plots.bars(measured, x="benchmark", y="p99_us", title="db_bench suite: p99 latency", log=True, results=results), out, "dbbench_p99", cap, results)'''),
          ("md", "Seed 002 reports the engines' ratio per benchmark; the ratio table above is the comparable "
                 "figure, since absolute numbers across machines mean little.")])
notebook("04_transactions", "# Transactions (seed 003, FoundationDB \"Benchmarking\")\nThe page's six single-core "
         "tests (1 write, 10 writes, 10 writes x 100 clients, 10 reads x 100 clients, 9 reads + 1 write x 100 clients, "
         "one 1000-key range read x 100 clients) as kvlab presets, on every built embedded engine, with sync on as "
         "FoundationDB commits. FoundationDB itself cannot run here (no reachable registry ships libfdb_c or "
         "fdbserver), so its published numbers stand beside the embedded engines'.",
         '''# Parameters (papermill). Full scale (the seed): num = 1_000_000, duration = 60 s, 100 clients, one core
scale = "default"
num = 100_000
duration = 3.0
max_clients = 100
cpus = None            # "0" pins the run, engine threads included, to one core as the seed did
engines = ["lmdb", "leveldb", "rocksdb", "wiredtiger-btree", "wiredtiger-lsm", "bdb"]
output_dir = "results/notebooks/04_transactions"''',
         [("code", COMMON + '''
p = reproduce.resolve("transactions", scale, num=num, duration=duration, max_clients=max_clients)
engines = reproduce.built(engines)'''),
          ("code", '''measured, results = reproduce.seed003(engines, p["num"], p["duration"], p["max_clients"], cpus=cpus)
measured.pivot(index="engine", columns="test", values="value")'''),
          ("code", '''published = reproduce.published("seed003_fdb")
published'''),
          ("md", "Absolute numbers across machines and systems mean little; the page's two claims are ratios. "
                 "**Batching**: 10 writes per commit gave FoundationDB about 9x, because every commit waits for "
                 "an fsync; the embedded engines with sync on should show the same shape. **Concurrency**: 100 "
                 "clients gave FoundationDB about 5x over one; an engine with group commit (the LSMs) can share one "
                 "fsync among many writers, a single-writer B-tree cannot."),
          ("code", '''shape = reproduce.seed003_shape(measured, published)
shape'''),
          ("code", '''from IPython.display import Markdown
Markdown("\\n\\n".join(reproduce.seed003_sentences(measured, published)))'''),
          ("code", '''cap = plots.caption(results, f"num={p['num']}, {p['duration']} s a test, sync on, clients up to {p['max_clients']}")
long = shape.melt(id_vars="engine", var_name="comparison", value_name="gain")
plots.save(plots.bars(long, x="comparison", y="gain", ylabel="gain (x, a ratio of rates)", title="seed 003's two ratios: FoundationDB beside the embedded engines"), out, "transactions_ratios", cap, results)
plots.save(plots.seed003_tests(measured, published), out, "transactions_tests", cap, results)''')])

notebook("05_ycsb", "# YCSB A-F and the latency-throughput curve\nYCSB's core workloads (the properties of its own "
         "workload files: zipfian keys as YCSB draws them, 1 KB records) on every built engine, then an open-loop "
         "rate ladder from light load past saturation: service time (from each transaction's actual start) and "
         "response time (from its intended start) on the same axes.",
         '''# Parameters (papermill). Full scale: num = operations = 10_000_000
scale = "default"
num = 100_000
operations = 100_000
clients = 2
rates = [1_000, 10_000, 100_000, 400_000, 1_000_000, 2_000_000, 4_000_000]
seconds = 2.0
curve_engine = "lmdb"
engines = ["lmdb", "leveldb", "rocksdb", "wiredtiger-btree", "wiredtiger-lsm", "bdb"]
output_dir = "results/notebooks/05_ycsb"''',
         [("code", COMMON + '''
p = reproduce.resolve("ycsb", scale, num=num, operations=operations, clients=clients, rates=rates, seconds=seconds)
engines = reproduce.built(engines)'''),
          ("code", '''suite, results = reproduce.ycsb_suite(engines, p["num"], p["operations"], p["clients"])
suite.pivot(index="engine", columns="workload", values="txn_per_sec")'''),
          ("code", '''cap = plots.caption(results, f"num={p['num']}, {p['operations']} operations, {p['clients']} clients")
plots.save(plots.bars(suite, x="workload", y="txn_per_sec", title="YCSB A-F: transactions/s", log=True), out, "ycsb_throughput", cap, results)'''),
          ("code", '''curve, curve_results = reproduce.latency_throughput(curve_engine, p["rates"], p["seconds"], p["clients"], p["num"])
curve'''),
          ("md", "Where the achieved rate stops following the target, the engine is saturated: from there the "
                 "response time (what a client arriving at that rate would wait) grows with the queue, while the "
                 "service time stays flat. A closed-loop benchmark only ever shows the service time."),
          ("code", '''plots.save(plots.latency_throughput(curve), out, "ycsb_latency_throughput",
           plots.caption(curve_results, f"{curve_engine} YCSB-C, {p['clients']} clients, {p['seconds']} s a rate"), curve_results)''')])

notebook("06_linkbench", "# LinkBench, cached and larger than RAM (seed 004)\nThe seed ran LinkBench through MongoDB "
         "on WiredTiger, RocksDB, TokuMX and mmapv1 (12 clients, a load, then 12 one-hour request runs), once with "
         "the database in RAM and once larger than RAM. kvlab runs LinkBench's graph, load and request mix natively "
         "on every built engine (RocksDB and WiredTiger are the seed's own; LMDB, LevelDB and BerkeleyDB join them). "
         "The 12 hours become `intervals` x `interval_seconds`; *larger than RAM* is a memory cgroup of "
         "`memory_limit` (page cache and engine cache inside it) around a database that outgrows it.",
         """# Parameters (papermill). Full scale: maxid1 = 10_000_001, 12 x 60 s, memory_limit = "2G" with
# bounded_maxid1 = 30_000_001 (the seed: 12 x 1 hour, 144 GB RAM, a 600-700 GB database)
scale = "default"
maxid1 = 100_001
bounded_maxid1 = 1_000_001
requesters = 12
intervals = 12
interval_seconds = 5.0
memory_limit = "384M"
engines = ["lmdb", "leveldb", "rocksdb", "wiredtiger-btree", "wiredtiger-lsm", "bdb"]
output_dir = "results/notebooks/06_linkbench"
""",
         [("code", COMMON + """
p = reproduce.resolve("linkbench", scale, maxid1=maxid1, bounded_maxid1=bounded_maxid1, requesters=requesters,
                      intervals=intervals, interval_seconds=interval_seconds, memory_limit=memory_limit)
engines = reproduce.built(engines)
import pandas as pd"""),
          ("md", "## Cached: the database fits in memory"),
          ("code", """qps_c, lat_c, io_c, res_c = reproduce.seed004(engines, p["maxid1"], p["requesters"], p["intervals"], p["interval_seconds"])
qps_c.pivot(index="interval", columns="engine", values="qps")"""),
          ("md", "## Larger than RAM: the same run in a memory cgroup smaller than the database"),
          ("code", """qps_b, lat_b, io_b, res_b = reproduce.seed004(engines, p["bounded_maxid1"], p["requesters"], p["intervals"], p["interval_seconds"], memory_limit=p["memory_limit"])
qps_b.pivot(index="interval", columns="engine", values="qps")"""),
          ("code", """qps, lat, io = pd.concat([qps_c, qps_b]), pd.concat([lat_c, lat_b]), pd.concat([io_c, io_b])
pub_qps, pub_lat, pub_io = reproduce.published("seed004_qps"), reproduce.published("seed004_latency"), reproduce.published("seed004_io")
cap = plots.caption(res_c + res_b, f"maxid1={p['maxid1']:,} cached, {p['bounded_maxid1']:,} in {p['memory_limit']}; {p['requesters']} requesters, {p['intervals']} x {p['interval_seconds']} s")
fig = plots.linkbench_qps(qps, pub_qps)
plots.save(fig, out, "linkbench_qps", cap, res_c + res_b)"""),
          ("md", "## Mean latency of the three most frequent writes and lists (ms), published beside measured"),
          ("code", """reproduce.seed004_latency_table(lat, pub_lat, "cached")"""),
          ("code", """reproduce.seed004_latency_table(lat, pub_lat, "larger_than_ram")"""),
          ("code", """lat.pivot_table(index=["setting", "engine"], columns="operation", values="p99")"""),
          ("md", "## I/O per query (disk reads, KB read, KB written), larger than RAM"),
          ("code", """pd.concat({"measured": io.set_index(["setting", "engine"]), "published": pub_io.drop(columns="engine").set_index(["setting", "engine_published"])})"""),
          ("md", "## Does the shape agree?\nAbsolute numbers across machines (and through MongoDB) mean little; the "
                 "seed's findings are comparisons between engines. Each line is one ratio, RocksDB over WiredTiger."),
          ("code", """ratios = reproduce.seed004_ratios(qps, lat, io, pub_qps, pub_lat, pub_io)
from IPython.display import Markdown
Markdown("\\n".join(reproduce.seed004_sentences(ratios)))"""),
          ("code", """plots.save(plots.bars(io, x="engine", y="kb_written_per_query", hue="setting", title="KB written per query"), out, "linkbench_kb_written", cap, res_c + res_b)""")])

print("notebooks written to", OUT)
