"""kvlab: run the classic key-value engine benchmarks natively from Python and notebooks.

    import kvlab
    result = kvlab.run(engine="lmdb", workload="fillseq,readrandom", num=100_000, threads=2)
    result.to_frame()
"""
__version__ = "0.1.0"

import os as _os

# numpy's OpenBLAS starts a pool of spinning threads that compete with the engine's
# threads for the cores (3% of CPU in a RocksDB readrandom profile on 2 cores); kvlab
# never needs parallel BLAS.  Set before numpy is imported; an explicit setting wins.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    _os.environ.setdefault(_var, "1")

from .errors import KvlabError, SpecError, EngineError, EngineNotBuilt, UnsafeDirectory  # noqa: E402
from .spec import RunSpec, make_spec  # noqa: E402
from .runner import run, run_spec  # noqa: E402
from .results import BenchmarkResult, RunResult, load_json  # noqa: E402
from .engines import describe as list_engines  # noqa: E402
from .progress import Progress, RunControl  # noqa: E402
from .background import RunHandle, start, start_spec  # noqa: E402

__all__ = ["run", "run_spec", "start", "start_spec", "RunHandle", "RunControl", "Progress", "RunSpec", "make_spec", "RunResult", "BenchmarkResult", "load_json",
           "list_engines", "KvlabError", "SpecError", "EngineError", "EngineNotBuilt", "UnsafeDirectory"]
