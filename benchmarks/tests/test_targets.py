"""The targets the page checks: the headline scenario against the peer, the short suite against before, scale."""

from __future__ import annotations

from benchmarks.harness import targets
from benchmarks.harness.metrics import RoleUsage, RunMetrics


def _run(scenario: str, library: str, wall: float, writer_in: int, **more: object) -> RunMetrics:
    roles = {
        "researcher": RoleUsage(9, 8_000, 1_000),
        "writer": RoleUsage(4, writer_in, 600),
    }
    ok = bool(more.pop("ok", True))
    values = {"bound_s": wall / 1.05, "facts": 12, "cited": 6, "cited_retrieved": 6, "peak_rss_mb": 130.0, **more}
    return RunMetrics(scenario, library, ok, "", wall, roles=roles, **values)  # type: ignore[arg-type]


def test_the_headline_scenario_checks_facts_cost_and_wall_against_the_peer() -> None:
    ours, peer = _run("real-three", "ours", 12.0, 2_000), _run("real-three", "peer", 21.0, 30_000)

    verdicts = {v.target: v for v in targets.check(ours, peer, headline=True)}

    assert set(verdicts) == {
        "wall ≤ 1.10x own critical path",
        "facts ≥ peer's, precision 1.00",
        "cost ≤ 0.5x peer",
        "wall ≤ 0.6x peer",
    }
    assert all(v.met for v in verdicts.values())
    slow = {v.target: v for v in targets.check(_run("real-three", "ours", 13.5, 2_000), peer, headline=True)}
    assert not slow["wall ≤ 0.6x peer"].met
    assert "critical path" in slow["wall ≤ 0.6x peer"].reason
    dear = {v.target: v for v in targets.check(_run("real-three", "ours", 12.0, 20_000), peer, headline=True)}
    assert not dear["cost ≤ 0.5x peer"].met
    assert "the largest difference by role" in dear["cost ≤ 0.5x peer"].reason
    assert [v.target for v in targets.check(ours, peer)] == ["wall ≤ 1.10x own critical path"]


def test_the_short_suite_must_be_no_worse_than_before() -> None:
    peer = _run("three", "peer", 21.0, 12_000)

    [kept] = targets.check_reference(_run("three", "ours", 13.0, 2_000), peer)
    [fewer] = targets.check_reference(_run("three", "ours", 13.0, 2_000, facts=11), peer)

    assert kept.met
    assert not fewer.met
    assert "facts 11 vs 12" in fewer.reason


def test_scale_checks_the_writer_memory_and_growth_per_added_subtopic() -> None:
    runs = {
        ("three-prefill", "ours"): _run("three-prefill", "ours", 15.0, 2_000),
        ("scale-20", "ours"): _run("scale-20", "ours", 31.0, 100_000),
        ("scale-20", "peer"): _run("scale-20", "peer", 200.0, 10_000, peak_rss_mb=150.0, ok=False),
        ("scale-50", "ours"): _run("scale-50", "ours", 60.0, 150_000, fallback_parts=1),
    }

    verdicts = {(v.target, v.scenario): v for v in targets.check_scale(runs, ("three-prefill", "scale-20", "scale-50"))}

    assert verdicts["report by the writer, no fallback part", "scale-20"].met
    assert not verdicts["report by the writer, no fallback part", "scale-50"].met
    memory = verdicts["peak RSS ≤ peer's", "scale-20"]
    assert memory.met
    assert "the peer's run failed" in memory.value
    assert verdicts["wall growth ≤ 1.0 s per added sub-topic", "three-prefill → scale-20"].met  # 16 s over 17
    assert verdicts["wall growth ≤ 1.0 s per added sub-topic", "scale-20 → scale-50"].met  # 29 s over 30
    tokens = verdicts["input tokens growth ≤ 4,500 per added sub-topic", "three-prefill → scale-20"]
    assert not tokens.met  # 98,000 more over 17
    assert "writer" in tokens.reason
