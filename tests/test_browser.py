"""The quickstart notebook in JupyterLab, driven as a user would: headless Chromium (Debian's
package) through Playwright.  It runs the notebook's cells up to the run builder, starts a
long run, checks the progress display advances, presses Stop, checks the partial result is
shown, then runs a short workload to the end.  Screenshots go to test-output/browser/."""
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "test-output" / "browser"
TOKEN = "kvlab-browser-test"


def _need(what, ok, install):
    if ok:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{what} missing although the README's test command installs it ({install})")
    pytest.skip(f"{what} missing: {install}")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url):
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read())


@pytest.fixture
def lab(tmp_path):
    chromium = shutil.which("chromium")
    _need("Debian's chromium", chromium, "scripts/setup.sh installs it with apt")
    try:
        import jupyterlab  # noqa: F401
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        _need(exc.name, False, "pip install -r requirements-dev.txt")
    work = tmp_path / "lab"
    work.mkdir()
    shutil.copy(ROOT / "notebooks" / "00_quickstart.ipynb", work)
    settings = tmp_path / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false", "checkForUpdates": false}')
    port = _free_port()
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces")}
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={work}", "--ServerApp.open_browser=False",
         *(["--allow-root"] if os.geteuid() == 0 else [])],
        cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=open(tmp_path / "lab.log", "w"))
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            _get(f"{base}/api/status?token={TOKEN}")
            break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                pytest.fail("JupyterLab did not start:\n" + (tmp_path / "lab.log").read_text()[-3000:])
            time.sleep(0.5)
    yield {"base": base, "chromium": chromium, "log": tmp_path / "lab.log"}
    server.terminate()
    try:
        server.wait(20)
    except subprocess.TimeoutExpired:
        server.kill()


def test_quickstart_run_builder_in_jupyterlab(lab):
    from playwright.sync_api import expect, sync_playwright
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=lab["chromium"], headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1700})
        page.set_default_timeout(60_000)
        try:
            page.goto(f"{lab['base']}/lab/tree/00_quickstart.ipynb?token={TOKEN}")
            page.wait_for_selector(".jp-NotebookPanel .jp-Cell", state="visible", timeout=120_000)
            _wait_kernel_idle(lab["base"])
            # run the cells from the top through the run builder's cell
            page.locator(".jp-NotebookPanel .jp-Cell").first.locator(".jp-InputPrompt").click()
            cells = json.loads((ROOT / "notebooks" / "00_quickstart.ipynb").read_text())["cells"]
            through = next(i for i, c in enumerate(cells) if "RunBuilder(" in "".join(c["source"]))
            for _ in range(through + 1):
                page.keyboard.press("Shift+Enter")
                page.wait_for_timeout(300)
            builder = page.locator(".kvlab-run-builder")
            expect(builder).to_be_visible(timeout=120_000)
            builder.scroll_into_view_if_needed()
            expect(builder.locator(".kvlab-code")).to_contain_text("kvlab.run(engine=")
            expect(builder.locator(".kvlab-code")).to_contain_text("kvlab run --engine")

            # a long run: progress must advance, then Stop ends it with a partial result
            duration = builder.locator(".kvlab-duration input")
            duration.fill("60")
            duration.press("Enter")
            expect(builder.locator(".kvlab-code")).to_contain_text("duration=60.0")
            builder.locator("button.kvlab-run").click()
            text = builder.locator(".kvlab-progress-text")
            expect(text).to_contain_text("ops", timeout=60_000)
            first = _ops_shown(text.inner_text())
            deadline = time.monotonic() + 30
            while _ops_shown(text.inner_text()) <= first and time.monotonic() < deadline:
                page.wait_for_timeout(200)
            assert _ops_shown(text.inner_text()) > first, "the progress display did not advance"
            page.wait_for_timeout(1000)
            builder.screenshot(path=str(SHOTS / "01_run_builder_mid_run.png"))
            t0 = time.monotonic()
            builder.locator("button.kvlab-stop").click()
            status = builder.locator(".kvlab-status")
            expect(status).to_contain_text("partial", timeout=10_000)
            stop_seconds = time.monotonic() - t0
            assert stop_seconds < 3.0, f"Stop to partial result shown took {stop_seconds:.2f} s"
            expect(builder.locator(".kvlab-results")).to_contain_text("True")  # the partial column
            builder.screenshot(path=str(SHOTS / "02_stopped_run.png"))

            # a short run to its end: result table and figure inline
            duration.fill("0")
            duration.press("Enter")
            expect(builder.locator(".kvlab-code")).not_to_contain_text("duration=")
            builder.locator("button.kvlab-run").click()
            expect(status).to_contain_text("finished", timeout=120_000)
            # the ranking (as kvlab compare's), then every trial's row under it
            expect(builder.locator(".kvlab-results table.kvlab-ranking")).to_contain_text("readrandom")
            page.wait_for_timeout(500)
            builder.screenshot(path=str(SHOTS / "03_finished_run.png"))
            page.screenshot(path=str(SHOTS / "04_notebook.png"), full_page=False)
        except Exception:
            page.screenshot(path=str(SHOTS / "failure.png"))
            raise
        finally:
            browser.close()
    print(f"screenshots in {SHOTS}; Stop to partial result shown in {stop_seconds:.2f} s")


def _ops_shown(text: str) -> float:
    """The ops count the progress line shows ('lmdb fillseq: 1.23M ops, ...')."""
    import re
    m = re.search(r": ([\d.]+)([kMG]?)(?:/[\d.]+[kMG]?)? ops", text)
    if not m:
        return -1.0
    return float(m.group(1)) * {"": 1, "k": 1e3, "M": 1e6, "G": 1e9}[m.group(2)]


def _wait_kernel_idle(base, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            kernels = _get(f"{base}/api/kernels?token={TOKEN}")
        except OSError:  # the server answers 500 while a kernel is still being started
            kernels = None
        if kernels and all(k["execution_state"] == "idle" for k in kernels):
            return
        time.sleep(0.5)
    raise TimeoutError("the notebook's kernel never became idle")
