"""The Improvements section compares the saved baseline with this run and lists why targets are still missed."""

from __future__ import annotations

from pathlib import Path

from benchmarks.harness import improvements

BEFORE = {"input_tokens": 28_533.0, "wall_s": 20.75, "facts": 12.0, "overhead_ms_per_step": 5.36}
PEER = {"input_tokens": 28_377.0, "wall_s": 20.69, "facts": 12.0, "overhead_ms_per_step": 5.8}


def _baseline(tmp_path: Path) -> improvements.Baseline:
    path = tmp_path / "baseline.json"
    improvements.Baseline(
        "the code before the change.",
        {"three": {"ours": BEFORE, "peer": PEER}},
        changes=("Pages are cut to their relevant passages.",),
        notes=("The research turns are the same for both libraries.",),
    ).save(path)
    baseline = improvements.Baseline.load(path)
    assert baseline is not None
    return baseline


def test_the_section_shows_before_after_and_the_reasons_a_target_is_missed(tmp_path: Path) -> None:
    after = {**BEFORE, "input_tokens": 16_000.0, "wall_s": 17.2}
    missed = ["wall ≤ 0.8x peer on `three`: 0.83x. The research phase is the same for both."]
    lines = improvements.render(_baseline(tmp_path), {"three": {"ours": after, "peer": PEER}}, missed)
    page = "\n".join(lines)

    assert lines[0] == "## Improvements"
    same = "no worse than before"
    assert f"| three | input tokens | 28,533 (1.01x peer) | 16,000 (0.56x peer) | 28,377 | {same} |" in page
    assert f"| three | wall time (s) | 20.75 (1.00x peer) | 17.20 (0.83x peer) | 20.69 | {same} |" in page
    assert "- Pages are cut to their relevant passages." in page
    assert "- wall ≤ 0.8x peer on `three`: 0.83x. The research phase is the same for both." in page
    assert "- The research turns are the same for both libraries." in page
    assert "scale-50" not in page  # rows of scenarios measured neither before nor now are left out


def test_a_baseline_without_the_peer_is_compared_with_this_runs_peer(tmp_path: Path) -> None:
    baseline = improvements.Baseline("ours alone.", {"three": {"ours": BEFORE}})
    page = "\n".join(improvements.render(baseline, {"three": {"ours": BEFORE, "peer": PEER}}))

    assert "| three | input tokens | 28,533 (1.01x peer) | 28,533 (1.01x peer) | 28,377 |" in page
    assert "Still missed" not in page
    assert improvements.Baseline.load(tmp_path / "absent.json") is None
