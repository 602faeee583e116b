"""The chat generators both libraries get: the same class, timeout and retries, one simulated model per role."""

from __future__ import annotations

from typing import Any

from haystack.components.generators.chat import OpenAIChatGenerator, OpenAIResponsesChatGenerator
from haystack.utils import Secret

from benchmarks.harness.spec import RunSpec

ROLES = ("scope", "orchestrator", "researcher", "summarizer", "writer")


def generator(spec: RunSpec, role: str) -> Any:
    """
    A generator for one role, talking to the simulated LLM server through the real ``openai`` client.

    :param spec: The run spec (server URL, API flavour, timeout, retries; ``None`` keeps the generator's default).
    :param role: One of :data:`ROLES`; the model is ``sim-<role>``.
    :returns: An ``OpenAIResponsesChatGenerator`` (``api == "responses"``) or an ``OpenAIChatGenerator``.
    """
    cls = OpenAIResponsesChatGenerator if spec.api == "responses" else OpenAIChatGenerator
    return cls(
        api_key=Secret.from_token("sim"),
        model=f"sim-{role}",
        api_base_url=spec.llm_url,
        timeout=spec.llm_timeout_s,
        max_retries=spec.llm_max_retries,
    )


def generators(spec: RunSpec) -> dict[str, Any]:
    """One generator per role."""
    return {role: generator(spec, role) for role in ROLES}
