"""Every subcommand held to the one exit table: the code of each outcome, each ``exit_reason``, and SIGTERM."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from haystack.dataclasses import ChatMessage
from tests.support import signal_when_held

from haystack_deep_research import cli, state
from haystack_deep_research.options.exit_codes import EXIT_REASON_CODES, ExitCode, outcome_code
from haystack_deep_research.testing import LoopbackChatServer, ScriptedChatGenerator, kit_commands, serve_kit
from haystack_deep_research.testing._kit import KitServers

DEEP = {role: role for role in ("scope", "orchestrator", "researcher", "summarizer", "writer")}
ITERATIVE = {**DEEP, "orchestrator": "analysis"}  # the iterative mode's analysis is the orchestrator's model
FAILING_SUBTOPIC = "Recent developments"


class _OneResearcherFails:
    """A researcher model of this test: it fails (the server answers 500) for one sub-topic, and researches the rest."""

    def __init__(self, failing: str = FAILING_SUBTOPIC) -> None:
        self.failing = failing
        self._researcher = ScriptedChatGenerator(role="researcher")

    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        if any(self.failing in (message.text or "") for message in messages):
            raise RuntimeError("the GPU of this model server fell over")
        return self._researcher.run(messages=messages, tools=tools)


class _NoSecondDecision:
    """An analysis model that decides the first round, and after it never answers with a decision."""

    def __init__(self) -> None:
        self._analysis, self._asked = ScriptedChatGenerator(role="analysis"), 0

    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        self._asked += 1
        if self._asked == 1:
            return self._analysis.run(messages=messages, tools=tools)
        return {"replies": [ChatMessage.from_assistant("Ich weiß es nicht — vielleicht morgen.")]}


@pytest.fixture(scope="module")
def kit() -> Iterator[KitServers]:
    with serve_kit() as servers:
        yield servers


def _served(servers: KitServers, chat: LoopbackChatServer, *extra: str) -> list[str]:
    """The kit's deep command line (iterative with ``--mode iterative``), on another chat server whose models are
    named by role."""
    argv = kit_commands(servers)["deep"][1:]
    argv[argv.index("--base-url") + 1] = chat.openai_base_url
    del argv[argv.index("--model") : argv.index("--model") + 2]
    roles = ITERATIVE if "iterative" in extra else DEEP
    return [*argv, *(arg for role, model in roles.items() for arg in ("--role-model", f"{role}={model}")), *extra]


def _models(**replaced: Any) -> dict[str, Any]:
    roles = ("scope", "orchestrator", "researcher", "summarizer", "writer", "analysis")
    return {role: ScriptedChatGenerator(role=role) for role in roles} | replaced  # type: ignore[arg-type]


def _deep(kit: KitServers, tmp: Path) -> int:
    return cli.main([*kit_commands(kit)["deep"][1:], "-o", str(tmp / "r.md"), "--sources", str(tmp / "s.json")])


def _partial(kit: KitServers, tmp: Path) -> int:
    with LoopbackChatServer(_models(researcher=_OneResearcherFails())) as chat:
        return cli.main([*_served(kit, chat, "--retries", "0"), "-o", str(tmp / "r.md")])


def _all_failed(kit: KitServers, tmp: Path) -> int:
    with LoopbackChatServer(_models(researcher=_OneResearcherFails(failing="Sub-topic"))) as chat:
        return cli.main([*_served(kit, chat, "--retries", "0"), "-o", str(tmp / "r.md")])


def _iterative(kit: KitServers, tmp: Path) -> int:
    return cli.main([*kit_commands(kit)["iterative"][1:], "-o", str(tmp / "r.md"), "--run-dir", str(tmp / "run")])


def _iterative_undecided(kit: KitServers, tmp: Path) -> int:
    with LoopbackChatServer(_models(analysis=_NoSecondDecision())) as chat:
        argv = [*_served(kit, chat, "--mode", "iterative", "--depth", "2"), "-o", str(tmp / "r.md")]
        return cli.main(argv)


def _replay(kit: KitServers, tmp: Path) -> int:
    assert cli.main([*kit_commands(kit)["iterative"][1:], "--record", str(tmp / "tape"), "-o", str(tmp / "a.md")]) == 0
    return cli.main(["replay", str(tmp / "tape"), "-o", str(tmp / "b.md")])


def _update(kit: KitServers, tmp: Path) -> int:
    assert _iterative(kit, tmp) == 0
    return cli.main(["update", str(tmp / "run"), "-o", str(tmp / "u.md")])


def _scan(kit: KitServers, tmp: Path) -> int:
    return cli.main([*kit_commands(kit)["scan"][1:], "--out", str(tmp / "rows.jsonl"), "--progress", "none"])


def _scan_of(*items: str) -> Callable[[KitServers, Path], int]:
    def scan(kit: KitServers, tmp: Path) -> int:
        (tmp / "items.txt").write_text("".join(f"{item}\n" for item in items), encoding="utf-8")
        argv = kit_commands(kit)["scan"][1:]
        argv[1] = str(tmp / "items.txt")
        return cli.main([*argv, "--attempts", "1", "--progress", "none"])

    return scan


TOO_LONG = "¿por qué? " * 2_100  # over the question's limit: its research fails, the other item's goes on


def _check(kit: KitServers, tmp: Path) -> int:
    assert _deep(kit, tmp) == 0
    return cli.main(["check", str(tmp / "r.md"), "--sources", str(tmp / "s.json")])


def _check_unread(kit: KitServers, tmp: Path) -> int:
    (tmp / "r.md").write_text("# Report\n\nThe sun rose [source](https://never.read.example/page).\n", "utf-8")
    (tmp / "s.json").write_text("[]", encoding="utf-8")
    return cli.main(["check", str(tmp / "r.md"), "--sources", str(tmp / "s.json")])


def _check_unreadable(kit: KitServers, tmp: Path) -> int:
    (tmp / "r.md").write_text("# Report\n\n```\nA fence that never closes [1].\n", encoding="utf-8")
    return cli.main(["check", str(tmp / "r.md")])


def _dead_server(kit: KitServers, tmp: Path) -> int:
    argv = kit_commands(kit)["iterative"][1:]
    argv[argv.index("--base-url") + 1] = "http://127.0.0.1:9/v1"  # the discard port: nothing listens there
    return cli.main([*argv, "-o", str(tmp / "r.md")])


def _usage(*argv: str) -> Callable[[KitServers, Path], int]:
    return lambda kit, tmp: cli.main([*argv])


CASES: list[tuple[str, Callable[[KitServers, Path], int], ExitCode]] = [
    ("main: done", _deep, ExitCode.OK),
    ("main: one researcher of two failed", _partial, ExitCode.PARTIAL),
    ("main: every researcher failed", _all_failed, ExitCode.RESEARCH_FAILED),
    ("main: a bad option", _usage("Solar?", "--max-subtopics", "zero"), ExitCode.USAGE),
    ("iterative: done", _iterative, ExitCode.OK),
    ("iterative: no decision", _iterative_undecided, ExitCode.PARTIAL),
    ("iterative: a dead model server", _dead_server, ExitCode.RUN_FAILED),
    ("iterative: a bad option", _usage("Solar?", "--mode", "iterative", "--depth", "-1"), ExitCode.USAGE),
    ("replay: done", _replay, ExitCode.OK),
    ("replay: no recording", _usage("replay", "no-such-recording"), ExitCode.USAGE),
    ("update: done", _update, ExitCode.OK),
    ("update: no run", _usage("update", "no-such-run"), ExitCode.USAGE),
    ("scan: every item has a row", _scan, ExitCode.OK),
    ("scan: one item of two failed", _scan_of("How fast is solar power growing?", TOO_LONG), ExitCode.PARTIAL),
    ("scan: every item failed", _scan_of(TOO_LONG), ExitCode.RESEARCH_FAILED),
    ("scan: no --out", _usage("scan", "items.txt"), ExitCode.USAGE),
    ("check: every citation verified", _check, ExitCode.OK),
    ("check: a citation never read", _check_unread, ExitCode.RUN_FAILED),
    ("check: citations that cannot be read", _check_unreadable, ExitCode.UNREADABLE),
    ("check: no report", _usage("check", "no-such-report.md"), ExitCode.USAGE),
]


@pytest.mark.parametrize(("case", "command", "expected"), CASES, ids=[case for case, _, _ in CASES])
def test_every_subcommand_exits_as_the_table_says(
    case: str,
    command: Callable[[KitServers, Path], int],
    expected: ExitCode,
    kit: KitServers,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    code = command(kit, tmp_path)

    err = capsys.readouterr().err
    assert code == expected, err
    assert "Traceback" not in err


def test_every_exit_reason_the_library_sets_has_a_code() -> None:
    reasons = {value for name, value in vars(state).items() if name.startswith("EXIT_") and name != "EXIT_REASON"}
    reasons.add(state.HAYSTACK_MAX_STEPS)

    assert reasons - set(EXIT_REASON_CODES) == set()  # a new exit reason needs its row in the table
    assert set(EXIT_REASON_CODES) - reasons == set()
    assert all(EXIT_REASON_CODES[reason] != ExitCode.OK for reason in state.FAILED_EXIT_REASONS)


def _documented_codes() -> dict[str, int]:
    """The code docs/cli.md promises for each exit_reason: its table's rows 5 and 6, and the sentence under it."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    section = page.split("## Exit status", 1)[1].split("\n## ", 1)[0]
    promised: dict[str, int] = {}
    for code in (5, 6):
        row = re.search(rf"^\| {code} \| .*?\(.*?`exit_reason` (.*?)\)", section, re.MULTILINE)
        assert row is not None, code
        promised |= dict.fromkeys(re.findall(r"`(\w+)`", row.group(1)), code)
    done = re.search(r"\): (.*?) are 0;", section, re.DOTALL)
    assert done is not None
    promised |= dict.fromkeys(re.findall(r"`(\w+)`", done.group(1)), 0)
    promised |= dict.fromkeys(re.findall(r"`(\w+)` 3", section), 3)
    return promised


