"""kvlab report / kvlab.report (issue 28 item 8): one self-contained HTML page of stored results.

Real LMDB and RocksDB runs (small) in a real store: the page holds every selected run, escapes what users
and records wrote (a tag holding <script>), fetches nothing (no http(s) in any src or href, no script, no
external style), compares two groups, draws a sweep; bad input is refused before anything is written.  The
browser test opens the page in real Chromium (Debian's, through Playwright): every figure renders with a
non-zero box, no console error, no request but the file itself; its screenshot goes to the test's folder and
to /tmp/kvlab-report-screenshot.png."""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import kvlab
from kvlab import cli
from kvlab.lab import report
from kvlab.results.store import Store

from .conftest import require

EVIL = "<script>alert('tag')</script>"
SCREENSHOT = Path("/tmp/kvlab-report-screenshot.png")


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """Two LMDB and two RocksDB runs (fillseq, readrandom; 3,000 keys), each tagged rep, rep-ENGINE and EVIL."""
    require("lmdb")
    require("rocksdb")
    path = tmp_path_factory.mktemp("report-store") / "s.duckdb"
    store = Store(path)
    runs = {}
    for engine in ("lmdb", "rocksdb"):
        for seed in (1, 2):
            r = kvlab.run(engine, "fillseq,readrandom", num=3000, seed=seed)
            for b in r:
                b.tags = ["rep", f"rep-{engine}", EVIL]
            runs.setdefault(engine, []).append(store.append(r))
    return path, runs


