"""The page the generator writes: a third library gets its columns, and the real-size scenarios a facts-per-dollar
table that says whether haystack-deep-research is ahead of every other library."""

from __future__ import annotations

from benchmarks.harness import report
from benchmarks.harness.metrics import RoleUsage, RunMetrics
from benchmarks.harness.scenarios import SCENARIOS


def _run(library: str, *, facts: int, writer_tokens: int, cited: int = 4, retrieved: int = 4) -> RunMetrics:
    return RunMetrics(
        scenario="real-three",
        library=library,
        ok=True,
        error="",
        wall_s=20.0,
        bound_s=10.0,
        roles={"writer": RoleUsage(calls=1, input_tokens=writer_tokens, output_tokens=1_000)},
        cited=cited,
        cited_retrieved=retrieved,
        facts=facts,
    )


def _page(runs: dict[tuple[str, str], RunMetrics]) -> str:
    data = report.ReportInput(
        command="python benchmarks/run.py",
        environment={},
        settings={},
        scenarios=[SCENARIOS["real-three"]],
        runs=runs,
        overhead={},
        floor={},
        verdicts=[],
        timeline="timeline.png",
        timeline_scenario="real-three",
        notes=[],
    )
    return report.render(data)


def test_the_real_size_scenario_gets_facts_per_dollar_for_all_three_libraries() -> None:
    runs = {
        ("real-three", "ours"): _run("ours", facts=12, writer_tokens=2_000),
        ("real-three", "peer"): _run("peer", facts=10, writer_tokens=8_000),
        ("real-three", "gptr"): _run("gptr", facts=20, writer_tokens=20_000),
    }
    page = _page(runs)

    section = page.split("## Facts per dollar on real-size pages", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")][1:]
    assert [row.split(" | ")[0] for row in rows] == [
        "| haystack-deep-research",
        "| agent-pack-haystack",
        "| GPT Researcher",
    ]
    per_dollar = {lib: report.facts_per_dollar(m) for (_, lib), m in runs.items()}
    assert per_dollar["ours"] > per_dollar["gptr"] > 0
    assert f"| {per_dollar['gptr']:,.0f} | 1.00 (4/4) |" in rows[2]
    assert "Target met." in section
    assert "| scenario | haystack-deep-research | agent-pack-haystack | GPT Researcher |" in page


def test_the_target_is_missed_where_another_library_states_more_per_dollar_or_ours_cites_unread_pages() -> None:
    cheaper = {
        ("real-three", "ours"): _run("ours", facts=12, writer_tokens=2_000),
        ("real-three", "gptr"): _run("gptr", facts=40, writer_tokens=2_000),
    }
    unread = {
        ("real-three", "ours"): _run("ours", facts=12, writer_tokens=2_000, retrieved=3),
        ("real-three", "gptr"): _run("gptr", facts=1, writer_tokens=20_000),
    }

    assert "Target not met: GPT Researcher states" in _page(cheaper)
    assert "Target not met: haystack-deep-research's citation precision is 0.75" in _page(unread)
