"""
The targets the report checks, each with a verdict and, when missed, the reason the data shows.

- every scenario: wall time at most 1.10x the run's own critical path;
- the headline scenario (``real-three``: real-size pages, prompt reading modelled), side by side with the peer:
  corpus facts in the report at least the peer's (citation precision 1.00), cost at the default models at most 0.5x
  the peer's, wall time at most 0.6x the peer's;
- the short suite (``three``): no figure worse than the reference of the previous round
  (:data:`SHORT_REFERENCE`): wall, input tokens and cost against the peer's, facts and precision;
- the scale scenarios (20 and 50 sub-topics, 10 at once, 30 s client timeout): every report written by the writer
  with no fallback part, peak RSS at most the peer's, and from one scale point to the next, wall time growing by at
  most 1.0 s and input tokens by at most 4,500 per added sub-topic;
- at model latency 0: overhead per agent step under 5 ms and at most the peer's.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass

from benchmarks.harness.dollars import run_cost
from benchmarks.harness.metrics import RunMetrics

WALL_OVER_BOUND = 1.10
WALL_OVER_PEER = 0.6
COST_OVER_PEER = 0.5
WALL_PER_SUBTOPIC_S = 1.0
TOKENS_PER_SUBTOPIC = 4_500
OVERHEAD_MS = 5.0
PHASES = ("scope", "orchestrator", "research", "writer")
SHORT_REFERENCE: dict[str, dict[str, float]] = {
    "three": {"wall": 0.64, "tokens": 0.55, "cost": 0.69, "facts": 12, "precision": 1.0},
}
"""The short suite's figures of the previous round (docs/benchmarks.md then): wall, input tokens and cost as ratios
to the peer's in the same run, facts and citation precision as measured."""


@dataclass(frozen=True)
class Verdict:
    """One target on one scenario."""

    target: str
    scenario: str
    value: str
    met: bool
    reason: str = ""


def _cost_gap(ours: RunMetrics, peer: RunMetrics) -> str:
    from benchmarks.harness.dollars import role_cost

    def cost_of(m: RunMetrics, role: str) -> float:
        usage = m.roles.get(role)
        return role_cost(role, usage) if usage is not None else 0.0

    role = max(ours.roles, key=lambda r: cost_of(ours, r) - cost_of(peer, r))
    allowed = COST_OVER_PEER * run_cost(peer)
    return (
        f"{COST_OVER_PEER}x the peer is ${allowed:.4f}, ${run_cost(ours) - allowed:.4f} below this run's; the largest "
        f"difference by role: {role} ${cost_of(ours, role):.4f} vs ${cost_of(peer, role):.4f}"
    )


def _bound_reason(m: RunMetrics, peer: RunMetrics | None) -> str:
    throttled = sum(r.throttled for r in m.roles.values())
    if throttled:
        return (
            f"{throttled} LLM requests were answered 429 and retried after a wait; the bound counts only answered calls"
        )
    outside = m.wall_s - m.bound_s
    reason = (
        f"{outside:.2f} s of the run is outside the LLM calls on the critical path (tools, page fetches, scheduling)"
    )
    if peer is not None and peer.ok:
        reason += (
            f"; the peer's run has {peer.wall_s - peer.bound_s:.2f} s outside its critical path of "
            f"{peer.bound_s:.2f} s (this run's: {m.bound_s:.2f} s)"
        )
    return reason


def describe_path(m: RunMetrics) -> str:
    """The critical path by phase, in words."""
    parts = ", ".join(f"{p} {m.bound_parts.get(p, 0.0):.2f}" for p in PHASES)
    return f"{m.bound_s:.2f} s ({parts})"


