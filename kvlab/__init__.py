"""kvlab: run the classic key-value engine benchmarks natively from Python and notebooks.

    import kvlab
    result = kvlab.run(engine="lmdb", workload="fillseq,readrandom", num=100_000, threads=2)
    result.to_frame()

The package is six layers above a base, each importing only the ones below it (ARCHITECTURE.md;
tests/test_architecture.py holds the order): model -> results -> execution -> services -> lab -> cli.
This module only re-exports the public API.
"""
import os as _os

from ._version import __version__  # noqa: F401

# numpy's OpenBLAS starts a pool of spinning threads that compete with the engine's
# threads for the cores (3% of CPU in a RocksDB readrandom profile on 2 cores); kvlab
# never needs parallel BLAS.  Set before numpy is imported; an explicit setting wins.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    _os.environ.setdefault(_var, "1")

from .errors import EngineError, EngineNotBuilt, KvlabError, SpecError, UnsafeDirectory  # noqa: E402
from .execution.native import describe as list_engines  # noqa: E402
from .execution.orchestration.background import RunHandle  # noqa: E402
from .execution.progress import Progress, RunControl  # noqa: E402
from .execution.run.keys import keys  # noqa: E402
from .execution.run.runner import run_spec  # noqa: E402
from .lab.api import linkbench, replay, run, start, start_spec  # noqa: E402
from .lab.report import report  # noqa: E402,F401
from .lab.sweeps import Sweep, sweep, sweep_results  # noqa: E402
from .model.spec import RunSpec, make_spec  # noqa: E402
from .model.sweep import SweepSpec  # noqa: E402
from .results.compare import compare  # noqa: E402
from .results.result import BenchmarkResult, RunResult, load_json  # noqa: E402
from .results.why import why  # noqa: E402
from .services.sla import sla  # noqa: E402

__all__ = ["run", "run_spec", "start", "start_spec", "RunHandle", "RunControl", "Progress", "RunSpec", "make_spec",
           "RunResult", "BenchmarkResult", "load_json", "list_engines", "KvlabError", "SpecError", "EngineError",
           "EngineNotBuilt", "UnsafeDirectory", "keys", "linkbench", "sweep", "Sweep", "SweepSpec", "sweep_results",
           "compare", "sla", "replay", "why"]
