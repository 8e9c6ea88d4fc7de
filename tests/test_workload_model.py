"""The workload model as data: mako strings, YCSB properties, TOML files and presets compile to
one model (Mix), and bad input gets an error naming what is wrong and what is allowed."""
import pytest

from kvlab import cli, errors
from kvlab.model.workloads import REGISTRY, catalog
from kvlab.model.workloads.mako import from_mako, parse_ops
from kvlab.model.workloads.mix import Mix, Op, Pacing, Template
from kvlab.model.workloads.presets import PRESETS, preset
from kvlab.model.workloads.toml_file import from_toml, from_toml_text
from kvlab.model.workloads.ycsb import from_properties, from_ycsb, read_properties

# YCSB's workloads/workloada as it ships (comments trimmed)
WORKLOADA = """
# Yahoo! Cloud System Benchmark
# Workload A: Update heavy workload
recordcount=1000
operationcount=1000
workload=site.ycsb.workloads.CoreWorkload

readallfields=true

readproportion=0.5
updateproportion=0.5
scanproportion=0
insertproportion=0

requestdistribution=zipfian
"""


def shape(mix):
    """What a mix does, without the names its source gave it."""
    return [(round(w, 9), [(o.kind, o.count, o.length, o.snapshot) for o in t.ops])
            for w, t in zip(mix.weights, mix.templates)]


def test_mako_strings():
    assert [(o.kind, o.count) for o in parse_ops("g9u1")] == [("get", 9), ("rmw", 1)]
    assert [(o.kind, o.count, o.length) for o in parse_ops("gr1:1000")] == [("range", 1, 1000)]
    assert [(o.kind, o.count, o.length, o.snapshot) for o in parse_ops("sgr10:-50")] == [("range", 10, -50, True)]
    assert [(o.kind, o.count) for o in parse_ops("g8ui")] == [("get", 8), ("rmw", 1), ("insert", 1)]
    assert [o.kind for o in parse_ops("o10c2cr1:5")] == ["put", "delete", "clear_range"]
    mix = from_mako("g9u1")
    assert len(mix.templates) == 1 and mix.templates[0].ops_per_txn == 10 and mix.writes


@pytest.mark.parametrize("spec, message", [
    ("", "a mako transaction spec is a string"),
    ("x1", "cannot read 'x1' at position 0"),
    ("g9 u1", "cannot read ' u1' at position 2"),
    ("gr1", "'gr' needs a range, as in gr1:1000"),
    ("g1:5", "'g' takes no range"),
    ("g0", "count 0 of 'g' must be at least 1"),
    ("grv", "FoundationDB-only"),
    ("gr1:0", "length=0 is out of range"),
    ("cr1:-5", "a negative length (backwards) is for range only"),
])
def test_bad_mako_strings(spec, message):
    with pytest.raises(errors.SpecError) as info:
        parse_ops(spec)
    assert message in str(info.value)


def test_ycsb_file_runs_as_is_and_matches_the_preset(tmp_path):
    f = tmp_path / "workloada"
    f.write_text(WORKLOADA)
    mix = from_ycsb([f])
    assert shape(mix) == shape(preset("ycsb-a")) == [(0.5, [("get", 1, None, False)]), (0.5, [("put", 1, None, False)])]
    assert mix.distribution.name == "zipfian" and mix.record_count == 1000 and mix.operation_count == 1000
    assert any("workload=" in n for n in mix.notes)           # said, not silently dropped
    over = from_ycsb([f], ["recordcount=50000", "requestdistribution=uniform"])
    assert over.record_count == 50000 and over.distribution.name == "uniform"


def test_ycsb_core_file_names_run_without_the_files(tmp_path, monkeypatch):
    """`kvlab ycsb -P workloada` where no such file is: YCSB's own core file, built in (and said so); a file
    of that name in the working directory wins."""
    monkeypatch.chdir(tmp_path)
    for letter in "abcdef":
        mix = from_ycsb([f"workload{letter}"])
        assert shape(mix) == shape(preset(f"ycsb-{letter}"))
        assert mix.distribution.name == preset(f"ycsb-{letter}").distribution.name and mix.record_count == 1000
        assert any(f"no file 'workload{letter}' here" in n for n in mix.notes)
    (tmp_path / "workloada").write_text(WORKLOADA.replace("readproportion=0.5", "readproportion=0.25")
                                                 .replace("updateproportion=0.5", "updateproportion=0.75"))
    mine = from_ycsb(["workloada"])
    assert [round(w, 9) for w in mine.weights] == [0.25, 0.75] and not any("no file" in n for n in mine.notes)
    with pytest.raises(errors.SpecError, match="cannot be read"):
        from_ycsb(["workloadg"])


def test_mako_and_ycsb_compile_to_the_same_model():
    assert shape(from_mako("g")) == shape(from_properties({"readproportion": "1", "updateproportion": "0"}))
    assert shape(from_mako("o")) == shape(from_properties({"readproportion": "0", "updateproportion": "1"}))
    assert shape(from_mako("u")) == shape(from_properties({"readproportion": "0", "updateproportion": "0",
                                                           "readmodifywriteproportion": "1"}))
    assert shape(from_mako("i")) == shape(from_properties({"readproportion": "0", "updateproportion": "0",
                                                           "insertproportion": "1"}))