def _ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def check(ours: RunMetrics, peer: RunMetrics | None, *, headline: bool = False) -> list[Verdict]:
    """
    Check the per-scenario targets for one scenario.

    :param ours: This library's figures.
    :param peer: The peer's figures on the same scenario, or ``None`` if the peer did not run.
    :param headline: Whether this is the headline scenario, where facts, cost and wall are compared with the peer's.
    :returns: The verdicts.
    """
    name = ours.scenario
    ratio = ours.ratio
    verdicts = [
        Verdict(
            f"wall ≤ {WALL_OVER_BOUND:.2f}x own critical path",
            name,
            f"{ratio:.2f}x",
            ratio <= WALL_OVER_BOUND,
            "" if ratio <= WALL_OVER_BOUND else _bound_reason(ours, peer),
        )
    ]
    if not headline or peer is None or not peer.ok:
        return verdicts
    facts_ok = ours.facts >= peer.facts
    precision_ok = ours.precision == 1.0 or (math.isnan(ours.precision) and math.isnan(peer.precision))
    reason = "; ".join(
        [
            *([] if facts_ok else [f"the report states {ours.facts} corpus facts, the peer's {peer.facts}"]),
            *([] if precision_ok else [f"citation precision {ours.precision:.2f} < 1.00"]),
        ]
    )
    verdicts.append(
        Verdict(
            "facts ≥ peer's, precision 1.00",
            name,
            f"{ours.facts} vs {peer.facts}, precision {ours.precision:.2f}",
            facts_ok and precision_ok,
            reason,
        )
    )
    cost = _ratio(run_cost(ours), run_cost(peer))
    verdicts.append(
        Verdict(
            f"cost ≤ {COST_OVER_PEER}x peer",
            name,
            f"{cost:.2f}x (${run_cost(ours):.4f} vs ${run_cost(peer):.4f})",
            cost <= COST_OVER_PEER,
            "" if cost <= COST_OVER_PEER else _cost_gap(ours, peer),
        )
    )
    wall = _ratio(ours.wall_s, peer.wall_s)
    reason = ""
    if not wall <= WALL_OVER_PEER:
        reason = (
            f"{WALL_OVER_PEER}x the peer is {WALL_OVER_PEER * peer.wall_s:.2f} s; own critical path "
            f"{describe_path(ours)} vs the peer's {describe_path(peer)}: the simulator gives both libraries the same "
            "model turns up to the writer"
        )
    verdicts.append(Verdict(f"wall ≤ {WALL_OVER_PEER}x peer", name, f"{wall:.2f}x", wall <= WALL_OVER_PEER, reason))
    return verdicts


def check_reference(ours: RunMetrics, peer: RunMetrics | None) -> list[Verdict]:
    """
    The short suite: no figure worse than :data:`SHORT_REFERENCE` (ratios to the peer's figures in the same run).

    :param ours: This library's figures on a scenario of the short suite.
    :param peer: The peer's on the same scenario.
    :returns: One verdict, or none when there is no reference or no peer run.
    """
    reference = SHORT_REFERENCE.get(ours.scenario)
    if reference is None or peer is None or not peer.ok:
        return []
    now = {
        "wall": _ratio(ours.wall_s, peer.wall_s),
        "tokens": _ratio(ours.input_tokens, peer.input_tokens),
        "cost": _ratio(run_cost(ours), run_cost(peer)),
    }
    worse = [f"{k} {now[k]:.2f}x vs {reference[k]:.2f}x" for k in now if not now[k] <= reference[k]]
    if ours.facts < reference["facts"]:
        worse.append(f"facts {ours.facts} vs {reference['facts']:.0f}")
    if not ours.precision >= reference["precision"]:
        worse.append(f"precision {ours.precision:.2f}")
    value = (
        f"wall {now['wall']:.2f}x (was {reference['wall']:.2f}x), tokens {now['tokens']:.2f}x (was "
        f"{reference['tokens']:.2f}x), cost {now['cost']:.2f}x (was {reference['cost']:.2f}x), facts {ours.facts} "
        f"(was {reference['facts']:.0f}), precision {ours.precision:.2f}"
    )
    return [Verdict("no figure worse than before (vs peer)", ours.scenario, value, not worse, "; ".join(worse))]