def _report(argv, capsys):
    code = cli.main(["report", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _self_contained(text: str) -> None:
    refs = re.findall(r"""\b(?:src|href|xlink:href)\s*=\s*["']?([^"'\s>]+)""", text, re.I)
    external = [r for r in refs if re.match(r"(?i)(https?:)?//", r) or re.match(r"(?i)(data|javascript|file):", r)]
    assert not external, f"references that leave the file: {external[:5]}"
    assert not re.search(r"<script\b", text, re.I), "the page holds a script"
    assert not re.search(r"<link\b|@import|url\(\s*['\"]?(https?:)?//", text, re.I), "an external style"
    assert not re.search(r"<(iframe|img|object|embed)\b", text, re.I)


def test_report_holds_every_run_escapes_and_is_self_contained(stored, tmp_path, capsys):
    require("lmdb")
    path, runs = stored
    out = tmp_path / "report.html"
    code, said, err = _report(["--tag", "rep", "--store", str(path), "--out", str(out)], capsys)
    assert code == 0, err
    assert f"report written to {out}: 4 runs, 8 benchmarks" in said
    text = out.read_text()
    for run_id in runs["lmdb"] + runs["rocksdb"]:
        assert f'id="run-{run_id}"' in text and f'href="#run-{run_id}"' in text, run_id
    assert EVIL not in text and "&lt;script&gt;alert(&#x27;tag&#x27;)&lt;/script&gt;" in text
    _self_contained(text)
    body = text.split('<section id="summary">', 1)[1].split("</section>", 1)[0]
    assert body.count("<tr>") == 1 + 8       # the header and a row per benchmark
    # throughput, then one percentile spectrum per workload; each figure inline SVG with ids of its own
    assert text.count("<svg") == 3 == text.count("<figure")
    assert "Figure 2. Latency by percentile: fillseq" in text and "Latency by percentile: readrandom" in text
    ids = re.findall(r'\bid="([^"]+)"', text)
    assert len(ids) == len(set(ids)), "an id used twice in the page"
    assert "<details>" in text and "<dt>engine</dt><dd>&quot;rocksdb&quot;</dd>" in text   # each run's spec
    assert "Comparison" not in text                                  # one group: nothing to compare
    # Python writes scientific notation with a sign (1e+05, 2.5e-06); a run id is hex (a005e3...) and has none
    assert not re.search(r"\d(\.\d+)?e[+-]\d", re.sub(r"<[^>]*>", " ", text.split("<main>")[1].split(
        '<section id="runs">')[0])), "a number in scientific notation"


def test_two_groups_are_compared(stored, tmp_path, capsys):
    require("lmdb")
    path, runs = stored
    out = tmp_path / "cmp.html"
    code, said, err = _report(["tag:rep-lmdb", "tag:rep-rocksdb", "--store", str(path), "--out", str(out)], capsys)
    assert code == 0, err
    assert "B compared against A" in said
    text = out.read_text()
    assert "<h2>Comparison: B against A</h2>" in text
    for label in ("ops/s, higher is better", "p99 latency (us), lower is better", "CPU per op"):
        assert label in text
    assert "readrandom run 1 thr" in text and "geomean of 2" in text and "n=2: no interval" in text
    assert "Comparison: B against A." in text                        # plots.compare's figure, captioned
    assert text.count("<svg") == 4
    _self_contained(text)
    # the same two groups, not compared; and --compare naming the sides, with a third group besides
    code, _, err = _report(["tag:rep-lmdb", "tag:rep-rocksdb", "--no-compare", "--store", str(path), "--out",
                            str(out)], capsys)
    assert code == 0 and "Comparison" not in out.read_text()
    code, said, err = _report([runs["lmdb"][0], "--compare", runs["lmdb"][1], runs["rocksdb"][0], "--store",
                               str(path), "--out", str(out)], capsys)
    assert code == 0, err
    assert "3 runs" in said and "B compared against A" in said
    code, said, err = _report(["tag:rep-lmdb", "tag:rep-rocksdb", "--where", "workload=readrandom", "--store",
                               str(path), "--out", str(out)], capsys)
    assert code == 0, err
    text = out.read_text()
    assert "4 runs, 4 benchmarks" in said and "readrandom run 1 thr" in text and "fillseq run 1 thr" not in text


def test_python_api_and_results_in_hand(stored, tmp_path):
    require("lmdb")
    path, runs = stored
    got = kvlab.report("tag:rep", where="engine=lmdb,workload=readrandom", store=path, out=tmp_path / "r.html",
                       title="LMDB reads <b>")
    assert got == tmp_path / "r.html" and got.is_file()
    text = got.read_text()
    assert "<title>LMDB reads &lt;b&gt;</title>" in text
    assert all(f'id="run-{r}"' in text for r in runs["lmdb"]) and not any(r in text for r in runs["rocksdb"])
    r = kvlab.run("lmdb", "fillseq,readrandom", num=2000, seed=3)
    r[1].partial = True                     # as a run stopped part-way would be
    text = kvlab.report(r, out=tmp_path / "hand.html").read_text()
    assert 'id="run-in-hand-1"' in text and text.count("<svg") == 3
    assert text.count(">PARTIAL</strong>") == 2                      # its row and its run
    assert "1 partial (stopped early)" in text


def test_sweep_report_draws_the_sweep(tmp_path, capsys):
    require("lmdb")
    store = tmp_path / "s.duckdb"
    kvlab.sweep("rep-sweep", axes={"threads": [1, 2]}, engine="lmdb", workload="readrandom", num=2000, interval=0,
                store=store).run()
    out = tmp_path / "sweep.html"
    code, said, err = _report(["--sweep", "rep-sweep", "--store", str(store), "--out", str(out)], capsys)
    assert code == 0, err
    text = out.read_text()
    assert "Sweep rep-sweep: ops/s." in text and "Sweep rep-sweep: p99 (µs)." in text
    assert "sweep rep-sweep" in text       # each run says the sweep it belongs to
    _self_contained(text)


def test_bad_input_is_refused_before_anything_is_written(stored, tmp_path, capsys):
    require("lmdb")
    path, runs = stored
    before = path.stat().st_mtime_ns
    afile = tmp_path / "file"
    afile.write_text("x")
    out = str(tmp_path / "r.html")
    cases = [
        (["nosuchrun", "--out", out], "'nosuchrun' selects no benchmark"),
        ([runs["lmdb"][0][:6], "--out", out], f"did you mean {runs['lmdb'][0]}?"),
        (["rep", "--out", out], "did you mean tag:rep?"),
        (["--out", out], "nothing selected"),
        (["--tag", "rep", "--out", " "], "--out is empty"),
        (["--tag", "rep", "--where", "engine=wiredtiger-btree", "--out", out], "with --where"),
        (["--tag", "rep", "--out", str(tmp_path)], "is a directory"),
        (["--tag", "rep", "--out", str(afile / "r.html")], "is a file, so nothing can be made below it"),
        (["--tag", "rep", "--compare", "tag:rep", "engine=bdb", "--out", out], "'engine=bdb' selects no benchmark"),
        (["--tag", "rep", "--compare", "tag:rep", "tag:rep", "--no-compare", "--out", out], "contradict"),
        (["tag:rep", "bogus=1", "--out", out], "'bogus' is not a key to select by"),
    ]
    for argv, said in cases:
        code, _, err = _report([*argv, "--store", str(path)], capsys)
        assert code == 2 and err.startswith("kvlab: error:") and said in err and "Traceback" not in err, (argv, err)
    code, _, err = _report(["--tag", "rep", "--store", str(tmp_path / "none.duckdb"), "--out", out], capsys)
    assert code == 2 and "no results store at" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"], "nothing may be written for a refused report"
    assert path.stat().st_mtime_ns == before


def test_out_on_a_read_only_file_system(stored, tmp_path, capsys):
    require("lmdb")
    ro = tmp_path / "ro"
    ro.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "ro", "tmpfs", str(ro)], capture_output=True).returncode:
        pytest.skip("cannot mount a read-only tmpfs here")
    try:
        for out in (ro / "r.html", ro / "sub" / "r.html"):
            code, _, err = _report(["--tag", "rep", "--store", str(stored[0]), "--out", str(out)], capsys)
            assert code == 2 and "read-only file system" in err, err
    finally:
        subprocess.run(["umount", str(ro)], check=True)


