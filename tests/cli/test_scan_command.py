"""deep-research scan: items from a file or a provider, rows to JSONL (resumable) and CSV, progress on stderr."""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from haystack import Pipeline, component
from haystack.dataclasses import ChatMessage
from pydantic import BaseModel

from haystack_deep_research import Grounding, cli
from haystack_deep_research.options.exit_codes import ExitCode
from haystack_deep_research.scans import ItemRef, KnowledgeProvider, KnowledgeRow


class Brief(BaseModel):
    """A row model given with --schema."""

    summary: str
    sources: list[str]


class Topics(KnowledgeProvider):
    """A provider given as module:Class."""

    def list_items(self) -> list[ItemRef]:
        return [ItemRef(name="solar", provider="topics"), ItemRef(name="storage", provider="topics")]

    def describe_item(self, ref: ItemRef) -> str:
        return {"solar": "solar capacity installations", "storage": "grid battery storage"}[ref.name]

    def to_row(self, ref: ItemRef, result: Mapping[str, Any]) -> KnowledgeRow:
        return KnowledgeRow(id=ref.name, data={"score": result["grounding_score"], "sources": len(result["sources"])})


@pytest.fixture
def scripted_scan(monkeypatch: pytest.MonkeyPatch, make_workflow: Callable[..., Pipeline]) -> list[type[BaseModel]]:
    """The scan's workflow, scripted; remembers the schema each item was researched with."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-x")
    schemas: list[type[BaseModel]] = []

    def workflow(output_schema: type[BaseModel], **_: Any) -> Pipeline:
        schemas.append(output_schema)
        return make_workflow(output_schema=output_schema)

    monkeypatch.setattr("haystack_deep_research.cli.scan.scan_workflow", workflow)
    return schemas


def _items(tmp_path: Path, *items: str) -> str:
    path = tmp_path / "items.txt"
    path.write_text("\n".join(items) + "\n", encoding="utf-8")
    return str(path)


def test_a_scan_writes_one_row_per_line_and_a_csv(
    scripted_scan: list[type[BaseModel]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = _items(tmp_path, "solar capacity installations", "grid battery storage")
    out, table = tmp_path / "rows.jsonl", tmp_path / "rows.csv"

    assert cli.main(["scan", items, "--out", str(out), "--csv", str(table), "--progress", "lines"]) == 0

    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(row["id"] for row in rows) == ["grid battery storage", "solar capacity installations"]
    assert all(row["data"]["grounding_score"] == 1.0 and row["data"]["sources"] for row in rows)
    header = next(csv.reader(table.open(encoding="utf-8")))
    assert header[:5] == ["id", "summary", "key_findings", "sources", "confidence"]
    err = capsys.readouterr().err
    assert "[scan] scan started: 2 item(s), 0 already done" in err
    assert err.count("[scan] done ") == 2
    assert err.rstrip().endswith(f"[done] 2 row(s) in {out}")


def test_a_rerun_resumes_and_the_progress_bar_shows_the_count(
    scripted_scan: list[type[BaseModel]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "rows.jsonl"
    assert (
        cli.main(["scan", _items(tmp_path, "solar capacity installations"), "--out", str(out), "--progress", "none"])
        == 0
    )
    assert len(scripted_scan) == 1

    items = _items(tmp_path, "solar capacity installations", "grid battery storage")
    assert cli.main(["scan", items, "--out", str(out), "--progress", "bar"]) == 0

    assert len(scripted_scan) == 2  # only the new item was researched
    assert len(out.read_text().splitlines()) == 2
    err = capsys.readouterr().err
    assert "2/2" in err  # rich prints the bar's last frame once when stderr is not a terminal
    assert "0 failed" in err


def test_a_provider_class_and_a_schema_by_import_path(scripted_scan: list[type[BaseModel]], tmp_path: Path) -> None:
    module = __name__
    out = tmp_path / "rows.jsonl"
    argv = ["scan", f"{module}:Topics", "--out", str(out), "--schema", f"{module}:Brief", "--progress", "none"]
    assert cli.main(argv) == 0

    assert scripted_scan == [Brief, Brief]
    rows = {row["id"]: row["data"] for row in map(json.loads, out.read_text().splitlines())}
    assert rows["solar"] == {"score": 1.0, "sources": 1}  # the one page its search found, read
    assert set(rows) == {"solar", "storage"}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["missing-items.txt"], "cannot read the items file missing-items.txt"),
        (["json:NoSuchProvider"], "cannot import the provider json:NoSuchProvider"),
        (["json:JSONDecoder"], "json:JSONDecoder is not a KnowledgeProvider class"),
    ],
)
def test_usage_errors_are_one_line(
    scripted_scan: list[type[BaseModel]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    message: str,
) -> None:
    assert cli.main(["scan", *argv, "--out", str(tmp_path / "rows.jsonl")]) == 2
    assert message in capsys.readouterr().err


def test_a_bad_schema_and_missing_keys_are_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    items = _items(tmp_path, "solar")
    assert cli.main(["scan", items, "--out", str(tmp_path / "r.jsonl"), "--schema", "json:loads"]) == 2
    assert "json:loads is not a pydantic model class" in capsys.readouterr().err
    assert cli.main(["scan", items, "--out", str(tmp_path / "r.jsonl")]) == 2
    assert "set OPENAI_API_KEY in the environment" in capsys.readouterr().err


def test_ray_without_the_extra_names_it(
    scripted_scan: list[type[BaseModel]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    argv = ["scan", _items(tmp_path, "solar"), "--out", str(tmp_path / "r.jsonl"), "--ray", "local"]
    assert cli.main(argv) == 2
    assert "pip install haystack-deep-research[ray]" in capsys.readouterr().err


@component
class _DownModel:
    """A chat generator whose every call raises, as a provider outage does."""

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, list[ChatMessage]]:
        raise RuntimeError("503 Service Unavailable: the model is down")


def test_a_scan_whose_model_is_down_fails_and_a_rerun_tries_again(
    monkeypatch: pytest.MonkeyPatch,
    make_workflow: Callable[..., Pipeline],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-x")
    down = _DownModel()
    roles = ("chat_generator", "causal_llm", "summary_llm")
    researched: list[int] = []

    def workflow(output_schema: type[BaseModel], **_: Any) -> Pipeline:
        researched.append(1)
        return make_workflow(
            output_schema=output_schema, grounding=Grounding(judge_llm=down), **dict.fromkeys(roles, down)
        )

    monkeypatch.setattr("haystack_deep_research.cli.scan.scan_workflow", workflow)
    items = _items(tmp_path, "solar", "storage", "wind")
    out = tmp_path / "rows.jsonl"
    argv = ["scan", items, "--out", str(out), "--attempts", "1", "--progress", "lines"]

    assert cli.main(argv) == ExitCode.RESEARCH_FAILED  # every item failed
    err = capsys.readouterr().err
    assert err.rstrip().endswith(f"[done] 0 row(s) in {out}; 3 failed, see {tmp_path / 'rows.failures.jsonl'}")
    assert err.count("writer_failed") >= 3
    assert not out.exists() or out.read_text() == ""

    assert cli.main(argv) == ExitCode.RESEARCH_FAILED
    assert "[scan] scan started: 3 item(s), 0 already done" in capsys.readouterr().err
    assert len(researched) == 6  # every failed item was researched again
