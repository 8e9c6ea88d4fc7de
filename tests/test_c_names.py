"""Facts the C core owns are read from it (issue 25 item 1): the name tables kvlab._native builds from the
headers' X-macro lists cover what the Python model names, and kvlab.errors takes its codes from them."""
from kvlab import _native, errors
from kvlab.execution import native
from kvlab.execution.run import mixplan
from kvlab.model import workloads
from kvlab.model.workloads import distributions, mix


def test_every_engine_error_class_has_the_c_code_of_its_name():
    classes = [c for c in vars(errors).values() if isinstance(c, type) and getattr(c, "c_name", None)]
    assert {c.c_name for c in classes} == set(_native.ERROR_CODES)
    for cls in classes:
        assert cls.code == _native.ERROR_CODES[cls.c_name]
        assert errors.from_code(cls.code, "x").__class__ is cls
    assert len({c.code for c in classes}) == len(classes)


def test_every_model_workload_runs_a_loop_the_driver_has():
    for name, w in workloads.REGISTRY.items():
        loop = w.native
        assert loop in _native.WORKLOADS, f"workload {name} names native loop {loop!r}, not in kv_driver.h"


def test_the_loops_that_write_are_the_c_tables():
    assert native.writing_loops() == {n for n, w in _native.WORKLOADS.items() if w.writes}
    assert {"fillseq", "fillrandom", "overwrite"} <= native.writing_loops()
    assert "readrandom" not in native.writing_loops()


def test_every_op_kind_and_graph_op_is_named_in_c():
    assert set(mix.GRAPH_OPS) == set(_native.GRAPH_OPS)
    assert set(mixplan.OPTYPE_OF_KIND.values()) <= set(_native.OP_TYPES)
    assert set(mixplan.OPTYPE_OF_KIND) >= set(mix.OP_KINDS)


def test_every_distribution_has_a_c_code():
    assert set(distributions.KINDS) <= set(_native.DISTRIBUTION_CODES)