@pytest.mark.parametrize("value,text", [(1234567.8, "1,234,568"), (12345, "12,345"), (123.44, "123.4"),
                                        (1.234, "1.23"), (0.01234, "0.0123"), (0.00000321, "0.0000032"),
                                        (1e-12, "0.0000000000010"), (-0.0000456, "-0.000046"), (0, "0"),
                                        (None, "-"), (float("nan"), "-"), (True, "yes")])
def test_numbers_by_magnitude_never_scientific(value, text):
    assert report.num(value) == text


@pytest.mark.parametrize("value,text", [(12_000_000, "12M"), (2_500_000, "2.5M"), (50_000, "50k"), (5000, "5,000"),
                                        (0.25, "0.25"), (0.001, "0.001"), (1e-5, "0.00001"), (0, "0")])
def test_tick_labels_plain(value, text):
    assert report.tick_text(value) == text


# --- in real Chromium ---------------------------------------------------------------------------------

def _need(what, ok, install):
    if ok:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{what} missing although the README's test command installs it ({install})")
    pytest.skip(f"{what} missing: {install}")


def test_report_renders_in_chromium(stored, tmp_path, capsys):
    require("lmdb")
    chromium = shutil.which("chromium")
    _need("Debian's chromium", chromium, "scripts/setup.sh installs it with apt")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        _need(exc.name, False, "pip install -r requirements-dev.txt")
    path, runs = stored
    out = tmp_path / "report.html"
    code, _, err = _report(["tag:rep-lmdb", "tag:rep-rocksdb", "--store", str(path), "--out", str(out)], capsys)
    assert code == 0, err
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        problems, requests = [], []
        page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning")
                else None)
        page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
        page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
        page.on("request", lambda r: requests.append(r.url))
        try:
            page.goto(out.as_uri(), wait_until="load")
            svgs = page.locator("figure svg")
            assert svgs.count() == 4
            for i in range(svgs.count()):
                box = svgs.nth(i).bounding_box()
                assert box and box["width"] > 100 and box["height"] > 100, (i, box)
                drawn = svgs.nth(i).evaluate("s => s.getBBox().width * s.getBBox().height")
                assert drawn > 0, f"figure {i + 1} draws nothing"
            # a run's provenance opens
            details = page.locator(f"#run-{runs['rocksdb'][0]} details")
            spec = details.locator("dl.spec")
            assert not spec.is_visible()
            details.locator("summary").click()
            assert spec.is_visible() and "rocksdb" in spec.inner_text()
            page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
            page.screenshot(path=str(SCREENSHOT), full_page=True)
        finally:
            browser.close()
    assert not problems, problems
    assert requests == [out.as_uri()], f"the page fetched something: {requests}"
    print(f"screenshot: {tmp_path / 'report.png'} and {SCREENSHOT}")


def test_a_profile_s_flame_graph_is_in_the_report_and_its_text_searchable(tmp_path, capsys):
    """--profile's flame graph inline in `kvlab report`, opened in the browser: it draws, and a reader finds an
    engine function by searching the page (issue 47)."""
    require("lmdb")
    if shutil.which("perf") is None:
        pytest.skip("needs perf (scripts/setup.sh installs linux-perf)")
    chromium = shutil.which("chromium")
    _need("Debian's chromium", chromium, "scripts/setup.sh installs it with apt")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        _need(exc.name, False, "pip install -r requirements-dev.txt")
    path = tmp_path / "s.duckdb"
    r = kvlab.run("lmdb", "fillseq,readrandom", num=50_000, duration=2, seed=3, profile=True)
    for b in r:
        b.tags = ["flame"]
    Store(path).append(r)
    out = tmp_path / "report.html"
    code, _, err = _report(["tag:flame", "--store", str(path), "--out", str(out)], capsys)
    assert code == 0, err
    assert 'aria-label="CPU profile: lmdb readrandom' in out.read_text()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        problems = []
        page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
        try:
            page.goto(out.as_uri(), wait_until="load")
            flame = page.locator('figure svg[aria-label^="CPU profile: lmdb readrandom"]')
            assert flame.count() == 1
            box = flame.bounding_box()
            assert box and box["width"] > 300 and box["height"] > 100, box
            # the frames' names are text: the browser's own search finds LMDB's function
            assert page.evaluate("() => window.find('mdb_')"), "no mdb_ frame found by the page's search"
        finally:
            browser.close()
    assert not problems, problems