def test_ycsb_details():
    e = preset("ycsb-e")
    scan = next(t for t in e.templates if t.name == "scan").ops[0]
    assert (scan.min_length, scan.length, scan.length_distribution) == (1, 100, "uniform")
    # CoreWorkload sizes the scrambled zipfian for the inserts it expects: operationcount x insertproportion x 2
    assert e.distribution.params["expected_inserts"] == 100
    assert preset("ycsb-d").distribution.name == "latest"
    hot = from_properties({"requestdistribution": "hotspot", "hotspotdatafraction": "0.1", "hotspotopnfraction": "0.9"})
    assert hot.distribution.params == {"hot_fraction": 0.1, "hot_ops": 0.9}
    assert read_properties("a = 1\nb: two\n! comment\nc three\n") == {"a": "1", "b": "two", "c": "three"}


@pytest.mark.parametrize("props, message", [
    ({"readproportoin": "0.5"}, "readproportoin (did you mean readproportion?) unknown; allowed: readproportion"),
    ({"requestdistribution": "zipf"}, "requestdistribution='zipf'; allowed: uniform, zipfian"),
    ({"readproportion": "lots"}, "readproportion='lots' is not a number"),
    ({"readproportion": "0", "updateproportion": "0"}, "every operation a proportion of 0"),
    ({"readproportion": "-1"}, "readproportion=-1.0 must be >= 0"),
    ({"scanproportion": "1", "maxscanlength": "0"}, "need 1 <= min <= max"),
    ({"zipfianconstant": "1.5", "requestdistribution": "zipfian"}, "0 < theta < 1"),
    ({"insertorder": "random"}, "insertorder='random'; allowed: hashed, ordered"),
])
def test_bad_ycsb_properties(props, message):
    with pytest.raises(errors.SpecError) as info:
        from_properties(props)
    assert message in str(info.value)


def test_ycsb_missing_file_and_bad_override(tmp_path):
    with pytest.raises(errors.SpecError, match="cannot be read.*workloada ... workloadf are also known by name"):
        from_ycsb([tmp_path / "nope"])
    with pytest.raises(errors.SpecError, match="cannot be read"):   # a path is a file, never the built-in
        from_ycsb([tmp_path / "workloada"])
    with pytest.raises(errors.SpecError, match="expected name=value"):
        from_ycsb([], ["recordcount"])


TOML = """
name = "checkout"
distribution = { name = "hotspot", hot_fraction = 0.1, hot_ops = 0.9 }
record_count = 100000
value_size = [8, 100]
[pacing]
target_rate = 5000
arrivals = "poisson"
[run]
clients = 100
[[template]]
name = "browse"
weight = 9
txn = "g10"
[[template]]
name = "buy"
weight = 1
ops = [ { kind = "get", count = 2 }, { kind = "rmw", distribution = "uniform" },
        { kind = "scan", length = 50, length_distribution = "zipfian" } ]
"""


def test_toml_workload_file(tmp_path):
    f = tmp_path / "checkout.toml"
    f.write_text(TOML)
    mix = from_toml(f)
    assert [t.name for t in mix.templates] == ["browse", "buy"] and mix.weights == [0.9, 0.1]
    buy = mix.templates[1]
    assert [o.kind for o in buy.ops] == ["get", "rmw", "scan"] and buy.ops[1].distribution.name == "uniform"
    assert mix.pacing == Pacing(5000, False, "poisson") and mix.pacing.open_loop
    assert mix.value_size == (8, 100) and mix.threads == 100 and mix.run_defaults == {}   # [run] clients: applied
    assert mix.distribution.params == {"hot_fraction": 0.1, "hot_ops": 0.9}
    assert mix.to_dict()["templates"][1]["ops"][2]["length_distribution"] == "zipfian"


@pytest.mark.parametrize("text, message", [
    ("name = 'x'", "no [[template]]"),
    ("[[template]]\ntxn = 'g'\nops = [{kind='get'}]", "give exactly one of txn"),
    ("colour = 'red'\n[[template]]\ntxn = 'g'", "colour unknown; allowed: name"),
    ("[[template]]\nops = [{kind='fly'}]", "operation 'fly' is unknown; allowed: get, put"),
    ("[[template]]\nops = [{kind='get', length=5}]", "operation get takes no length"),
    ("[[template]]\nweight = 0\ntxn = 'g'", "weight=0 is out of range"),
    ("[pacing]\ntarget_rate = -1\n[[template]]\ntxn = 'g'", "target_rate=-1 is out of range"),
    ("[pacing]\narrivals = 'bursty'\n[[template]]\ntxn = 'g'", "arrivals 'bursty' is unknown; allowed: uniform"),
    ("value_size = [100, 8]\n[[template]]\ntxn = 'g'", "1 <= min <= max"),
    ("distribution = 'zipfian-plain'\n[[template]]\nname='a'\ntxn='g'\n[[template]]\nname='a'\ntxn='u'",
     "template names repeat"),
    ("name = ", "is not valid TOML"),
])
def test_bad_toml(text, message):
    with pytest.raises(errors.SpecError) as info:
        from_toml_text(text)
    assert message in str(info.value)


