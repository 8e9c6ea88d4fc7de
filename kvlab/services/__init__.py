"""Layer 4, services: what both faces (kvlab/lab, the notebook face, and kvlab/cli, the command) use and neither
owns: the progress renderers for a terminal or a log (`progress`), the estimate's cost model (`estimate`: time,
disk and memory from the store's rates; the notebook face adds what each notebook runs), the sweep facade
(`sweeps.Sweep`: points, pending, estimate, run here or on Dask; the notebook face adds a widget and plots), the
main job (`maincompare`) and the best rate under a latency bound (`sla`: `kvlab sla` and `kvlab.sla`)."""
