"""kvlab: run the classic key-value engine benchmarks natively from Python and notebooks.

    import kvlab
    result = kvlab.run(engine="lmdb", workload="fillseq,readrandom", num=100_000, threads=2)
    result.to_frame()
"""
__version__ = "0.1.0"

from .errors import KvlabError, SpecError, EngineError, EngineNotBuilt, UnsafeDirectory  # noqa: E402
from .spec import RunSpec, make_spec  # noqa: E402
from .runner import run, run_spec  # noqa: E402
from .results import BenchmarkResult, RunResult, load_json  # noqa: E402
from .engines import describe as list_engines  # noqa: E402

__all__ = ["run", "run_spec", "RunSpec", "make_spec", "RunResult", "BenchmarkResult", "load_json",
           "list_engines", "KvlabError", "SpecError", "EngineError", "EngineNotBuilt", "UnsafeDirectory"]
