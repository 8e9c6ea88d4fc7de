"""Shared fixtures: real engines in real temporary directories."""
import contextlib
import functools
import os
import subprocess

import pytest

from kvlab import engines
from kvlab.execution import native
from kvlab.execution.plugins import build as plugin_build


def _written(cfg) -> bool:
    return cfg.adapter not in engines.DESCRIPTORS or not engines.DESCRIPTORS[cfg.adapter].planned


def _one_per_adapter_and_variant() -> tuple:
    first = {}
    for name, cfg in engines.REGISTRY.items():
        if cfg.stores_data and _written(cfg):
            first.setdefault((cfg.adapter, cfg.variant), name)
    return tuple(first.values())


# Both come from the registry, so a new engine's rows are tested without an edit here
# (tests/test_engine_checklist.py holds the rest of what an engine needs).
# Engines whose libraries scripts/setup.sh installs from Debian: in CI their absence is a failure.
DEBIAN_ENGINES = tuple(n for n, c in engines.REGISTRY.items()
                       if _written(c) and engines.descriptor(c).build.get("library"))
# Configurations the contract suite runs on: one per adapter and variant (the first registered) that stores data.
CONFORMANCE = _one_per_adapter_and_variant()


# Engines never compiled into kvlab whose plain name runs a version scripts/setup.sh builds (BUILD's `loaded`): in CI
# their absence is a failure too.
LOADED_ENGINES = tuple(n for n, c in engines.REGISTRY.items() if _written(c) and engines.descriptor(c).loaded)


def require(name):
    cfg = engines.get(name)
    if native.available(cfg):
        return cfg
    if cfg.build and not engines.descriptor(cfg).own:
        build = f"kvlab engines build {cfg.native_name}"
        why = plugin_build.cannot_build_here(cfg.native_name)   # set-up skips it where the toolchain cannot build it
        if os.environ.get("CI") and name in LOADED_ENGINES and why is None:
            pytest.fail(f"{name} is not built although scripts/setup.sh builds it: `{build}`")
        pytest.skip(f"{name} not built: `{build}`" + (f" (building it {why})" if why else ""))
    if os.environ.get("CI") and name in DEBIAN_ENGINES:
        pytest.fail(f"{name} is not built although scripts/setup.sh installs {cfg.debian_package}")
    pytest.skip(f"{name} not built: install {cfg.debian_package} and rebuild")


@pytest.fixture(params=CONFORMANCE)
def engine_name(request):
    require(request.param)
    return request.param


@pytest.fixture
def open_engine(tmp_path, engine_name):
    """Open engine_name in a fresh directory; returns a factory so tests can reopen."""
    from kvlab import _native
    cfg = engines.get(engine_name)
    handles = []

    def factory(**settings):
        h = _native.Engine(native.adapter_name(cfg), str(tmp_path / "db"), cfg.config(settings, max_threads=4))
        handles.append(h)
        return h

    (tmp_path / "db").mkdir()
    yield factory
    for h in handles:
        h.close()


# --- where the suite's results go ---------------------------------------------------------------------------
@pytest.fixture(scope="session", autouse=True)
def results_home(tmp_path_factory):
    """The default results store is the user's own ($XDG_DATA_HOME/kvlab, else ~/.local/share/kvlab): the suite
    never writes there.  Every test's default store is one of the session's (KVLAB_RESULTS), and a test that
    drops KVLAB_RESULTS (a docs example, an installed wheel) finds its per-user data directory here too."""
    root = tmp_path_factory.mktemp("results-home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KVLAB_RESULTS", str(root / "store" / "kvlab.duckdb"))
        mp.setenv("XDG_DATA_HOME", str(root / "data"))
        yield root


@pytest.fixture(scope="session", autouse=True)
def private_temp(tmp_path_factory):
    """The session's own temporary folder (TMPDIR for the commands it starts, tempfile's here): under `-n 2` each
    worker has its own, so a temporary database one worker's test leaves for a moment (a SIGKILL test before its
    `kvlab clean`) is never named as a leftover in another worker's command output."""
    import tempfile
    root = tmp_path_factory.mktemp("tmp")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TMPDIR", str(root))
        mp.setattr(tempfile, "tempdir", str(root))
        yield root


