"""What a run leaves, through the command: the progress on stderr, --json on stdout, and what is kept when the run
fails or a file cannot be written after it."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
from pathlib import Path
from typing import Any

import pytest
from tests.support import read_fifo

from haystack_deep_research import ResearchRun, RunInputs, cli
from haystack_deep_research.testing import LoopbackChatServer, make_pdf

ROLES = ("scope", "orchestrator", "researcher", "summarizer", "writer")
QUESTION = "What do the notes say about tides and storage?"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "tides.md").write_text("# Tides\n\nSpring tides reached 4.2 metres at the northern gauge in 2024.\n")
    (root / "storage.pdf").write_bytes(make_pdf(["Grid battery storage doubled in 2025 to 300 gigawatt hours."]))
    return root


def _loopback_run(folder: Path, tmp_path: Path, *options: str) -> int:
    roles = [arg for role in ROLES for arg in ("--role-model", f"{role}={role}")]
    with LoopbackChatServer() as server:
        argv = [QUESTION, "--base-url", server.openai_base_url, *roles, "--docs", str(folder), "--no-web"]
        return cli.main([*argv, "--index-dir", str(tmp_path / "idx"), *options])


def test_plain_progress_follows_each_researcher_and_ends_with_a_summary(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.md"

    assert _loopback_run(folder, tmp_path, "-o", str(report), "--progress", "plain") == 0

    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert out == ""
    assert f"[run] researching: {QUESTION}" in lines
    assert any(line.startswith("[scope] brief ready (") for line in lines)
    assert sum(line.startswith("[research #1] done: ") for line in lines) == 1
    assert sum(line.startswith("[research #2] done: ") for line in lines) == 1
    assert any(line.startswith("[done] finished in ") and line.endswith("s (exit reason: text)") for line in lines)
    assert "[done] sub-topics: 2 done of 2 planned" in lines
    assert "[done] sources: 2 read, 2 found; citations: 4 verified, 0 removed" in lines
    assert any(line.startswith("[done] tokens: ") and line.endswith("; cost: unknown") for line in lines)
    assert f"[done] report written to {report}" in lines
    assert (folder / "tides.md").as_uri() in report.read_text(encoding="utf-8")


def test_json_is_one_object_on_stdout_with_the_runs_outputs(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _loopback_run(folder, tmp_path, "--json", "-q") == 0

    out, err = capsys.readouterr()
    answer = json.loads(out)
    assert err == ""
    assert list(answer) == [
        "question",
        "report",
        "exit_reason",
        "sources",
        "citations",
        "warnings",
        "usage_by_phase",
        "cost",
    ]
    assert answer["question"] == QUESTION
    assert answer["exit_reason"] == "text"
    tides = (folder / "tides.md").as_uri()
    assert f"]({tides})" in answer["report"]
    assert tides in {source["url"] for source in answer["sources"]}
    assert tides in answer["citations"]["verified_urls"]
    assert answer["usage_by_phase"]["write"]["model"] == "writer"
    assert answer["cost"] is None  # the loopback models have no price
    assert any("the run's cost is unknown" in warning for warning in answer["warnings"])


class _FailsAfterResearch:
    """An agent whose run gathers one note and one page, then fails as a provider would."""

    def __init__(self, url: str, *, error: Exception | None = None, delete: Path | None = None) -> None:
        self.url, self.error, self.delete = url, error, delete

    async def run_async(self, *, messages: Any, inputs: RunInputs) -> dict[str, Any]:
        run = ResearchRun(question=messages[-1].text)
        run.brief = "How tides and storage changed."
        inputs.on_run_opened(run)
        run.ledger.record_page(url=self.url, title="Tides", text="Spring tides reached 4.2 metres.")
        run.add_notes([f"## Tides\n\nSpring tides reached 4.2 metres [Tides]({self.url})."], position=0)
        if self.delete is not None:
            shutil.rmtree(self.delete)
        if self.error is not None:
            raise self.error
        return {"report": "# Report\n\nDone.\n", "exit_reason": "text", "sources": run.ledger.to_list()}


def test_a_run_that_fails_keeps_what_it_gathered(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    url = "https://example.org/tides"
    agent = _FailsAfterResearch(url, error=ConnectionError("connection reset by peer"))
    monkeypatch.setattr("haystack_deep_research.cli.research.create_deep_research_agent", lambda **_: agent)
    report, sources = tmp_path / "report.md", tmp_path / "sources.json"

    code = cli.main(["How did tides change?", "-o", str(report), "--sources", str(sources), "--progress", "plain"])

    out, err = capsys.readouterr()
    assert code == 1
    assert out == ""
    assert err.splitlines()[-1] == "deep-research: error: the run failed: ConnectionError: connection reset by peer"
    assert "[done] failed after " in err
    assert "Traceback" not in err
    text = report.read_text(encoding="utf-8")
    assert "it never ran: the run failed with ConnectionError: connection reset by peer" in text
    assert "Spring tides reached 4.2 metres [Tides](https://example.org/tides)." in text
    assert text.endswith(f"## Sources\n\n- [Tides]({url})\n")  # verified against the pages read
    assert [entry["url"] for entry in json.loads(sources.read_text(encoding="utf-8"))] == [url]


def test_a_report_that_cannot_be_written_after_the_run_goes_to_stdout(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    gone = tmp_path / "out"
    gone.mkdir()
    agent = _FailsAfterResearch("https://example.org/tides", delete=gone)  # the folder vanishes during the run
    monkeypatch.setattr("haystack_deep_research.cli.research.create_deep_research_agent", lambda **_: agent)

    code = cli.main(["How did tides change?", "-o", str(gone / "report.md"), "-q"])

    out, err = capsys.readouterr()
    assert code == 1
    assert out == "# Report\n\nDone.\n\n"
    assert err.startswith(f"deep-research: error: could not write the report to {gone / 'report.md'} (")
    assert len(err.splitlines()) == 1


def test_json_of_a_failed_run_holds_the_partial_report_and_the_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    agent = _FailsAfterResearch("https://example.org/tides", error=TimeoutError("read timed out"))
    monkeypatch.setattr("haystack_deep_research.cli.research.create_deep_research_agent", lambda **_: agent)

    code = cli.main(["How did tides change?", "--json", "-q"])

    out, err = capsys.readouterr()
    answer = json.loads(out)
    assert code == 1
    assert err == "deep-research: error: the run failed: TimeoutError: read timed out\n"
    assert answer["error"] == err.rstrip("\n")
    assert answer["exit_reason"] == "failed"
    assert "Spring tides reached 4.2 metres" in answer["report"]
    assert answer["citations"]["verified_urls"] == ["https://example.org/tides"]
    assert answer["warnings"] == [
        "run: the run failed (TimeoutError) before its report was written; the report holds the notes gathered"
    ]


class _FailsBeforeAnyNote:
    """An agent whose run opens and then fails before any note is gathered."""

    async def run_async(self, *, messages: Any, inputs: RunInputs) -> dict[str, Any]:
        inputs.on_run_opened(ResearchRun(question=messages[-1].text))
        raise TimeoutError("read timed out")


def test_a_run_that_fails_before_any_note_does_not_claim_its_report_holds_notes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setattr(
        "haystack_deep_research.cli.research.create_deep_research_agent", lambda **_: _FailsBeforeAnyNote()
    )

    code = cli.main(["How did tides change?", "--json", "-q"])

    answer = json.loads(capsys.readouterr().out)
    assert code == 1
    assert answer["report"] == ""
    assert answer["warnings"] == [
        "run: the run failed (TimeoutError) before its report was written; no note was gathered, so there is no report"
    ]


def test_a_fifo_given_to_o_gets_the_report_and_stays_a_fifo(folder: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "report-pipe"
    os.mkfifo(fifo)
    reader, got = read_fifo(fifo)

    assert _loopback_run(folder, tmp_path, "-o", str(fifo), "-q") == 0
    reader.join(timeout=60)

    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert (folder / "tides.md").as_uri() in got[0].decode("utf-8")


def test_a_character_device_given_to_o_is_written_to_not_replaced(folder: Path, tmp_path: Path) -> None:
    null = tmp_path / "null"
    try:
        os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # what -o /dev/null names, in the test's own folder
    except (PermissionError, OSError) as error:
        pytest.skip(f"cannot make a device node here ({error})")

    assert _loopback_run(folder, tmp_path, "-o", str(null), "--sources", str(null.with_name("s")), "-q") == 0

    assert stat.S_ISCHR(os.lstat(null).st_mode)


def test_a_link_given_to_o_is_followed_and_kept(folder: Path, tmp_path: Path) -> None:
    real = tmp_path / "reports" / "tides.md"
    real.parent.mkdir()
    real.write_text("old report")
    link = tmp_path / "latest.md"
    link.symlink_to(real)

    assert _loopback_run(folder, tmp_path, "-o", str(link), "-q") == 0

    assert link.is_symlink()
    assert (folder / "tides.md").as_uri() in real.read_text(encoding="utf-8")


def test_a_socket_given_to_o_is_refused_before_the_run(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "report.sock"
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(path))
    try:
        code = _loopback_run(folder, tmp_path, "-o", str(path), "-q")
    finally:
        listening.close()

    assert code == 2
    assert f"-o {path} is neither a file" in capsys.readouterr().err
    assert stat.S_ISSOCK(os.lstat(path).st_mode)