def test_every_exit_reason_exits_with_the_code_the_docs_promise() -> None:
    """A script reads docs/cli.md's exit table: each reason's code there is the one the command returns."""
    promised = _documented_codes()
    given = {reason: int(code) for reason, code in EXIT_REASON_CODES.items() if reason != state.EXIT_INTERRUPTED}

    assert given == promised
    for reason, code in promised.items():
        assert outcome_code({"exit_reason": reason, "notes": ["a finding"]}) == code, reason


@pytest.mark.parametrize(
    ("result", "failed", "expected"),
    [
        ({"exit_reason": "text", "notes": ["a"]}, 0, ExitCode.OK),
        ({"exit_reason": "text", "notes": ["a"]}, 1, ExitCode.PARTIAL),
        ({"exit_reason": "subtopics_done", "notes": []}, 2, ExitCode.RESEARCH_FAILED),
        ({"exit_reason": "writer_failed", "notes": ["a"]}, 1, ExitCode.RESEARCH_FAILED),
        ({"exit_reason": "clarification_needed", "notes": []}, 0, ExitCode.CLARIFICATION_NEEDED),
        ({"exit_reason": "submit_answer", "notes": ["a"]}, 0, ExitCode.OK),  # a deep agent's own exit tool
    ],
)
def test_the_outcome_code_reads_the_reason_the_notes_and_the_failed_researchers(
    result: dict[str, Any], failed: int, expected: ExitCode
) -> None:
    assert outcome_code(result, researchers_failed=failed) == expected


