"""
Where the command puts a run's results: the report (``-o``, whose suffix may ask for an export, or stdout), the
evidence ledger (``--sources``), the run directory's copies, and the ``--json`` object; every file through
:func:`~haystack_deep_research._untrusted.files.write_file`. A run can take minutes and cost money, so the paths (and
the extra an export needs) are checked before any model is called, and a report is never lost to a write or export
that fails after the run: the error is one line and the Markdown goes to stdout.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from haystack_deep_research._untrusted.files import write_file, written_through
from haystack_deep_research._untrusted.terminal import say
from haystack_deep_research.errors import MissingExtraError, UsageError
from haystack_deep_research.evidence import EvidenceLedger
from haystack_deep_research.evidence.entry import normalize_url
from haystack_deep_research.options.exit_codes import in_words
from haystack_deep_research.report import export_docx, export_evidence, export_html, export_pdf
from haystack_deep_research.run import ResearchRun

__all__ = ["Saved", "check_output_paths", "result_json", "save_outputs"]


JSON_KEYS = ("report", "exit_reason", "sources", "citations", "warnings", "usage_by_phase", "cost")
"""The keys of the ``--json`` object besides ``question`` (and ``error`` when the run failed)."""


@dataclass
class Saved:
    """What was written where: one line per output written (for the summary), one per output that could not be."""

    lines: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    report_on_stdout: bool = False  # the report still has to go to stdout


def _write(saved: Saved, what: str, path: Path, text: str, result: Mapping[str, Any] | None = None) -> bool:
    """Write ``text`` to ``path``, or for a report (``result`` given) the export its suffix names."""
    kind = report_format(path) if result is not None else "markdown"
    try:
        if kind == "html" and result is not None:
            write_file(path, export_html(result), named=True)
        elif kind in ("docx", "pdf") and result is not None:
            (export_docx if kind == "docx" else export_pdf)(result, path)
        elif kind in ("csv", "xlsx") and result is not None:
            export_evidence(result, path)
        else:
            write_file(path, text, named=True)
    except OSError as error:
        saved.failures.append(f"could not write the {what} to {path} ({error.strerror or error})")
        return False
    except Exception as error:  # the run is paid for: an export that fails reports why, and the Markdown is kept
        if kind == "markdown":
            raise
        saved.failures.append(f"could not export the {what} as {kind} to {path} ({type(error).__name__}: {error})")
        return False
    saved.lines.append(f"{what} written to {path}")
    return True


def save_outputs(
    result: Mapping[str, Any],
    *,
    output: Path | None,
    sources: Path | None,
    run: ResearchRun | None = None,
    finished: bool = True,
) -> Saved:
    """
    Write the report (``-o``, else stdout) and the ledger (``--sources``); for a run that never finished, also its run
    directory's partial report and ledger, as a finished run writes them. A report not written is to go to stdout.
    """
    saved = Saved()
    report = str(result.get("report") or "")
    ledger = list(result.get("sources") or [])
    if sources is not None and (finished or ledger):
        text = json.dumps(with_passages(ledger, result.get("citations")), indent=2, ensure_ascii=False)
        _write(saved, "evidence ledger", sources, text)
    if report and output is not None:
        saved.report_on_stdout = not _write(saved, "report", output, report, result)
    elif report:
        saved.report_on_stdout = True
    journal = run.journal if run is not None else None
    if not finished and journal is not None:
        try:
            journal.write_ledger(EvidenceLedger.from_list(ledger))
            if report:
                journal.write_report(report)
            saved.lines.append(f"partial report and ledger written to {journal.directory}: rerun the command to resume")
        except OSError as error:
            saved.failures.append(f"could not write to the run directory {journal.directory} ({error})")
    return saved


def with_passages(ledger: list[Any], citations: Any) -> list[Any]:
    """The ledger's entries, each with ``passages``: the ``sentence`` citing it and the ``passage`` behind it."""
    found = citations.get("passages") if isinstance(citations, Mapping) else None
    by_url: dict[str, list[dict[str, str]]] = {}
    for passage in found or []:
        if isinstance(passage, Mapping) and isinstance(passage.get("url"), str) and passage["url"].strip():
            cited = {"sentence": passage.get("sentence", ""), "passage": passage.get("passage", "")}
            by_url.setdefault(normalize_url(passage["url"]), []).append(cited)
    entries: list[Any] = []
    for entry in ledger:
        url = entry.get("url") if isinstance(entry, Mapping) else None
        passages = by_url.get(normalize_url(url), []) if isinstance(url, str) and url.strip() else []
        entries.append({**entry, "passages": passages} if isinstance(entry, Mapping) else entry)
    return entries