def check_scale(runs: Mapping[tuple[str, str], RunMetrics], series: tuple[str, ...]) -> list[Verdict]:
    """
    The scale targets: on every point of ``series`` after the first, a report written by the writer with no
    fallback part and peak RSS at most the peer's; between consecutive points, wall and input tokens per added
    sub-topic.

    :param runs: Every run's figures, by ``(scenario, library)``.
    :param series: The scale scenarios, smallest first (the first is the point growth is measured from).
    :returns: The verdicts.
    """
    from benchmarks.harness.scenarios import SCENARIOS

    verdicts: list[Verdict] = []
    points = [name for name in series if (name, "ours") in runs]
    for name in points[1:]:
        ours, peer = runs[name, "ours"], runs.get((name, "peer"))
        written = ours.ok and ours.fallback_parts == 0 and ours.exit_reason != "writer_failed"
        verdicts.append(
            Verdict(
                "report by the writer, no fallback part",
                name,
                f"{ours.fallback_parts} fallback parts, exit {ours.exit_reason or '—'}",
                written,
                "" if written else (ours.error.splitlines()[0][:120] if ours.error else "see the scenario's section"),
            )
        )
        if peer is not None and peer.peak_rss_mb > 0:
            met = ours.peak_rss_mb <= peer.peak_rss_mb
            value = f"{ours.peak_rss_mb:.0f} vs {peer.peak_rss_mb:.0f} MiB"
            if not peer.ok:
                value += " (the peer's run failed; its peak up to then)"
            verdicts.append(Verdict("peak RSS ≤ peer's", name, value, met, "" if met else "see the scale table"))
    for before, after in itertools.pairwise(points):
        a, b = runs[before, "ours"], runs[after, "ours"]
        added = SCENARIOS[after].subtopics - SCENARIOS[before].subtopics
        wall, tokens = (b.wall_s - a.wall_s) / added, (b.input_tokens - a.input_tokens) / added
        span = f"{before} → {after}"
        verdicts.append(
            Verdict(
                f"wall growth ≤ {WALL_PER_SUBTOPIC_S} s per added sub-topic",
                span,
                f"{wall:.2f} s ({a.wall_s:.2f} → {b.wall_s:.2f} s over {added})",
                wall <= WALL_PER_SUBTOPIC_S,
                "" if wall <= WALL_PER_SUBTOPIC_S else f"critical path {describe_path(a)} → {describe_path(b)}",
            )
        )
        verdicts.append(
            Verdict(
                f"input tokens growth ≤ {TOKENS_PER_SUBTOPIC:,} per added sub-topic",
                span,
                f"{tokens:,.0f} ({a.input_tokens:,} → {b.input_tokens:,} over {added})",
                tokens <= TOKENS_PER_SUBTOPIC,
                "" if tokens <= TOKENS_PER_SUBTOPIC else _growth_by_role(a, b, added),
            )
        )
    return verdicts


def _growth_by_role(a: RunMetrics, b: RunMetrics, added: int) -> str:
    def grown(role: str) -> float:
        before, after = a.roles.get(role), b.roles.get(role)
        return ((after.input_tokens if after else 0) - (before.input_tokens if before else 0)) / added

    return "per added sub-topic: " + ", ".join(f"{role} {grown(role):,.0f}" for role in sorted(b.roles, key=grown))


def _outside(run: RunMetrics) -> str:
    """The run's whole time outside the servers, with the steps it is divided by."""
    return f"{1000 * max(0.0, run.wall_s - run.external_s):.0f} ms outside the servers over {run.llm_calls} steps"


def check_overhead(ours: RunMetrics, peer: RunMetrics | None = None) -> list[Verdict]:
    """The overhead targets, on runs at zero model latency: under 5 ms per step, and no more than the peer's."""
    value = ours.overhead_ms_per_step
    reason = "" if value < OVERHEAD_MS else f"CPU time per step is {ours.cpu_ms_per_step:.1f} ms; {_outside(ours)}"
    verdicts = [
        Verdict(
            f"overhead per agent step < {OVERHEAD_MS:.0f} ms",
            ours.scenario,
            f"{value:.2f} ms",
            value < OVERHEAD_MS,
            reason,
        )
    ]
    if peer is not None and peer.ok:
        theirs = peer.overhead_ms_per_step
        met = value <= theirs
        reason = (
            ""
            if met
            else f"CPU per step {ours.cpu_ms_per_step:.2f} ms vs the peer's {peer.cpu_ms_per_step:.2f} ms; "
            f"{_outside(ours)}, the peer's {_outside(peer)}"
        )
        verdicts.append(
            Verdict("overhead per agent step ≤ peer's", ours.scenario, f"{value:.2f} vs {theirs:.2f} ms", met, reason)
        )
    return verdicts
