"""
The "Improvements" section: figures measured before a round of work on the library, next to this run's.

The "before" figures live in ``benchmarks/baseline.json`` (what was measured, with which code, and what changed
since), written by ``benchmarks/run.py --save-baseline`` from a run of the earlier code, so every regeneration of the
page compares the same baseline with what it has just measured.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.harness.dollars import run_cost
from benchmarks.harness.metrics import RunMetrics

Figures = Mapping[str, float]


@dataclass(frozen=True)
class Row:
    """One line of the section's table: a figure of one scenario."""

    scenario: str
    figure: str
    label: str
    digits: int = 0
    versus_peer: bool = False
    target: str = ""


ROWS = (
    Row("real-three", "facts", "corpus facts stated in the report", 0, True, "≥ peer"),
    Row("real-three", "cost_usd", "cost at the default models (US$)", 4, True, "≤ 0.5x peer"),
    Row("real-three", "wall_s", "wall time (s)", 2, True, "≤ 0.6x peer"),
    Row("real-three", "input_tokens", "input tokens", 0, True),
    Row("three", "input_tokens", "input tokens", 0, True, "no worse than before"),
    Row("three", "summarizer_input_tokens", "summarizer input tokens"),
    Row("three", "facts", "corpus facts stated in the report", 0, True, "no worse than before"),
    Row("three", "writer_input_tokens", "writer input tokens"),
    Row("three", "cost_usd", "cost at the default models (US$)", 4, True, "no worse than before"),
    Row("three", "wall_s", "wall time (s)", 2, True, "no worse than before"),
    Row("three", "overhead_ms_per_step", "overhead per agent step at latency 0, warm (ms)", 2, True, "≤ peer, < 5"),
    Row("three-prefill", "wall_s", "wall time (s)", 2, True),
    Row("three-prefill", "input_tokens", "input tokens", 0, True),
    Row("scale-20", "wall_s", "wall time (s)", 2, True),
    Row("scale-20", "input_tokens", "input tokens", 0, True),
    Row("scale-20", "writer_s", "writer phase of the critical path (s)", 2, True),
    Row("scale-50", "wall_s", "wall time (s)", 2, True),
    Row("scale-50", "input_tokens", "input tokens", 0, True),
    Row("scale-50", "peak_rss_mb", "peak RSS (MiB)", 0, True, "≤ peer"),
    Row("timeout-20", "wall_s", "wall time (s)", 2, True),
    Row("timeout-20", "writer_failed", "writer failed (1 = yes)", 0),
    Row("timeout-20", "abandoned_calls", "LLM requests abandoned on a timeout", 0),
    Row("timeout-20", "abandoned_tokens", "tokens of abandoned requests", 0),
    Row("timeout-20", "input_tokens", "input tokens (answered calls)", 0, True),
    Row("timeout-20", "output_tokens", "output tokens (answered calls)", 0, True),
)


def figures(run: RunMetrics | None, overhead: RunMetrics | None = None) -> dict[str, float]:
    """
    The figures the section compares, of one library on one scenario.

    :param run: The scenario run, or ``None`` when it did not run.
    :param overhead: The same scenario at latency 0, or ``None``.
    :returns: Figure name → value (only those measured).
    """
    found: dict[str, float] = {}
    if run is not None:
        summarizer, writer = run.roles.get("summarizer"), run.roles.get("writer")
        found.update(
            {
                "wall_s": run.wall_s,
                "bound_s": run.bound_s,
                "writer_s": run.bound_parts.get("writer", math.nan),
                "input_tokens": float(run.input_tokens),
                "output_tokens": float(run.output_tokens),
                "summarizer_input_tokens": float(summarizer.input_tokens) if summarizer is not None else 0.0,
                "writer_input_tokens": float(writer.input_tokens) if writer is not None else 0.0,
                "cost_usd": run_cost(run),
                "llm_calls": float(run.llm_calls),
                "facts": float(run.facts),
                "peak_rss_mb": run.peak_rss_mb,
                "abandoned_calls": float(run.abandoned),
                "abandoned_tokens": float(run.abandoned_tokens),
                "writer_failed": float(run.exit_reason == "writer_failed"),
            }
        )
    if overhead is not None:
        found["overhead_ms_per_step"] = overhead.overhead_ms_per_step
        found["cpu_ms_per_step"] = overhead.cpu_ms_per_step
    return found


