"""
The "Improvements" section: figures measured before a round of work on the library, next to this run's.

The "before" figures live in ``benchmarks/baseline.json`` (what was measured, with which code, and what changed
since), so every regeneration of the page compares the same baseline with what it has just measured. What is still
missed is explained from this run's figures.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.harness.metrics import RunMetrics
from benchmarks.harness.targets import OVERHEAD_MS, TOKENS_OVER_PEER, WALL_OVER_PEER

FIGURES = ("overhead_ms_per_step", "cpu_ms_per_step", "input_tokens", "summarizer_input_tokens", "wall_s", "bound_s")


@dataclass(frozen=True)
class Baseline:
    """
    Figures of one earlier measurement, per library (``"ours"``, ``"peer"``).

    :param description: What the baseline was measured on, one sentence.
    :param scenario: The scenario whose tokens and wall time were recorded (the overhead run uses it too).
    :param figures: ``{library: {figure: value}}`` with the names in :data:`FIGURES`.
    :param changes: What changed in the library since, one line each.
    :param notes: What profiling showed about the cost that is left, one line each.
    """

    description: str
    scenario: str
    figures: Mapping[str, Mapping[str, float]]
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
            scenario=str(data["scenario"]),
            figures={lib: {k: float(v) for k, v in values.items()} for lib, values in data["figures"].items()},
            changes=tuple(data.get("changes", ())),
            notes=tuple(data.get("notes", ())),
        )


def current_figures(run: RunMetrics | None, overhead: RunMetrics | None) -> dict[str, float]:
    """The :data:`FIGURES` of this page's run of one library (NaN where it did not run)."""
    nan = float("nan")
    summarizer = run.roles.get("summarizer") if run is not None else None
    return {
        "overhead_ms_per_step": overhead.overhead_ms_per_step if overhead is not None else nan,
        "cpu_ms_per_step": overhead.cpu_ms_per_step if overhead is not None else nan,
        "input_tokens": float(run.input_tokens) if run is not None else nan,
        "summarizer_input_tokens": float(summarizer.input_tokens) if summarizer is not None else nan,
        "wall_s": run.wall_s if run is not None else nan,
        "bound_s": run.bound_s if run is not None else nan,
    }


def _ratio(value: float, peer: float) -> str:
    return "" if math.isnan(peer) or not peer else f" ({value / peer:.2f}x peer)"


def render(
    baseline: Baseline, ours: Mapping[str, float], peer: Mapping[str, float], floor: Mapping[str, float]
) -> list[str]:
    """
    The section's Markdown lines.

    :param baseline: The before figures.
    :param ours: This run's figures of this library (see :func:`current_figures`).
    :param peer: This run's figures of the peer.
    :param floor: The bare generator call's cost (``wall_ms_per_call``), or an empty mapping.
    :returns: Lines, starting with the section heading.
    """
    before, before_peer = baseline.figures.get("ours", {}), baseline.figures.get("peer", {})
    nan = float("nan")

    def cell(values: Mapping[str, float], name: str, digits: int, against: Mapping[str, float] | None = None) -> str:
        value = values.get(name, nan)
        if math.isnan(value):
            return "—"
        text = f"{value:,.{digits}f}"
        return text + (_ratio(value, against.get(name, nan)) if against is not None else "")

    name = baseline.scenario
    rows = [
        ("overhead per agent step at latency 0, warm (ms)", "overhead_ms_per_step", 2, False, f"< {OVERHEAD_MS:g}"),
        ("CPU per agent step at latency 0, warm (ms)", "cpu_ms_per_step", 2, False, ""),
        (f"input tokens, `{name}`", "input_tokens", 0, True, f"≤ {TOKENS_OVER_PEER}x peer"),
        (f"summarizer input tokens, `{name}`", "summarizer_input_tokens", 0, False, ""),
        (f"wall time, `{name}` (s)", "wall_s", 2, True, f"≤ {WALL_OVER_PEER}x peer"),
    ]
    out = ["## Improvements", "", f"Before: {baseline.description} After: this page's run.", ""]
    out += ["| figure | before | after | agent-pack-haystack (this run) | target |", "|---|---|---|---|---|"]
    for label, key, digits, versus_peer, target in rows:
        then = cell(before, key, digits, before_peer if versus_peer else None)
        now = cell(ours, key, digits, peer if versus_peer else None)
        out.append(f"| {label} | {then} | {now} | {cell(peer, key, digits)} | {target} |")
    if baseline.changes:
        out += ["", "What changed:", ""]
        out += [f"- {line}" for line in baseline.changes]
    missed = _still_missed(ours, peer, floor)
    if missed or baseline.notes:
        out += ["", "Still missed, and why:", ""]
        out += [f"- {line}" for line in missed]
        out += [f"- {line}" for line in baseline.notes]
    return out


def _still_missed(ours: Mapping[str, float], peer: Mapping[str, float], floor: Mapping[str, float]) -> list[str]:
    lines = []
    overhead = ours["overhead_ms_per_step"]
    if overhead >= OVERHEAD_MS and "wall_ms_per_call" in floor:
        lines.append(
            f"Overhead per step: {overhead:.2f} ms, of which {floor['wall_ms_per_call']:.1f} ms is the cost of one "
            "bare chat-generator call through the `openai` client on this machine (the floor above), which every "
            "step pays in either library."
        )
    tokens, peer_tokens = ours["input_tokens"], peer.get("input_tokens", float("nan"))
    if not math.isnan(peer_tokens) and tokens > TOKENS_OVER_PEER * peer_tokens:
        pages, allowed = ours["summarizer_input_tokens"], TOKENS_OVER_PEER * peer_tokens
        lines.append(
            f"Input tokens: the summarizer's inputs alone are {pages:,.0f} tokens ({pages / peer_tokens:.0%} of the "
            "peer's whole run), almost all of it page text that both libraries send in full (up to "
            f"`max_content_length`, 50,000 characters by default). {TOKENS_OVER_PEER}x the peer is "
            f"{allowed:,.0f} tokens, which would leave {allowed - pages:,.0f} for every other call; they take "
            f"{tokens - pages:,.0f} now."
        )
    wall, bound, peer_wall = ours["wall_s"], ours["bound_s"], peer.get("wall_s", float("nan"))
    if not math.isnan(peer_wall) and wall > WALL_OVER_PEER * peer_wall:
        lines.append(
            f"Wall time: {wall:.2f} s is {wall / bound:.2f}x this library's own critical path of model turns "
            f"({bound:.2f} s); {WALL_OVER_PEER}x the peer would be {WALL_OVER_PEER * peer_wall:.2f} s, "
            f"{bound - WALL_OVER_PEER * peer_wall:.2f} s below that path. Both libraries wait on the same model "
            "turns, so only fewer or shorter model calls could reach it."
        )
    return lines
