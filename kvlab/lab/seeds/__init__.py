"""The published benchmarks' experiments, one module per seed; `kvlab.lab.reproduce` is the face the notebooks
call and re-exports them all.

    common.py            the scale presets and memory budgets, resolve(), built(), published(), budget_line()
    read_scalability.py  seed 000: the read thread ladder (notebook 01)
    readwhilewriting.py  seed 001: load, then readwhilewriting per reader count (notebook 02)
    dbbench_suite.py     seed 002: db_bench's fill, compact, overwrite, read suite (notebook 03)
    transactions.py      seed 003: FoundationDB's transaction tests on the embedded engines (notebook 04)
    ycsb.py              YCSB A-F and the open-loop latency-throughput curve (notebook 05)
    linkbench.py         seed 004: LinkBench, cached and larger than RAM (notebook 06)
    durability.py        every engine's durability settings crashed by SIGKILL and power cuts (notebook 07)
    versions.py          one engine's versions side by side, `kvlab versions`' Small Datum table (notebook 08)
    lsm_family.py        the LSM family side by side: fillrandom, overwrite, readrandom, amplification (10)
    field.py             workloads from the field: a trace replayed, mixgraph, a sine-paced run, p99 searches (09)
    quickstart.py        the native loop beside the Python-binding baseline (notebook 00)
    bindings.py          the Python bindings, one small adapter class each, and their registry
    plan.py              a notebook's runs as data (Step): the experiments walk them, the estimate costs them
    claims.py            the seeds' claims tested on an experiment's frames (verdicts), stored with their runs;
                         `kvlab reproduce`'s runners; verdict_text.py the table as text, verdictframe.py as a
                         notebook shows it

Each seed module's experiments are made from plans: `<experiment>_plan(...)` returns its Steps before anything
runs, `<experiment>(...)` runs them; `notebook_plan(p, engines)` is its notebook's whole plan, which
kvlab.lab.estimate costs.
"""
