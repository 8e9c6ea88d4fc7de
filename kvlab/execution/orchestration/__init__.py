"""Runs of runs: sweeps point by point (`sweep`) or on Dask (`dask_sweep`), background runs (`background`),
two specs interleaved in fair rounds (`interleave`), LinkBench's phases (`linkbench`)."""
