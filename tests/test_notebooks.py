"""The notebooks in notebooks/: committed without outputs, importing only public asrpt names, and
each executed top to bottom (nbclient, a fresh kernel) with ``ASRPT_NOTEBOOK_QUICK=1``, so that a
notebook that raises fails the build.

Quick mode keeps the five together at about half a minute on the 2-core CI machine, so they run in
the default test run; ``-k "not executes"`` skips them locally. The executions need the
``nbclient``, ``nbformat`` and ``ipykernel`` packages of the ``dev`` extra; without them (outside
CI) those tests are skipped.
"""

import ast
import json
import os
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
EXPECTED = ["01_single_machine_srpt", "02_jobs_as_graphs", "03_competitive_ratio", "04_trace_replay",
            "05_prediction"]

#: Seconds any one cell may run (nbclient's timeout) and a whole quick notebook may take.
CELL_TIMEOUT = 180
NOTEBOOK_BUDGET = 240


def _load(path: Path) -> dict:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _code(nb: dict) -> list[str]:
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in nb["cells"] if c["cell_type"] == "code"]


def test_the_five_notebooks_are_there_and_listed_in_the_readme():
    assert [p.stem for p in NOTEBOOKS] == EXPECTED
    readme = (ROOT / "notebooks" / "README.md").read_text(encoding="utf-8")
    for name in EXPECTED:
        assert f"{name}.ipynb" in readme


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_notebooks_have_no_outputs(path):
    nb = _load(path)
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [] and cell.get("execution_count") is None, \
                f"{path.name}: cell {i} has outputs; strip them (jupyter nbconvert --clear-output --inplace)"
    assert nb["metadata"]["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebooks_use_public_names_and_the_quick_switch(path):
    code = _code(_load(path))
    assert any('os.environ.get("ASRPT_NOTEBOOK_QUICK"' in c for c in code), "no quick-mode switch"
    for source in code:
        lines = [ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!"))]
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("asrpt"):
                private = [p for p in node.module.split(".") if p.startswith("_")]
                private += [a.name for a in node.names if a.name.startswith("_")]
                assert not private, f"{path.name} imports private {private} from {node.module}"
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                pytest.fail(f"{path.name} uses the private attribute {node.attr}")


def _execute(path: Path):
    if os.environ.get("CI"):
        import nbclient  # noqa: F401  (CI installs the dev extra: a missing package is an error)
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(str(path), as_version=4)
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    started = time.monotonic()
    client.execute()
    return nb, time.monotonic() - started


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes_in_quick_mode(path, monkeypatch):
    monkeypatch.setenv("ASRPT_NOTEBOOK_QUICK", "1")
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")   # jupyter_core's path migration, no warning
    nb, seconds = _execute(path)    # raises CellExecutionError when a cell raises
    assert seconds < NOTEBOOK_BUDGET, f"{path.name} took {seconds:.0f} s in quick mode"
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert errors == []
    images = sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code"
                 for o in c.get("outputs", []))
    assert images >= 2, f"{path.name} showed {images} figures"


def test_a_notebook_that_raises_fails(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    from nbclient.exceptions import CellExecutionError

    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import asrpt\n1 / 0")],
                                  metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    path = tmp_path / "broken.ipynb"
    nbformat.write(nb, str(path))
    with pytest.raises(CellExecutionError, match="ZeroDivisionError"):
        _execute(path)
