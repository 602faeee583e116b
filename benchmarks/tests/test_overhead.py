"""The overhead re-check: this checkout's run is measured and its section names what it measured."""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks import overhead


def test_one_run_is_measured_and_rendered_as_a_section(tmp_path: Path) -> None:
    figures = overhead.measure({"ours": (sys.executable, None)}, ("three",), 1, tmp_path)
    measured = figures["ours", "three"]

    assert measured.calls > 0
    assert measured.per_step_ms > 0
    assert measured.outside_ms >= measured.per_step_ms
    assert 0 < measured.tail_ms <= measured.outside_ms  # verifying and publishing take some time, outside the servers

    section = overhead.render(figures, {"ours": "haystack-deep-research"}, 1, {"wall_ms_per_call": 4.0, "calls": 50})
    assert section.startswith(overhead.START)
    assert section.endswith(overhead.END)
    assert f"| three | haystack-deep-research | {measured.per_step_ms:.2f} |" in section
    assert f"| {measured.calls} | {measured.tail_ms:.0f} |" in section
    assert "costs 4.0 ms of wall time" in section
