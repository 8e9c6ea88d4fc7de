"""Every notebook runs at smoke scale with papermill and exports its figures; the
committed notebooks carry no outputs and open with a parameters cell."""
import json
from pathlib import Path

import pytest

from kvlab.lab import notebooks

NB = Path(__file__).resolve().parent.parent / "notebooks"


@pytest.mark.parametrize("path", sorted(NB.glob("*.ipynb")), ids=lambda p: p.stem)
def test_committed_without_outputs_and_with_parameters(path):
    nb = json.loads(path.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code)
    assert "parameters" in code[0]["metadata"].get("tags", [])
    assert not any("def " in "".join(c["source"]) for c in code), "notebooks stay thin: no function definitions"


def test_all_notebooks_run_at_smoke_scale(tmp_path):
    pytest.importorskip("papermill")
    folder = notebooks.run("smoke", out=tmp_path / "nb")
    for name in notebooks.available():
        assert (folder / name / f"{name}.ipynb").exists()
        figures = list((folder / name).glob("*.svg"))
        assert figures, f"{name} exported no figure"
        for svg in figures:
            assert svg.with_suffix(".png").exists() and svg.with_suffix(".pdf").exists()


def test_unknown_scale_and_notebook():
    from kvlab import errors
    with pytest.raises(errors.SpecError, match="allowed: smoke, default, full"):
        notebooks.run("huge")
    with pytest.raises(errors.SpecError, match="allowed: 00_quickstart"):
        notebooks.run("smoke", only="nosuch")
