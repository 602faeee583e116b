"""Ctrl-C during a run: exit 130, no traceback, and what the run gathered saved as a partial report that a rerun with
the same run directory resumes from."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from haystack.dataclasses import ChatMessage
from tests.support import signal_when_held

from haystack_deep_research import cli
from haystack_deep_research.testing import LoopbackChatServer, ScriptedChatGenerator, make_pdf

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT to a child process")

ROLES = ("scope", "orchestrator", "researcher", "summarizer", "writer")
QUESTION = "What do the notes say about tides and storage?"


class HeldWriter:
    """The writer model, held: it tells the test it was asked (every note is gathered by then), then waits."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.release = threading.Event()
        self._writer = ScriptedChatGenerator(role="writer")

    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        self.asked.set()
        self.release.wait(timeout=60)
        return self._writer.run(messages=messages, tools=tools)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "tides.md").write_text("# Tides\n\nSpring tides reached 4.2 metres at the northern gauge in 2024.\n")
    (root / "storage.pdf").write_bytes(make_pdf(["Grid battery storage doubled in 2025 to 300 gigawatt hours."]))
    return root


def _argv(server: LoopbackChatServer, folder: Path, tmp_path: Path) -> list[str]:
    roles = [arg for role in ROLES for arg in ("--role-model", f"{role}={role}")]
    return [
        QUESTION,
        *("--base-url", server.openai_base_url, *roles),
        *("--docs", str(folder), "--no-web", "--index-dir", str(tmp_path / "idx")),
        *("-o", str(tmp_path / "report.md"), "--sources", str(tmp_path / "sources.json")),
        *("--run-dir", str(tmp_path / "run"), "--progress", "plain"),
    ]


def test_ctrl_c_saves_a_partial_report_exits_130_and_the_rerun_resumes(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    writer = HeldWriter()
    models: dict[str, Any] = {role: ScriptedChatGenerator(role=role) for role in ROLES}
    models["writer"] = writer
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": os.pathsep.join(sys.path)}
    env["HAYSTACK_TELEMETRY_ENABLED"] = "False"
    with LoopbackChatServer(models) as server:
        command = [sys.executable, "-m", "haystack_deep_research.cli", *_argv(server, folder, tmp_path)]
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        out, err = signal_when_held(child, writer.asked, writer.release, signal.SIGINT, "writer")

    assert child.returncode == 130, err
    assert out == ""
    assert "Traceback" not in err
    lines = err.splitlines()
    assert any(line.startswith("[done] interrupted (Ctrl-C) after ") for line in lines)
    assert "[done] sub-topics: 2 done of 2 planned" in lines
    assert f"[done] report written to {tmp_path / 'report.md'}" in lines
    assert f"[done] evidence ledger written to {tmp_path / 'sources.json'}" in lines
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "it never ran: the run was interrupted with Ctrl-C" in report
    assert report.count("## Background: ") == 1  # both notes, in the order they were asked for
    assert report.count("## Recent developments: ") == 1
    tides = (folder / "tides.md").as_uri()
    assert f"[Tides]({tides})" in report.split("## Sources", 1)[1]  # the document's own title, its first heading
    ledger = {entry["url"] for entry in json.loads((tmp_path / "sources.json").read_text(encoding="utf-8"))}
    assert tides in ledger
    run_dir = tmp_path / "run"
    assert (run_dir / "report.md").read_text(encoding="utf-8") == report
    assert tides in (run_dir / "ledger.json").read_text(encoding="utf-8")

    with LoopbackChatServer() as server:  # the same command again: the notes come back from the run directory
        code = cli.main(_argv(server, folder, tmp_path))

    err = capsys.readouterr().err
    assert code == 0, err
    assert "[research] resumed: 2 sub-topic(s) and 2 source(s) restored" in err.splitlines()
    assert "The report writer failed" not in (tmp_path / "report.md").read_text(encoding="utf-8")


def test_sigterm_saves_the_partial_report_json_and_ledger_as_ctrl_c_does_says_so_and_exits_143(
    folder: Path, tmp_path: Path
) -> None:
    writer = HeldWriter()
    models: dict[str, Any] = {role: ScriptedChatGenerator(role=role) for role in ROLES}
    models["writer"] = writer
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": os.pathsep.join(sys.path)}
    env["HAYSTACK_TELEMETRY_ENABLED"] = "False"
    with LoopbackChatServer(models) as server:
        argv = [*_argv(server, folder, tmp_path), "--json"]
        command = [sys.executable, "-m", "haystack_deep_research.cli", *argv]
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        # SIGTERM: what timeout, systemd and Kubernetes send
        out, err = signal_when_held(child, writer.asked, writer.release, signal.SIGTERM, "writer")

    assert child.returncode == 143, err
    assert "Traceback" not in err
    assert any(line.startswith("[done] terminated (SIGTERM) after ") for line in err.splitlines())
    assert "Ctrl-C" not in err
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "it never ran: the run was interrupted with SIGTERM" in report
    assert report.count("## Background: ") == 1  # both notes gathered before the signal are in it
    assert report.count("## Recent developments: ") == 1
    tides = (folder / "tides.md").as_uri()
    ledger = {entry["url"] for entry in json.loads((tmp_path / "sources.json").read_text(encoding="utf-8"))}
    assert tides in ledger
    printed = json.loads(out)
    assert printed["exit_reason"] == "interrupted"
    assert printed["report"] == report
    assert tides in (tmp_path / "run" / "ledger.json").read_text(encoding="utf-8")