class _HeldWriter:
    """The writer model, held: it tells the test it was asked, then waits to be released."""

    def __init__(self) -> None:
        self.asked, self.release = threading.Event(), threading.Event()
        self._writer = ScriptedChatGenerator(role="writer")

    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        self.asked.set()
        self.release.wait(timeout=120)
        return self._writer.run(messages=messages, tools=tools)


class _HeldChat(LoopbackChatServer):
    """The kit's chat server, held: it tells the test a model was asked, then waits to be released."""

    def __init__(self) -> None:
        super().__init__()
        self.asked, self.release = threading.Event(), threading.Event()

    def _answer(self, handler: Any, model: str, body: dict[str, Any]) -> None:
        self.asked.set()
        self.release.wait(timeout=120)
        super()._answer(handler, model, body)


def _child(argv: list[str]) -> subprocess.Popen[str]:
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": os.pathsep.join(sys.path)}
    env["HAYSTACK_TELEMETRY_ENABLED"] = "False"
    command = [sys.executable, "-m", "haystack_deep_research.cli", *argv]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGTERM to a child process")
def test_sigterm_ends_a_scan_with_143_and_keeps_its_rows_file(kit: KitServers, tmp_path: Path) -> None:
    with _HeldChat() as chat:
        argv = kit_commands(kit)["scan"][1:]
        argv[argv.index("--base-url") + 1] = chat.openai_base_url
        child = _child([*argv, "--out", str(tmp_path / "rows.jsonl"), "--progress", "none"])
        _, err = signal_when_held(child, chat.asked, chat.release, signal.SIGTERM, "model")

    assert child.returncode == ExitCode.TERMINATED, err
    assert "Traceback" not in err
    assert f"deep-research scan: interrupted; the rows written so far are in {tmp_path / 'rows.jsonl'}." in err


@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGTERM to a child process")
@pytest.mark.parametrize("mode", [[], ["--mode", "iterative", "--depth", "1"]], ids=["main", "iterative"])
def test_sigterm_exits_143_with_the_partial_report_saved(mode: list[str], kit: KitServers, tmp_path: Path) -> None:
    writer = _HeldWriter()
    with LoopbackChatServer(_models(writer=writer)) as chat:
        child = _child([*_served(kit, chat, *mode), "-o", str(tmp_path / "r.md"), "--json", "--progress", "none"])
        out, err = signal_when_held(child, writer.asked, writer.release, signal.SIGTERM, "writer")

    assert child.returncode == ExitCode.TERMINATED == 143, err
    assert "Traceback" not in err
    assert json.loads(out)["exit_reason"] == "interrupted"
    assert (tmp_path / "r.md").exists()
