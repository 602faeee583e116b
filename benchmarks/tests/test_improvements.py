"""The Improvements section compares the saved baseline with this run and says why a target is still missed."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.harness import improvements

BEFORE = {
    "overhead_ms_per_step": 13.5,
    "cpu_ms_per_step": 21.6,
    "input_tokens": 28_533,
    "summarizer_input_tokens": 15_220,
    "wall_s": 20.75,
    "bound_s": 20.26,
}
PEER = {
    "overhead_ms_per_step": 5.8,
    "cpu_ms_per_step": 6.5,
    "input_tokens": 28_377,
    "summarizer_input_tokens": 14_770,
    "wall_s": 20.69,
    "bound_s": 20.25,
}


def _baseline(tmp_path: Path) -> improvements.Baseline:
    path = tmp_path / "baseline.json"
    path.write_text(
        json.dumps(
            {
                "description": "the code before the change.",
                "scenario": "three",
                "figures": {"ours": BEFORE, "peer": PEER},
                "changes": ["TLS contexts are reused."],
                "notes": ["Most of the rest is in the HTTP client."],
            }
        )
    )
    baseline = improvements.Baseline.load(path)
    assert baseline is not None
    return baseline


def test_the_section_shows_before_after_and_the_reasons_a_target_is_missed(tmp_path: Path) -> None:
    after = {**BEFORE, "overhead_ms_per_step": 5.36, "cpu_ms_per_step": 6.3, "input_tokens": 27_549}
    lines = improvements.render(_baseline(tmp_path), after, PEER, {"wall_ms_per_call": 3.7})
    page = "\n".join(lines)

    assert lines[0] == "## Improvements"
    assert "| overhead per agent step at latency 0, warm (ms) | 13.50 | 5.36 | 5.80 | < 5 |" in page
    assert "| input tokens, `three` | 28,533 (1.01x peer) | 27,549 (0.97x peer) | 28,377 | ≤ 0.7x peer |" in page
    assert "- TLS contexts are reused." in page
    assert "Overhead per step: 5.36 ms, of which 3.7 ms is the cost of one bare chat-generator call" in page
    assert "0.7x the peer is 19,864 tokens, which would leave 4,644 for every other call" in page
    assert "Wall time: 20.75 s is 1.02x this library's own critical path" in page
    assert "- Most of the rest is in the HTTP client." in page


def test_a_met_target_needs_no_reason_and_a_missing_baseline_file_gives_none(tmp_path: Path) -> None:
    after = {**BEFORE, "overhead_ms_per_step": 4.2}
    page = "\n".join(improvements.render(_baseline(tmp_path), after, PEER, {"wall_ms_per_call": 3.7}))

    assert "Overhead per step:" not in page
    assert improvements.Baseline.load(tmp_path / "absent.json") is None
