"""update RUN_DIR researches again, and ask RUN_DIR answers, with the run's own options (its options.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from haystack_deep_research import cli
from haystack_deep_research.report import NOT_ANSWERED
from haystack_deep_research.testing import LoopbackChatServer

QUESTION = "What do the notes say about tides?"


@pytest.fixture
def run_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A finished --docs --no-web iterative run made with the kit's model."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    notes = tmp_path / "notes"  # the run's --docs folder
    notes.mkdir()
    (notes / "tides.md").write_text("# Tides\n\nThe moon's pull raises two tides a day on most coasts.\n")
    where = tmp_path / "run"
    with LoopbackChatServer() as chat:
        monkeypatch.setenv("OPENAI_BASE_URL", chat.openai_base_url)  # resolved from the environment, and recorded
        argv = [QUESTION, "--model", "kit", "--docs", str(notes), "--no-web", "--mode", "iterative", "--depth", "1"]
        assert cli.main([*argv, "--run-dir", str(where), "-q"]) == 0
        yield where  # type: ignore[misc]


def test_update_reuses_the_runs_own_sources_and_models(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    recorded = json.loads((run_dir / "options.json").read_text(encoding="utf-8"))["options"]

    code = cli.main(["update", str(run_dir), "--depth", "2", "--json"])

    out, err = capsys.readouterr()
    result = json.loads(out)
    assert code == 0, err
    assert ["--no-web"] in recorded
    assert ["--model", "kit"] in recorded
    notice = next(line for line in err.splitlines() if "update reuses the run's options:" in line)
    assert "--model kit" in notice
    assert "--depth" not in notice  # given again: the given depth wins
    assert "## What changed since the last run" in result["report"]
    assert "](file://" in result["report"]  # the documents were searched again, not the web
    assert {entry["kind"] for entry in result["sources"]} == {"document"}
    assert not [w for w in result["warnings"] if "search" in w and "failed" in w]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ([["--output", "/tmp/elsewhere.md"]], "not an option a run records"),
        ([["--depth", "999"]], "holds an invalid option"),
        ({"options": "--no-web"}, "not a file of recorded options"),
    ],
)
def test_a_damaged_options_file_is_one_line_of_usage_error(
    run_dir: Path, options: object, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    body = options if isinstance(options, dict) else {"options": options}
    (run_dir / "options.json").write_text(json.dumps(body), encoding="utf-8")
    capsys.readouterr()

    assert cli.main(["update", str(run_dir)]) == 2

    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1


def _journal(run_dir: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (run_dir / "journal.jsonl").read_text(encoding="utf-8").splitlines()]


def test_ask_answers_from_the_runs_evidence_with_its_own_options(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    answer = tmp_path / "answer.md"

    code = cli.main(
        ["ask", str(run_dir), "How many tides does the moon raise each day?", "--mode", "iterative", "-o", str(answer)]
    )

    out, err = capsys.readouterr()
    assert code == 0, err
    assert out == ""
    text = answer.read_text(encoding="utf-8")
    assert "two tides a day" in text
    assert "](file://" in text
    assert "deep-research: ask reuses the run's options:" in err
    assert "--model kit" in err


def test_ask_says_plainly_when_the_evidence_does_not_answer(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = len(_journal(run_dir))
    capsys.readouterr()

    code = cli.main(["ask", str(run_dir), "Welche Farbe hat der Gezeitenstrom?", "--mode", "iterative", "--json"])

    result = json.loads(capsys.readouterr().out)
    assert code == 6
    assert (result["answered"], result["answer"]) == (False, NOT_ANSWERED)
    assert len(_journal(run_dir)) == records  # nothing was researched


def test_ask_with_research_adds_the_missing_piece_to_the_run(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes" / "rance.md").write_text(
        "# La Rance\n\nDas Gezeitenkraftwerk La Rance erzeugt jährlich etwa 500 Gigawattstunden Strom.\n",
        encoding="utf-8",
    )
    question = "Wie viel Strom erzeugt das Gezeitenkraftwerk La Rance?"
    capsys.readouterr()

    code = cli.main(["ask", str(run_dir), question, "--research", "--mode", "iterative", "--json"])

    out, err = capsys.readouterr()
    result = json.loads(out)
    assert code == 0, err
    assert result["answered"] is True
    assert result["researched"] == question
    assert "rance.md" in result["answer"]
    assert [r["subtopic"] for r in _journal(run_dir) if r["type"] == "note"][-1] == question
    assert cli.main(["update", str(run_dir), "-q", "--json"]) == 0  # still a finished run to update
    sources = json.loads(capsys.readouterr().out)["sources"]
    assert any(entry["url"].endswith("rance.md") and entry["kind"] == "document" for entry in sources)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["ask"], "ask needs the run directory and a question"),
        (["ask", "RUN"], "ask needs the run directory and a question"),
        (["ask", "EMPTY", "What did it find?"], "holds no journal of a run"),
    ],
)
def test_ask_without_a_run_or_a_question_is_one_line_of_usage_error(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "EMPTY").mkdir()
    given = [str(tmp_path / arg) if arg in ("RUN", "EMPTY") else arg for arg in argv]

    assert cli.main(given) == 2

    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1


def test_ask_has_its_own_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ask", "--help"]) == 0
    assert "--research" in capsys.readouterr().out
