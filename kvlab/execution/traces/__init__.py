"""Traces: kvlab's own trace files (`fileformat`: recorded by a run, read back), the importers of other formats
(`rocksdb`: db_bench's --trace_file; `cachecsv`: the cacheMon cache traces), and what a replay runs (`replay`:
the formats detected, recorded threads mapped onto replay threads, the speed).  docs/traces.md describes the
format."""
