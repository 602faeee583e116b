"""Questions to a finished run: answered from its evidence, cited and verified as its report is, or declined."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from haystack.dataclasses import ChatMessage

from haystack_deep_research import RunInputs
from haystack_deep_research.testing import LoopbackWebServer


def _finished_run(make_agent: Callable[..., Any], run_dir: Path) -> tuple[Any, dict[str, Any]]:
    agent = make_agent()
    result = agent.run(messages=[ChatMessage.from_user("How fast is solar growing?")], inputs=RunInputs(run_dir=run_dir))
    return agent, result


def test_smoke(make_agent: Callable[..., Any], web: LoopbackWebServer, tmp_path: Path) -> None:
    agent, result = _finished_run(make_agent, tmp_path / "run")
    answer = agent.ask(tmp_path / "run", "How much did grid battery storage grow?")
    print(answer)
    assert answer["answered"]
