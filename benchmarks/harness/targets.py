"""The targets the report checks, each with a verdict and, when missed, the reason the data shows."""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.harness.metrics import RunMetrics

WALL_OVER_BOUND = 1.10
WALL_OVER_PEER = 0.8
TOKENS_OVER_PEER = 0.7
OVERHEAD_MS = 5.0


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
    return f"largest difference: {role} input {mine:,} vs {theirs:,} tokens ({mine - theirs:+,})"


def _bound_reason(m: RunMetrics) -> str:
    throttled = sum(r.throttled for r in m.roles.values())
    if throttled:
        return (
            f"{throttled} LLM requests were answered 429 and retried after a wait; the bound counts only answered calls"
        )
    outside = m.wall_s - m.bound_s
    return f"{outside:.2f} s of the run is outside the LLM calls on the critical path (tools, page fetches, scheduling)"


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
            "" if ratio <= WALL_OVER_BOUND else _bound_reason(ours),
        )
    ]
    if peer is None or not peer.ok:
        return verdicts
    wall = ours.wall_s / peer.wall_s if peer.wall_s else float("nan")
    reason = ""
    if not wall <= WALL_OVER_PEER:
        reason = (
            f"own critical path {ours.bound_s:.2f} s vs peer's {peer.bound_s:.2f} s: both runs wait on the same "
            "model turns, so the critical path sets a floor; ours adds "
            f"{ours.llm_calls - peer.llm_calls:+d} LLM calls"
        )
    verdicts.append(Verdict(f"wall ≤ {WALL_OVER_PEER}x peer", name, f"{wall:.2f}x", wall <= WALL_OVER_PEER, reason))
    tokens = ours.input_tokens / peer.input_tokens if peer.input_tokens else float("nan")
    precision_ok = not ours.precision < peer.precision
    met = tokens <= TOKENS_OVER_PEER and precision_ok
    reason = ""
    if not met:
        parts = []
        if not tokens <= TOKENS_OVER_PEER:
            parts.append(_role_gap(ours, peer))
        if not precision_ok:
            parts.append(f"citation precision {ours.precision:.2f} < peer's {peer.precision:.2f}")
        reason = "; ".join(parts)
    value = f"{tokens:.2f}x (precision {ours.precision:.2f} vs {peer.precision:.2f})"
    verdicts.append(Verdict(f"input tokens ≤ {TOKENS_OVER_PEER}x peer at ≥ precision", name, value, met, reason))
    return verdicts


def check_overhead(ours: RunMetrics) -> Verdict:
    """The overhead target, on a run at zero model latency."""
    value = ours.overhead_ms_per_step
    reason = "" if value < OVERHEAD_MS else f"CPU time per step is {ours.cpu_ms_per_step:.1f} ms"
    return Verdict(
        f"overhead per agent step < {OVERHEAD_MS:.0f} ms", ours.scenario, f"{value:.2f} ms", value < OVERHEAD_MS, reason
    )
