"""
The command's output paths, checked before anything is run (they are written through
:func:`haystack_deep_research._untrusted.files.write_file`, so that a crash never leaves half a file).

A run can take minutes and cost money, so ``-o``, ``--sources`` and ``--run-dir`` are checked before any model is
called: a file path must not name a folder, and its folder must exist and be writable; the run directory must not
name a file, and the nearest folder that exists on its path must be writable (the run creates the rest). The suffix
of ``-o`` chooses the report's format (:func:`report_format`); a Word or PDF report whose extra is not installed is
refused then too.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Literal

from haystack_deep_research._untrusted.files import written_through
from haystack_deep_research.errors import MissingExtraError, UsageError

__all__ = ["check_output_file", "check_output_paths", "check_run_dir_path", "report_format"]

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
    """
    :param path: ``-o``.
    :returns: The report's format by the path's suffix: ``.html``/``.htm``, ``.docx`` and ``.pdf`` are exports of the
        report, ``.csv`` and ``.xlsx`` its evidence table (see :mod:`haystack_deep_research.report`); any other suffix
        (``.md``, none) gets the Markdown.
    """
    return _FORMATS.get(path.suffix.lower(), "markdown")


def _writable_folder(folder: Path) -> bool:
    return os.access(folder, os.W_OK | os.X_OK)


def check_output_file(path: Path, option: str) -> Path:
    """
    Check that a file can be written at ``path``.

    :param path: The path given.
    :param option: The option it was given with (``-o``, ``--sources``), quoted in the error.
    :returns: The path.
    :raises UsageError: If it names a folder, a socket or a block device, its folder does not exist or is not a
        folder, or cannot be written. A FIFO, a character device or ``/dev/stdout`` is written to as it stands (see
        :func:`~haystack_deep_research._untrusted.files.written_through`), so its folder need not be writable.
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
    if not _writable_folder(folder):
        raise UsageError(f"{option} {path}: the folder {folder} is not writable; choose another path.")
    return path


def check_run_dir_path(path: Path) -> Path:
    """
    Check that ``path`` can be a run directory.

    :param path: The ``--run-dir`` given.
    :returns: The path.
    :raises UsageError: If it names a file, or the nearest existing folder on its path cannot be written.
    """
    if path.exists() and not path.is_dir():
        raise UsageError(f"--run-dir {path} is a file; give a folder (it is created if missing).")
    existing = next((folder for folder in (path, *path.absolute().parents) if folder.exists()), None)
    if existing is None or not existing.is_dir():
        raise UsageError(f"--run-dir {path}: {existing} is not a folder.")
    if not _writable_folder(existing):
        raise UsageError(f"--run-dir {path}: the folder {existing} is not writable; choose another path.")
    return path


def check_output_paths(*, output: Path | None, sources: Path | None, run_dir: Path | None) -> None:
    """
    Check every output path the command was given (see the module docstring).

    :param output: ``-o``, if given.
    :param sources: ``--sources``, if given.
    :param run_dir: ``--run-dir``, if given.
    :raises UsageError: If one cannot be used, or ``-o`` and ``--sources`` name the same file.
    :raises MissingExtraError: If ``-o`` names a Word or PDF file and the extra that writes it is not installed.
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
    if run_dir is not None:
        check_run_dir_path(run_dir)
