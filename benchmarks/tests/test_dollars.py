"""A run's cost at the default models, priced with the library's own table."""

from __future__ import annotations

import pytest

from benchmarks.harness.dollars import ROLE_MODELS, role_cost, run_cost
from benchmarks.harness.metrics import RoleUsage, RunMetrics


def test_each_role_is_priced_at_its_default_model_and_the_run_costs_their_sum() -> None:
    roles = {
        "scope": RoleUsage(calls=1, input_tokens=1_000_000, output_tokens=0),
        "summarizer": RoleUsage(calls=6, input_tokens=1_000_000, output_tokens=1_000_000),
        "writer": RoleUsage(calls=4, input_tokens=0, output_tokens=1_000_000),
    }
    metrics = RunMetrics(scenario="three", library="ours", ok=True, error="", wall_s=1.0, bound_s=1.0, roles=roles)

    assert ROLE_MODELS["writer"] == "gpt-5.4"
    assert ROLE_MODELS["researcher"] == "gpt-5.4-mini"
    assert role_cost("scope", roles["scope"]) == pytest.approx(2.50)
    assert role_cost("summarizer", roles["summarizer"]) == pytest.approx(0.75 + 4.50)
    assert run_cost(metrics) == pytest.approx(2.50 + 5.25 + 15.00)
