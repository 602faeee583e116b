"""``python -m haystack_deep_research.testing serve``: the kit from the shell, driving deep-research in both modes."""

from __future__ import annotations

import json
import os
import queue
import re
import shlex
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from haystack_deep_research import cli
from haystack_deep_research.errors import UsageError
from haystack_deep_research.options.exit_codes import ExitCode
from haystack_deep_research.testing import kit_commands, serve_kit

START_TIMEOUT_S = 60
README = Path(__file__).resolve().parents[2] / "README.md"


class _Kit:
    """The launcher as a child process; its printed lines arrive through a queue, read by one thread."""

    def __init__(self, *args: str) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        command = [sys.executable, "-m", "haystack_deep_research.testing", "serve", "--stop-after", "300", *args]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put("")  # the end of the output

    def until(self, last: str) -> list[str]:
        seen: list[str] = []
        while not seen or not seen[-1].startswith(last):
            seen.append(self.lines.get(timeout=START_TIMEOUT_S))
            assert seen[-1] or self.process.poll() is None, f"the kit ended early: {seen}"
        return seen

    def stop(self, signum: int = signal.SIGTERM) -> int:
        self.process.send_signal(signum)
        return self.process.wait(timeout=30)


@pytest.fixture
def kit() -> Iterator[_Kit]:
    started = _Kit()
    try:
        yield started
    finally:
        if started.process.poll() is None:
            started.process.kill()
            started.process.wait(timeout=30)


def _commands(lines: list[str]) -> dict[str, list[str]]:
    found = {}
    for line in lines:
        mode, _, command = line.partition(": ")
        if mode in ("deep", "iterative", "scan"):
            found[mode] = shlex.split(command)
    return found


@pytest.mark.parametrize("mode", ["deep", "iterative"])
def test_the_printed_command_lines_research_against_the_kit(kit: _Kit, mode: str, tmp_path: Path) -> None:
    commands = _commands(kit.until("kit: serving"))
    command = commands[mode]
    report, sources = tmp_path / "report.md", tmp_path / "sources.json"

    assert command[0] == "deep-research"
    assert cli.main([*command[1:], "-o", str(report), "--sources", str(sources), "-q"]) == 0

    text = report.read_text(encoding="utf-8")
    read = [entry["url"] for entry in json.loads(sources.read_text(encoding="utf-8")) if entry["kind"] == "page"]
    solar = next(url for url in read if url.endswith("/solar-growth.html"))
    assert f"]({solar})" in text  # a citation of a page the run read on the kit's web server
    assert kit.stop() == 0
    assert kit.until("kit: stopped")


def test_the_printed_scan_line_runs_as_printed_and_writes_a_row(
    kit: _Kit, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    command = _commands(kit.until("kit: serving"))["scan"]
    monkeypatch.chdir(tmp_path)

    assert command[:2] == ["deep-research", "scan"]
    assert cli.main([*command[1:], "--progress", "none"]) == ExitCode.OK

    [row] = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text(encoding="utf-8").splitlines()]
    assert row["item"]["name"] == "How fast is solar power growing, and what limits it?"
    assert any(url.endswith("/solar-growth.html") for url in row["data"]["sources"])  # a page read on the kit
    assert not (tmp_path / "rows.failures.jsonl").exists()
    assert kit.stop() == 0


def test_a_scan_of_a_non_ascii_question_writes_its_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with serve_kit() as servers:
        command = kit_commands(servers, "¿Qué limita la energía solar?  Ωμέγα")["scan"]
        code = cli.main([*command[1:], "--progress", "none"])

    assert code == ExitCode.OK
    [row] = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text(encoding="utf-8").splitlines()]
    assert row["item"]["name"] == "¿Qué limita la energía solar? Ωμέγα"
    assert row["data"]["sources"]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_the_kit_prints_both_modes_and_stops_on_a_signal(kit: _Kit, signum: int) -> None:
    lines = kit.until("kit: serving")

    assert set(_commands(lines)) == {"deep", "iterative", "scan"}
    assert "--mode iterative" in next(line for line in lines if line.startswith("iterative: "))
    assert kit.stop(signum) == 0
    assert kit.until("kit: stopped")


def test_a_corpus_folder_becomes_the_pages(tmp_path: Path) -> None:
    (tmp_path / "tides.md").write_text("# Tides\n\nThe moon raises the tides.\n", encoding="utf-8")
    page = "<html><head><title>Storage</title><script>alert(1)</script></head><body><p>Barrages store water.</p>"
    (tmp_path / "storage.html").write_text(page, encoding="utf-8")
    (tmp_path / "notes.bin").write_bytes(b"\0\1")

    with serve_kit(tmp_path) as servers:
        documents = {document.title: document for document in servers.search.documents}
        tides = servers.web.url("/tides.html")

    assert sorted(documents) == ["Storage", "Tides"]
    assert documents["Tides"].url == tides
    assert documents["Storage"].content == "Barrages store water."


def test_a_link_out_of_the_corpus_folder_is_refused(tmp_path: Path) -> None:
    corpus, secret = tmp_path / "corpus", tmp_path / "secret.txt"
    corpus.mkdir()
    secret.write_text("not for the kit\n", encoding="utf-8")
    (corpus / "page.txt").symlink_to(secret)

    with pytest.raises(UsageError, match=r"page\.txt is not served"), serve_kit(corpus):
        pass


def test_a_missing_corpus_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a folder"), serve_kit(tmp_path / "missing"):
        pass
    shell = _Kit("--corpus", str(tmp_path / "missing"))

    assert shell.process.wait(timeout=60) == 2
    assert "kit: error: --corpus" in shell.until("kit: error")[-1]


def test_one_role_model_for_every_role_is_refused_not_played(capsys: pytest.CaptureFixture[str]) -> None:
    with serve_kit() as servers:
        argv = kit_commands(servers)["iterative"][1:]
        argv[argv.index("kit")] = "writer"  # --model writer alone: the analysis would be played by the writer
        cli.main([*argv, "-q", "--json"])

    result = json.loads(capsys.readouterr().out)
    assert result["exit_reason"] == "no_evidence"
    assert any("this request is for the analysis role; use --model kit" in w for w in result["warnings"])


def test_the_readme_first_screen_shows_the_install_from_a_clone_and_the_kit_run() -> None:
    text = README.read_text(encoding="utf-8")
    first_screen = text.split("\n## ", 1)[0]
    block = next(part for part in first_screen.split("```bash\n")[1:] if "testing serve" in part).split("```")[0]
    lines = block.replace("\\\n", " ").splitlines()
    [run] = [shlex.split(line.split("  # ")[0]) for line in lines if line.startswith("deep-research ")]

    assert 'pip install ".[cli]"' in first_screen
    assert first_screen.index('pip install ".[cli]"') < first_screen.index("```python")  # before any key is needed
    assert lines[0].startswith("python -m haystack_deep_research.testing serve")
    with serve_kit() as servers:
        printed = kit_commands(servers)["deep"]
    assert [re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", arg) for arg in printed] == run