def result_json(result: Mapping[str, Any], question: str, *, error: str | None = None) -> str:
    """The ``--json`` object: ``question``, :data:`JSON_KEYS` (the warnings in the command's words), ``clarification``
    when the run asked one, ``error`` when given."""
    payload: dict[str, Any] = {"question": question, **{key: result.get(key) for key in JSON_KEYS}}
    payload["warnings"] = [in_words(str(warning)) for warning in payload["warnings"] or []]  # in the command's words
    if result.get("clarification"):  # a --clarify run that asked instead of researching
        payload["clarification"] = result["clarification"]
    if error is not None:
        payload["error"] = error
    return json.dumps(payload, indent=2, ensure_ascii=False, default=str)


def print_stdout(text: str) -> None:
    say(text, file=sys.stdout)


ReportFormat = Literal["markdown", "html", "docx", "pdf", "csv", "xlsx"]
_FORMATS: dict[str, ReportFormat] = {
    ".html": "html",
    ".htm": "html",
    ".docx": "docx",
    ".pdf": "pdf",
    ".csv": "csv",
    ".xlsx": "xlsx",
}
_EXTRAS = {
    "docx": ("Word exports (-o report.docx)", "docx", "docx", "python-docx"),
    "pdf": ("PDF exports (-o report.pdf)", "pdf", "fpdf", "fpdf2"),
    "xlsx": ("evidence tables as XLSX (-o evidence.xlsx)", "office", "openpyxl", "openpyxl"),
}


def report_format(path: Path) -> ReportFormat:
    """``-o``'s format by its suffix: exports of the report or its evidence table, else (``.md``, none) Markdown."""
    return _FORMATS.get(path.suffix.lower(), "markdown")


def check_output_file(path: Path, option: str) -> Path:
    """
    :raises UsageError: If ``path`` names a folder, a socket or a block device, or its folder is missing or not
        writable (a FIFO or character device is written as it stands, so its folder need not be writable).
    """
    if path.is_dir():
        raise UsageError(f"{option} {path} is a folder; give a file path, for example {path / 'report.md'}.")
    if written_through(path):  # a FIFO, a device, /dev/stdout: written to as it stands, its folder untouched
        return path
    if path.exists() and not path.is_file():
        raise UsageError(f"{option} {path} is neither a file, a FIFO nor a terminal or other character device.")
    folder = path.parent
    if not folder.exists():
        raise UsageError(f"{option} {path}: the folder {folder} does not exist; create it first (mkdir -p {folder}).")
    if not folder.is_dir():
        raise UsageError(f"{option} {path}: {folder} is not a folder.")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {path}: the folder {folder} is not writable; choose another path.")
    return path


def check_output_paths(*, output: Path | None, sources: Path | None, run_dir: Path | None) -> None:
    """
    :raises UsageError: If an output path cannot be used (``--run-dir``: a file, or the nearest existing folder on its
        path not writable), or ``-o`` and ``--sources`` name the same file.
    :raises MissingExtraError: If ``-o`` names an export whose extra is not installed.
    """
    if output is not None:
        check_output_file(output, "-o")
        if report_format(output) in _EXTRAS:
            feature, extra, module, package = _EXTRAS[report_format(output)]
            try:
                importlib.import_module(module)
            except ImportError as error:
                raise MissingExtraError(feature, extra=extra, module=package) from error
    if sources is not None:
        check_output_file(sources, "--sources")
    if output is not None and sources is not None and output.absolute() == sources.absolute():
        raise UsageError(f"-o and --sources both name {output}; give two files.")
    if run_dir is None:
        return
    if run_dir.exists() and not run_dir.is_dir():
        raise UsageError(f"--run-dir {run_dir} is a file; give a folder (it is created if missing).")
    existing = next((folder for folder in (run_dir, *run_dir.absolute().parents) if folder.exists()), None)
    if existing is None or not existing.is_dir():
        raise UsageError(f"--run-dir {run_dir}: {existing} is not a folder.")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"--run-dir {run_dir}: the folder {existing} is not writable; choose another path.")
