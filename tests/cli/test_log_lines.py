"""Warnings that libraries log during a run go through the display as one line each, never raw over it."""

from __future__ import annotations

import io
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from haystack_deep_research import cli
from haystack_deep_research.cli.display import PlainDisplay

CONSOLES = (sys.stderr, sys.stdout, sys.__stderr__, sys.__stdout__)
RAW = "search failed for 'solar capacity 2025 growth worldwide':\nTraceback ...\n  ConnectionError: refused"


@pytest.fixture
def bare_root() -> Iterator[logging.Logger]:
    """The root logger as a program that configured no console logging has it (the test runner's capture aside)."""
    root = logging.getLogger()
    kept = root.handlers[:]
    root.handlers = [h for h in kept if not isinstance(h, logging.StreamHandler) or h.stream not in CONSOLES]
    yield root
    root.handlers = kept


def _ours(root: logging.Logger, display: PlainDisplay) -> list[logging.Handler]:
    """The handlers routing records to ``display``."""
    return [h for h in root.handlers if getattr(getattr(h, "show", None), "__self__", None) is display]


def test_a_multi_line_log_record_is_one_line_of_the_plain_display(bare_root: logging.Logger) -> None:
    out = io.StringIO()
    display = PlainDisplay(stream=out)

    display.start()
    logging.getLogger("haystack_deep_research.sources").warning(RAW)
    display.stop()
    logging.getLogger("haystack_deep_research.sources").warning("after the run")

    [line] = out.getvalue().splitlines()
    assert line.startswith("[log] warning: search failed for 'solar capacity 2025 growth worldwide': Traceback")
    assert _ours(bare_root, display) == []  # logging is as it was once the run ends


def test_the_live_view_prints_log_records_above_itself(bare_root: logging.Logger) -> None:
    pytest.importorskip("rich")
    from rich.console import Console

    from haystack_deep_research.cli.display import RichDisplay

    out = io.StringIO()
    display = RichDisplay(console=Console(file=out, width=100, force_terminal=False))

    display.start()
    logging.getLogger("haystack.components").warning(RAW)
    display.stop()

    lines = [line for line in out.getvalue().splitlines() if line.startswith("[log]")]
    assert len(lines) == 1
    assert lines[0].startswith("[log] warning: search failed")


def test_a_program_with_its_own_logging_keeps_it(bare_root: logging.Logger) -> None:
    own = logging.StreamHandler(sys.stderr)
    bare_root.addHandler(own)
    display = PlainDisplay(stream=io.StringIO())

    display.start()
    attached = _ours(bare_root, display)
    display.stop()

    assert attached == []
    assert own in bare_root.handlers


class _NeverResearches:
    """Stands in for the factory: the command indexes its folders, and the run returns at once."""

    def __init__(self, **options: Any) -> None:
        self.options = options

    async def run_async(self, **kwargs: Any) -> dict[str, Any]:
        return {"report": "# Report\n", "exit_reason": "text", "warnings": [], "sources": []}


@pytest.fixture
def unconfigured() -> Iterator[logging.Logger]:
    """The root logger of a program that configured no logging at all: Python prints each warning raw on stderr."""
    root = logging.getLogger()
    kept = root.handlers[:]
    root.handlers = []
    yield root
    root.handlers = kept


@pytest.mark.usefixtures("unconfigured")
def test_what_indexing_logs_is_a_line_of_the_display_not_a_raw_record(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setattr("haystack_deep_research.cli.research.create_deep_research_agent", _NeverResearches)
    folder = tmp_path / "désk"
    folder.mkdir()
    (folder / "notes.md").write_text("# Notes\n\nSpring tides reached 4.2 metres.\n", encoding="utf-8")
    (folder / "broken\x1b[2K.pdf").write_bytes(b"%PDF-1.4 this is no PDF")  # a file name may hold an escape too

    argv = ["q", "--docs", str(folder), "--no-web", "--index-dir", str(tmp_path / "idx"), "--progress", "plain"]
    code = cli.main(argv)

    err = capsys.readouterr().err
    assert code == 0, err
    assert "\x1b" not in err
    lines = err.splitlines()
    assert "[index] 1/2 broken.pdf" in lines
    assert not [line for line in lines if not line.startswith(("[index] ", "[done] ", "[warning] "))]
    [notice] = [line for line in lines if "Not indexed" in line]
    assert notice.startswith(f"[index] {folder}: warning: Not indexed: broken.pdf: ")
