"""The example notebook runs offline in a real kernel, and shows progress and the rendered result."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

import haystack_deep_research

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "notebook.ipynb"


def test_the_example_notebook_runs_and_renders_the_report(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The kernel is a separate process: it imports the package under test from where this process found it.
    package_root = str(Path(haystack_deep_research.__file__).resolve().parents[1])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")]))
    notebook = nbformat.read(NOTEBOOK, as_version=4)

    NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()

    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.get("outputs", [])]
    assert not [output for output in outputs if output.output_type == "error"]
    markdown = [output.data["text/markdown"] for output in outputs if "text/markdown" in output.get("data", {})]
    progress, report = markdown[0], markdown[-1]
    assert progress.startswith("**Researching:** What causes spring tides?")
    assert "finished (text) · 2/2 sub-topics" in progress  # the block was updated in place to the final state
    assert report.startswith("# Research report")
    assert "### Sources read" in report
    assert "/moon.pdf>" in report
    printed = "".join(output.get("text", "") for output in outputs if output.output_type == "stream")
    assert printed.strip() == "text 0.0 2"