@dataclass(frozen=True)
class Baseline:
    """
    Figures of one earlier measurement, per scenario and library (``"ours"``, ``"peer"``).

    :param description: What the baseline was measured on, one sentence.
    :param figures: ``{scenario: {library: {figure: value}}}`` with the names :func:`figures` gives.
    :param changes: What changed in the library since, one line each.
    :param notes: What measurements showed about the cost that is left, one line each.
    """

    description: str
    figures: Mapping[str, Mapping[str, Figures]]
    changes: Sequence[str] = field(default_factory=tuple)
    notes: Sequence[str] = field(default_factory=tuple)

    @classmethod
    def load(cls, path: Path) -> Baseline | None:
        """Read a baseline file; ``None`` when there is none."""
        if not path.exists():
            return None
        data: dict[str, Any] = json.loads(path.read_text())
        return cls(
            description=str(data["description"]),
            figures={
                scenario: {lib: {k: float(v) for k, v in values.items()} for lib, values in libraries.items()}
                for scenario, libraries in data["figures"].items()
            },
            changes=tuple(data.get("changes", ())),
            notes=tuple(data.get("notes", ())),
        )

    def save(self, path: Path) -> None:
        """Write the baseline file."""
        data = {
            "description": self.description,
            "figures": {s: {lib: dict(v) for lib, v in libs.items()} for s, libs in self.figures.items()},
            "changes": list(self.changes),
            "notes": list(self.notes),
        }
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _cell(values: Figures, row: Row, against: Figures | None) -> str:
    value = values.get(row.figure, math.nan)
    if math.isnan(value):
        return "—"
    text = f"{value:,.{row.digits}f}"
    peer = against.get(row.figure, math.nan) if against is not None else math.nan
    return text + ("" if math.isnan(peer) or not peer else f" ({value / peer:.2f}x peer)")


def render(baseline: Baseline, now: Mapping[str, Mapping[str, Figures]], missed: Sequence[str] = ()) -> list[str]:
    """
    The section's Markdown lines.

    :param baseline: The before figures.
    :param now: This run's figures, ``{scenario: {library: figures}}``.
    :param missed: Why targets are still missed, one line each (from this run's verdicts).
    :returns: Lines, starting with the section heading.
    """
    out = ["## Improvements", "", f"Before: {baseline.description} After: this page's run.", ""]
    out += [
        "| scenario | figure | before | after | agent-pack-haystack (this run) | target |",
        "|---|---|---|---|---|---|",
    ]
    for row in ROWS:
        before = baseline.figures.get(row.scenario, {})
        after = now.get(row.scenario, {})
        if not before and not after:
            continue
        peer = after.get("peer", {})
        then = _cell(before.get("ours", {}), row, before.get("peer") if row.versus_peer else None)
        if row.versus_peer and not before.get("peer"):
            then = _cell(before.get("ours", {}), row, peer if row.versus_peer else None)
        cells = [then, _cell(after.get("ours", {}), row, peer if row.versus_peer else None), _cell(peer, row, None)]
        out.append(f"| {row.scenario} | {row.label} | {' | '.join(cells)} | {row.target} |")
    if baseline.changes:
        out += ["", "What changed:", ""]
        out += [f"- {line}" for line in baseline.changes]
    if missed or baseline.notes:
        out += ["", "Still missed, and why:", ""]
        out += [f"- {line}" for line in missed]
        out += [f"- {line}" for line in baseline.notes]
    return out