# --- tiers -------------------------------------------------------------------------------------------------
# `make test-fast` runs `-m "not slow and not browser and not timing and not matrix"`, for the edit-test loop;
# `make test` (what CI runs) runs every tier but the timing one, which `make test-timing` runs.  A test's tier is decided here, in one table, so a test file never carries its own.
MARKERS = {
    "engine": "opens a real storage engine (given to every test that calls require() or takes an engine fixture)",
    "slow": "a long run (papermill notebooks, the fuzzes (2,000 cases; 10,000 in scripts/fuzz_campaign.sh), "
            "wheel builds, the docs' examples, Dask workers, power cuts): full suite only",
    "browser": "drives Chromium through JupyterLab",
    "timing": "asserts a wall-clock bound (stated generously, with its reason, in the test)",
    "matrix": "a case of a test run on every engine, for an engine beyond FAST_ENGINES: `make test` runs the whole "
              "matrix, `make test-fast` the cases of FAST_ENGINES (a B+tree in a map and an LSM)",
}
# the engines a per-engine test's fast cases run on (`make test-fast`); every other engine's case is "matrix"
FAST_ENGINES = ("lmdb", "rocksdb", "null")
SLOW = ("test_notebooks.py::test_all_notebooks_run_at_smoke_scale", "test_fuzz_argv.py", "test_fuzz.py",
        "test_wheel.py", "test_docs.py", "test_sweep_dask.py", "test_powerloss.py", "test_figures.py",
        "test_compare.py::test_a_a", "test_front_door.py::test_compare_labels_an_a_a", "test_front_door.py::test_a_compare_run_reruns", "test_profile.py::test_a_profile_is_stored_and_why", "test_count.py::test_two_identical", "test_faults.py::test_a_failed_fsync_reaches", "test_faults.py::test_rocksdb_on_a_full", "test_faults.py::test_a_results_store_on_a_nearly_full", "test_faults.py::test_sqlite_on_a_full",
        "test_faults.py::test_kvlab_on_a_full_disk", "test_faults.py::test_a_power_cut_is_a_reboot", "test_engine_counters.py::test_rocksdb", "test_linkbench.py::test_memory_bounded", "test_engine_faults.py",
        "test_sweep.py::test_resumes_after_sigkill", "test_store_safety.py::test_sigkill",
        "test_never_lose.py::test_a_small_campaign", "test_notebooks_anywhere.py",
        "test_never_lose.py::test_notebooks_run_stopped", "test_never_lose.py::test_a_kernel",
        "test_never_lose.py::test_a_terminated_kernel",
        "test_sanity.py::test_a_superlinear", "test_sanity.py::test_a_step_within", "test_sanity.py::test_a_one_thread",
        "test_reopen.py", "test_linkbench.py::test_counts_equal", "test_cli.py::test_seed_dbbench_lines_run",
        "test_progress.py::test_kernel_stays_responsive", "test_worker.py::test_a_kernel_interrupt",
        "test_worker.py::test_compare_prints_no_line", "test_worker.py::test_the_run_builder",
        "test_go_engines.py::test_badgers_finding_reduced")
