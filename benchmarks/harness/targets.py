"""The targets the report checks, each with a verdict and, when missed, the reason the data shows."""

from __future__ import annotations

import math
from dataclasses import dataclass

from benchmarks.harness.metrics import RunMetrics

WALL_OVER_BOUND = 1.10
WALL_OVER_PEER = 0.8
TOKENS_OVER_PEER = 0.6
OVERHEAD_MS = 5.0
PHASES = ("scope", "orchestrator", "research", "writer")


@dataclass(frozen=True)
class Verdict:
    """One target on one scenario."""

    target: str
    scenario: str
    value: str
    met: bool
    reason: str = ""


def _role_gap(ours: RunMetrics, peer: RunMetrics) -> str:
    def peer_input(role: str) -> int:
        usage = peer.roles.get(role)
        return usage.input_tokens if usage is not None else 0

    role = max(ours.roles, key=lambda r: ours.roles[r].input_tokens - peer_input(r))
    mine, theirs = ours.roles[role].input_tokens, peer_input(role)
    allowed = TOKENS_OVER_PEER * peer.input_tokens
    return (
        f"{TOKENS_OVER_PEER}x the peer is {allowed:,.0f} tokens, {ours.input_tokens - allowed:,.0f} below this run's; "
        f"the largest difference by role: {role} input {mine:,} vs {theirs:,} tokens ({mine - theirs:+,})"
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


def check(ours: RunMetrics, peer: RunMetrics | None) -> list[Verdict]:
    """
    Check the per-scenario targets for one scenario.

    :param ours: This library's figures.
    :param peer: The peer's figures on the same scenario, or ``None`` if the peer did not run.
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
    if peer is None or not peer.ok:
        return verdicts
    wall = ours.wall_s / peer.wall_s if peer.wall_s else float("nan")
    reason = ""
    if not wall <= WALL_OVER_PEER:
        reason = (
            f"{WALL_OVER_PEER}x the peer is {WALL_OVER_PEER * peer.wall_s:.2f} s; own critical path "
            f"{describe_path(ours)} vs the peer's {describe_path(peer)}: the simulator gives both libraries the same "
            "model turns up to the writer"
        )
    verdicts.append(Verdict(f"wall ≤ {WALL_OVER_PEER}x peer", name, f"{wall:.2f}x", wall <= WALL_OVER_PEER, reason))
    tokens = ours.input_tokens / peer.input_tokens if peer.input_tokens else float("nan")
    facts_ok = ours.facts >= peer.facts
    precision_ok = ours.precision == 1.0 or (math.isnan(ours.precision) and math.isnan(peer.precision))
    met = tokens <= TOKENS_OVER_PEER and facts_ok and precision_ok
    parts = []
    if not tokens <= TOKENS_OVER_PEER:
        parts.append(_role_gap(ours, peer))
    if not facts_ok:
        parts.append(f"the report states {ours.facts} corpus facts, the peer's {peer.facts}")
    if not precision_ok:
        parts.append(f"citation precision {ours.precision:.2f} < 1.00")
    value = f"{tokens:.2f}x (facts {ours.facts} vs {peer.facts}, precision {ours.precision:.2f})"
    verdicts.append(
        Verdict(
            f"input tokens ≤ {TOKENS_OVER_PEER}x peer, facts ≥ peer's, precision 1.00",
            name,
            value,
            met,
            "; ".join(parts),
        )
    )
    return verdicts


def check_overhead(ours: RunMetrics, peer: RunMetrics | None = None) -> list[Verdict]:
    """The overhead targets, on runs at zero model latency: under 5 ms per step, and no more than the peer's."""
    value = ours.overhead_ms_per_step
    reason = "" if value < OVERHEAD_MS else f"CPU time per step is {ours.cpu_ms_per_step:.1f} ms"
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
            "" if met else f"CPU per step {ours.cpu_ms_per_step:.2f} ms vs the peer's {peer.cpu_ms_per_step:.2f} ms"
        )
        verdicts.append(
            Verdict("overhead per agent step ≤ peer's", ours.scenario, f"{value:.2f} vs {theirs:.2f} ms", met, reason)
        )
    return verdicts


def check_memory(ours: RunMetrics, peer: RunMetrics | None) -> list[Verdict]:
    """Peak RSS no more than the peer's on the same scenario."""
    if peer is None or not peer.ok:
        return []
    met = ours.peak_rss_mb <= peer.peak_rss_mb
    value = f"{ours.peak_rss_mb:.0f} vs {peer.peak_rss_mb:.0f} MiB"
    return [Verdict("peak RSS ≤ peer's", ours.scenario, value, met, "" if met else "see the scale table")]
