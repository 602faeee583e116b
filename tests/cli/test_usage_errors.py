"""Every user error is one line in the command's own terms, exit status 2, found before any model is called."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import haystack_deep_research
from haystack_deep_research import cli
from haystack_deep_research.options.exit_codes import ExitCode
from haystack_deep_research.testing import LoopbackChatServer

ROLES = ("scope", "orchestrator", "researcher", "summarizer", "writer")


@pytest.fixture
def server() -> Iterator[LoopbackChatServer]:
    with LoopbackChatServer() as running:
        yield running


def _error(argv: list[str], server: LoopbackChatServer, capsys: pytest.CaptureFixture[str]) -> str:
    """Run the command on the loopback server; it must fail as a usage error before any model call."""
    roles = [arg for role in ROLES for arg in ("--role-model", f"{role}={role}")]
    code = cli.main([*argv, "--base-url", server.openai_base_url, *roles])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert len(server.requests) == 0  # nothing was asked of any model
    assert len(err.splitlines()) == 1, err
    return err.rstrip("\n")


@pytest.mark.parametrize("question", ["", "   ", "\n\t"])
def test_an_empty_question_says_how_to_ask_one(
    question: str, server: LoopbackChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _error([question], server, capsys) == (
        'deep-research: error: the question is empty; ask one in quotes: deep-research "your question".'
    )


def test_an_output_in_a_missing_folder_is_refused_before_the_run(
    tmp_path: Path, server: LoopbackChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "nonexistent" / "dir" / "report.md"

    line = _error(["How fast is solar growing?", "-o", str(target)], server, capsys)

    folder = target.parent
    assert line == (
        f"deep-research: error: -o {target}: the folder {folder} does not exist; create it first (mkdir -p {folder})."
    )
    assert not (tmp_path / "nonexistent").exists()


def test_an_output_that_is_a_folder_is_refused(
    tmp_path: Path, server: LoopbackChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    line = _error(["question", "-o", str(tmp_path)], server, capsys)

    assert line == (
        f"deep-research: error: -o {tmp_path} is a folder; give a file path, for example {tmp_path / 'report.md'}."
    )


def test_a_sources_file_in_a_missing_folder_is_refused(
    tmp_path: Path, server: LoopbackChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "missing" / "sources.json"

    line = _error(["question", "--sources", str(target)], server, capsys)

    assert line.startswith(f"deep-research: error: --sources {target}: the folder {target.parent} does not exist")


def test_the_same_file_for_report_and_sources_is_refused(
    tmp_path: Path, server: LoopbackChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "out.md"

    line = _error(["question", "-o", str(target), "--sources", str(target)], server, capsys)

    assert line == f"deep-research: error: -o and --sources both name {target}; give two files."


def test_a_run_dir_that_is_a_file_is_refused(
    tmp_path: Path, server: LoopbackChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "run"
    target.write_text("not a folder")

    line = _error(["question", "--run-dir", str(target)], server, capsys)

    assert line == f"deep-research: error: --run-dir {target} is a file; give a folder (it is created if missing)."


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="needs POSIX permissions, not root")
def test_an_output_folder_that_cannot_be_written_is_refused(
    tmp_path: Path, server: LoopbackChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        line = _error(["question", "-o", str(locked / "report.md")], server, capsys)
    finally:
        locked.chmod(0o700)

    assert (
        line
        == f"deep-research: error: -o {locked / 'report.md'}: the folder {locked} is not writable; choose another path."
    )


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["q", "--max-subtopics", "0"],
            "argument --max-subtopics: must be an integer from 1 to 50; got '0'",
        ),
        (
            ["q", "--token-budget", "lots"],
            "argument --token-budget: must be an integer from 1 to 1000000000; got 'lots'",
        ),
        (["q", "--time-budget", "-5"], "argument --time-budget: must be a number above 0 and at most 604800; got '-5'"),
        (["q", "--max-cost", "nan"], "argument --max-cost: must be a number above 0 and at most 1e+06; got 'nan'"),
        (["q", "--colour"], "unrecognized arguments: --colour"),
        ([], "the following arguments are required: question"),
    ],
)
def test_a_bad_option_is_one_line_naming_it(
    argv: list[str], line: str, server: LoopbackChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _error(argv, server, capsys) == f"deep-research: error: {line} (see deep-research --help)"


def test_an_unknown_progress_mode_lists_the_modes(
    server: LoopbackChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    line = _error(["q", "--progress", "fancy"], server, capsys)

    assert line.startswith("deep-research: error: argument --progress: invalid choice: 'fancy' (choose from ")
    assert all(mode in line for mode in ("auto", "rich", "plain", "none"))


def test_no_web_without_folders_says_what_to_add(
    server: LoopbackChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _error(["q", "--no-web"], server, capsys) == (
        "deep-research: error: --no-web leaves the researchers nothing to search; add --docs FOLDER."
    )


def test_a_usage_error_with_json_is_also_a_json_object_on_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(["q", "--json", "-o", str(tmp_path), "--base-url", "http://127.0.0.1:9/v1"])

    out, err = capsys.readouterr()
    assert code == 2
    answer = json.loads(out)
    assert answer["error"] == err.rstrip("\n")
    assert answer["question"] == "q"
    assert answer["report"] is None


def test_help_exits_zero_and_lists_every_group(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--help"]) == 0

    out = capsys.readouterr().out
    for group in ("output:", "research and budgets:", "models:", "sources:", "progress:"):
        assert group in out
    assert "130 interrupted" in out


def test_a_cost_budget_with_unpriced_models_is_refused_before_anything_runs(
    server: LoopbackChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    line = _error(["q", "--max-cost", "0.5"], server, capsys)

    assert line.startswith("deep-research: error: --max-cost needs the price of every model; none is known for ")
    assert line.endswith(
        ". Give it with --price orchestrator=INPUT,OUTPUT (US dollars per million tokens), or use --token-budget "
        "instead."
    )
    assert all(role in line for role in ROLES)


def test_a_question_over_the_limit_is_refused_before_the_run(
    server: LoopbackChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    line = _error(["solar " * 4_000], server, capsys)  # 24,000 characters

    assert line.startswith("deep-research: error: The question is 23,999 characters long; the limit is 20,000.")


@pytest.mark.parametrize("port", ["-5", "0", "70000", "http"])
def test_a_bad_mcp_port_is_one_line(port: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["mcp", "--transport", "http", "--port", port]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"deep-research mcp: error: argument --port: must be an integer from 1 to 65535; got {port!r} "
        "(see deep-research mcp --help)"
    ]


def test_a_bad_scan_option_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["scan", "items.txt"]) == ExitCode.USAGE
    assert capsys.readouterr().err.splitlines() == [
        "deep-research scan: error: the following arguments are required: --out (see deep-research scan --help)"
    ]


def test_version_prints_the_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out == f"deep-research {haystack_deep_research.__version__}\n"


@pytest.mark.parametrize(("command", "positional"), [("replay", "DIR"), ("update", "RUN_DIR")])
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_replay_and_update_have_help(
    command: str, positional: str, flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main([command, flag]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: deep-research {command} [-h] [-o FILE]")
    assert f"\n{' ' * len(f'usage: deep-research {command} ')}{positional}\n" in out  # the directory, after its options
    assert "iterative run" in out