# whole commands end to end, over 2 s each on the 2-core VM (compare, sweeps, versions, LinkBench, reports, the
# benchmark scripts' --help, the C build, the seeds at smoke scale): `make test` runs them, `make test-fast` leaves
# them out so that the edit-test loop stays under 150 s (the engines' safety and check tests stay in it)
END_TO_END = (
    "test_benchmark_scripts.py::test_every_script_answers_help", "test_c_hygiene.py::test_kvlabs_own_c_compiles",
    "test_claims.py::test_reproduce_000_at_smoke_scale", "test_compare.py::test_a_real_difference_is_significant",
    "test_notebook_plans.py::test_the_lsm_family_plan", "test_claims.py::test_reproduce_stores_the_runs",
    "test_cli_grammar.py::test_compare_json_is_a_file",
    *(f"test_estimate.py::test_dry_run_prints_every_notebook_and_writes_nothing[{s}]" for s in ("default", "large",
                                                                                            "full")),
    "test_crashtest.py::test_cli_prints_the_table", "test_engine_versions.py::test_two_versions_in_one_compare",
    "test_engine_versions.py::test_versions_prints_the_small_datum_table",
    "test_estimate.py::test_sweep_show_prints_the_estimate", "test_homes_and_choices.py::test_runs_from_any_folder",
    "test_linkbench.py::test_cli_load_then_request", "test_linkbench.py::test_mix_matches_its_weights",
    "test_main_compare.py::test_compare_says_the_plan_first", "test_main_compare.py::test_compare_with_no_store",
    "test_memory_budget.py::test_compare_gives_every_engine", "test_noise.py::test_noise_stores_a_floor",
    "test_report.py::test_two_groups_are_compared", "test_sweep.py::test_cli_show_run_and_results",
    "test_sweep.py::test_local_sweep_stores_every_point", "test_sweep.py::test_python_face_background_and_plot",
    "test_verdict_floors.py::test_reproduce_001_at_smoke_scale", "test_amplification.py::test_auto_warmup_cuts",
    "test_rate_schedule.py::test_a_sine_rate_runs_intervals_follow_the_sine",
    "test_engine_check.py::test_your_own_engine_is_listed_by_its_name_and_reruns",
    "test_never_lose.py::test_timeout_s_term_on_a_load", "test_never_lose.py::test_sigkill_leaves_what_clean",
    "test_sanity.py::test_an_overloaded_open_loop", "test_dbbench_parity.py::test_readrandomwriterandom_warmup_cut",
    "test_histograms_stored.py::test_percentiles_from_a_json_round_trip",
    "test_profile.py::test_a_profiled_run", "test_cli.py::test_a_process_with_static_tls_room",
    "test_cli.py::test_the_kvlab_command_starts_with_room", "test_phases.py::test_a_warm_up_leaves_found",
    "test_measurement.py::test_cli_json_has_every_field", "test_notebook_plans.py::test_an_experiment_runs",
    "test_estimate.py::test_a_run_that_does_not_fit", "test_never_lose.py::test_the_refusal_names_the_holder",
    "test_engine_check.py::test_the_template_passes", "test_front_door.py::test_warnings_before_results",
    "test_mix_loop.py::test_intervals_report_each_template", "test_sla.py::test_sla_on_lmdb_end_to_end",
)
BROWSER = ("test_browser.py", "test_report.py::test_report_renders_in_chromium", "test_report.py::test_a_profile_s_flame")
TIMING = ("test_measurement.py::test_warmup_excluded_and_reported", "test_workloads.py::test_duration_bound_run",
          "test_mix_loop.py::test_open_loop_is_stopped_while_it_waits", "test_progress.py",
          "test_never_lose.py::test_an_oversized_run_is_refused_in_under_a_second",
          "test_rate_schedule.py::test_a_sine_rate_runs_intervals_follow_the_sine_closely",
          "test_traces.py::test_recorded_speed_keeps_the_recorded_pace",
          "test_mix_loop.py::test_open_loop_response_is_never_below_service_and_grows_past_saturation",
          "test_measurement.py::test_two_readrandom_workers_keep_the_cores_busy",
          "test_sanity.py::test_an_open_loop_on_schedule_is_not_overloaded",
          # an A/A of 50-ms runs, 5 a side: a machine other tests share tells the two sides apart
          "test_compare.py::test_a_a_is_not_significant",
          # its 2-thread point must get both cores to itself to run more than twice the hogged 1-thread point: the
          # other xdist worker's tests took one in two fresh-clone runs of `make test`
          "test_sanity.py::test_a_superlinear_thread_scaling_step_names_its_cause")
ENGINE_FIXTURES = {"engine_name", "open_engine", "case"}


def pytest_configure(config):
    for name, meaning in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {meaning}")


def _matches(nodeid: str, prefixes) -> bool:
    path_and_name = nodeid.split("tests/", 1)[-1]
    return any(path_and_name == p or path_and_name.startswith(p if p.endswith(".py") else p) for p in prefixes)


@functools.lru_cache(maxsize=1)
def _engine_names() -> frozenset:
    from kvlab import engines
    names = set(engines.listed())
    for n in list(names):
        if n in engines.REGISTRY:   # a planned engine (fdb) has no versions
            names.update(engines.versions_of(n))
    return frozenset(names)


def _other_engine(item) -> bool:
    """The test is one case of a per-engine parametrization, on an engine beyond FAST_ENGINES."""
    spec = getattr(item, "callspec", None)
    if spec is None:
        return False
    known = _engine_names()

    def values(v):
        if isinstance(v, (tuple, list)):
            for x in v:
                yield from values(x)
        elif isinstance(v, str):
            yield v
    named = [v for p in spec.params.values() for v in values(p) if v in known]
    return bool(named) and not any(v in FAST_ENGINES for v in named)


def pytest_collection_modifyitems(config, items):
    import inspect
    for item in items:
        for marker, prefixes in (("slow", SLOW + END_TO_END), ("browser", BROWSER), ("timing", TIMING)):
            if _matches(item.nodeid, prefixes):
                item.add_marker(marker)
        if _other_engine(item):
            item.add_marker("matrix")
        fixtures = set(getattr(item, "fixturenames", ()))
        try:
            source = inspect.getsource(item.function)
        except (OSError, TypeError, AttributeError):
            source = ""
        if fixtures & ENGINE_FIXTURES or "require(" in source or "kvlab.run(" in source:
            item.add_marker("engine")


@contextlib.contextmanager
def mounted_tmpfs(where, options: str):
    """A real tmpfs mounted on `where` (made) with mount's -o `options`, unmounted after; the test is skipped
    where it cannot be mounted (not root, no permission)."""
    where.mkdir(exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    got = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True, text=True)
    if got.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {got.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], capture_output=True)
