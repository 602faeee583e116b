"""update RUN_DIR researches again with the run's own options (options.json in the run directory)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from haystack_deep_research import cli
from haystack_deep_research.testing import LoopbackChatServer

QUESTION = "What do the notes say about tides?"


@pytest.fixture
def run_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A finished --docs --no-web iterative run made with the kit's model."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    notes = tmp_path / "notes"
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
