"""Recording and replaying runs over --docs folders: the recording keeps its sources, replay refuses what it cannot
reproduce."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from haystack_deep_research import cli
from haystack_deep_research.testing import LoopbackChatServer, kit_commands, serve_kit

QUESTION = "What do the notes say about tides?"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "tides.md").write_text("# Tides\n\nThe moon's pull raises two tides a day on most coasts.\n")
    (notes / "storage.txt").write_text("Tidal barrages store water at high tide and release it later.\n")
    return notes


@pytest.fixture
def recording(folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """A --docs --no-web iterative run recorded with the kit's model; its directory and its report."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # where replay keeps the rebuilt index
    tape, report = tmp_path / "tape", tmp_path / "recorded.md"
    with LoopbackChatServer() as chat:
        argv = [QUESTION, "--base-url", chat.openai_base_url, "--model", "kit", "--docs", str(folder), "--no-web"]
        argv += ["--mode", "iterative", "--depth", "2", "--record", str(tape), "-o", str(report), "-q"]
        assert cli.main(argv) == 0
    return tape, report.read_text(encoding="utf-8")


def test_a_docs_run_replays_to_the_same_report(recording: tuple[Path, str], tmp_path: Path) -> None:
    tape, recorded = recording
    replayed = tmp_path / "replayed.md"

    assert cli.main(["replay", str(tape), "-o", str(replayed), "-q"]) == 0

    assert "](file://" in recorded  # the report cites the documents
    assert replayed.read_text(encoding="utf-8") == recorded
    manifest = json.loads((tape / "recording.json").read_text(encoding="utf-8"))
    assert manifest["web"] is False
    assert [Path(entry["path"]).name for entry in manifest["docs"]] == ["notes"]


def test_replay_refuses_a_changed_folder(
    recording: tuple[Path, str], folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tape, _ = recording
    (folder / "tides.md").write_text("# Tides\n\nSomething else entirely.\n")
    capsys.readouterr()

    assert cli.main(["replay", str(tape), "-q"]) == 2

    out, err = capsys.readouterr()
    assert err.count("\n") == 1
    assert "whose files have changed since" in err
    assert out == ""


def test_replay_refuses_a_missing_folder(
    recording: tuple[Path, str], folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tape, _ = recording
    for file in folder.iterdir():
        file.unlink()
    folder.rmdir()
    capsys.readouterr()

    assert cli.main(["replay", str(tape), "-q"]) == 2
    assert "which is missing; restore it to replay" in capsys.readouterr().err


def test_replay_refuses_a_search_it_cannot_rebuild(
    recording: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    tape, _ = recording
    manifest = json.loads((tape / "recording.json").read_text(encoding="utf-8"))
    (tape / "recording.json").write_text(json.dumps({**manifest, "web": True, "search": "custom"}))
    capsys.readouterr()

    assert cli.main(["replay", str(tape), "-q"]) == 2
    assert "names the search 'custom', which replay cannot rebuild" in capsys.readouterr().err


def test_a_run_on_a_search_server_of_your_own_replays_with_the_servers_stopped(tmp_path: Path) -> None:
    tape, recorded, replayed = tmp_path / "tape", tmp_path / "recorded.md", tmp_path / "replayed.md"
    with serve_kit() as kit:
        argv = [*kit_commands(kit)["iterative"][1:], "--record", str(tape), "-o", str(recorded), "-q"]
        assert cli.main(argv) == 0
        search_url = kit.search.base_url

    assert cli.main(["replay", str(tape), "-o", str(replayed), "-q"]) == 0

    assert replayed.read_text(encoding="utf-8") == recorded.read_text(encoding="utf-8")
    assert "](http://127.0.0.1:" in recorded.read_text(encoding="utf-8")
    manifest = json.loads((tape / "recording.json").read_text(encoding="utf-8"))
    assert (manifest["search"], manifest["search_url"], manifest["allow_hosts"]) == (
        "tavily",
        search_url,
        ["127.0.0.1"],
    )


def test_a_run_kept_to_chosen_domains_replays_with_the_same_scope(tmp_path: Path) -> None:
    tape, recorded, replayed = tmp_path / "tape", tmp_path / "recorded.md", tmp_path / "replayed.md"
    scope = ["--exclude-domain", "ads.example", "--since", "2026-01-31"]
    with serve_kit() as kit:
        argv = [*kit_commands(kit)["iterative"][1:], *scope, "--record", str(tape), "-o", str(recorded), "-q"]
        assert cli.main(argv) == 0
        asked = [request.json_body for request in kit.search.requests]

    assert cli.main(["replay", str(tape), "-o", str(replayed), "-q"]) == 0  # every look-up found: same scope

    assert asked
    assert all(body["exclude_domains"] == ["ads.example"] for body in asked)
    assert all(body["start_date"] == "2026-01-31" for body in asked)
    manifest = json.loads((tape / "recording.json").read_text(encoding="utf-8"))
    assert (manifest["exclude_domains"], manifest["since"]) == (["ads.example"], "2026-01-31")
    assert replayed.read_text(encoding="utf-8") == recorded.read_text(encoding="utf-8")