def test_python_api_and_its_errors():
    mix = Mix("mine", [Template("t", [Op("get", 3), Op("insert")], weight=2)], distribution="latest")
    assert mix.describe() == "[getx3 insert]; keys latest(theta=0.99); closed loop"
    with pytest.raises(errors.SpecError, match="has no templates"):
        Mix("empty", [])
    with pytest.raises(errors.SpecError, match="snapshot applies to reads"):
        Op("put", snapshot=True)
    with pytest.raises(errors.SpecError, match="range needs a length"):
        Op("range")


# YCSB 0.17.0's workloads/workload[b-f]: the proportions and distributions each file sets (besides
# recordcount=operationcount=1000, readallfields=true and the CoreWorkload class, which all six set)
YCSB_FILES = {
    "b": "readproportion=0.95\nupdateproportion=0.05\nscanproportion=0\ninsertproportion=0\n"
         "requestdistribution=zipfian\n",
    "c": "readproportion=1\nupdateproportion=0\nscanproportion=0\ninsertproportion=0\nrequestdistribution=zipfian\n",
    "d": "readproportion=0.95\nupdateproportion=0\nscanproportion=0\ninsertproportion=0.05\n"
         "requestdistribution=latest\n",
    "e": "readproportion=0\nupdateproportion=0\nscanproportion=0.95\ninsertproportion=0.05\n"
         "requestdistribution=zipfian\n"
         "maxscanlength=100\nscanlengthdistribution=uniform\n",
    "f": "readproportion=0.5\nupdateproportion=0\nscanproportion=0\ninsertproportion=0\nreadmodifywriteproportion=0.5\n"
         "requestdistribution=zipfian\n",
}


@pytest.mark.parametrize("letter", "bcdef")
def test_each_ycsb_preset_is_ycsbs_own_file(tmp_path, letter):
    """Pinned against the files' own settings, written here independently of kvlab's table (CORE_FILES)."""
    f = tmp_path / f"workload{letter}"
    f.write_text("recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\n"
                 "readallfields=true\n" + YCSB_FILES[letter])
    mine, ours = from_ycsb([f]), preset(f"ycsb-{letter}")
    assert shape(mine) == shape(ours)
    assert mine.distribution.name == ours.distribution.name and mine.distribution.params == ours.distribution.params
    assert (mine.record_count, mine.operation_count, mine.insert_order) == (ours.record_count, ours.operation_count,
                                                                            ours.insert_order)


def test_seed003_presets_are_the_pages_six_tests():
    """Seed 003's tests: the ops of one transaction and the clients, as its page lists them."""
    want = {"fdb-write-1": ([("put", 1, None, False)], 1), "fdb-write-10": ([("put", 10, None, False)], 1),
            "fdb-write-10-c100": ([("put", 10, None, False)], 100),
            "fdb-read-10-c100": ([("get", 10, None, False)], 100),
            "fdb-90-10-c100": ([("get", 9, None, False), ("put", 1, None, False)], 100),
            "fdb-range-1000-c100": ([("range", 1, 1000, False)], 100)}
    got = {n: (shape(m)[0][1], m.run_defaults["clients"]) for n, m in PRESETS.items() if n.startswith("fdb-")}
    assert got == want and all(len(PRESETS[n].templates) == 1 for n in want)


def test_presets_and_listing(capsys):
    assert {f"ycsb-{c}" for c in "abcdef"} <= set(PRESETS)
    fdb = {n: m for n, m in PRESETS.items() if n.startswith("fdb-")}
    assert len(fdb) == 6
    assert fdb["fdb-90-10-c100"].run_defaults["clients"] == 100 and fdb["fdb-write-1"].run_defaults["clients"] == 1
    assert shape(fdb["fdb-90-10-c100"]) == [(1.0, [("get", 9, None, False), ("put", 1, None, False)])]
    assert fdb["fdb-range-1000-c100"].templates[0].ops[0].length == 1000
    assert all(m.record_count == 1_000_000 and m.value_size == (8, 100) for m in fdb.values())
    with pytest.raises(errors.SpecError, match="allowed: ycsb-a"):
        preset("ycsb-z")
    assert cli.main(["workloads"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["name", "kind", "description"]   # the table's header, then a row each
    assert len([line for line in lines[1:] if not line.startswith("(")]) == len(catalog()) == \
        len(REGISTRY) + len(PRESETS)


def test_unknown_workload_lists_every_kind():
    import kvlab
    with pytest.raises(errors.SpecError, match="ycsb-a, .*txn:<mako spec>"):
        kvlab.run("lmdb", "ycsb-z", num=100)
