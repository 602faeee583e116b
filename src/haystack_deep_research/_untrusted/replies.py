"""
Reading a JSON object out of a model's reply: the whole reply, a fenced block, or an object embedded in prose.

Shared by every phase that asks a model for a small JSON reply (the iterative agent's search decision, the scope
model's clarify-or-brief decision).
"""

from __future__ import annotations

import re
from typing import Any

import haystack_deep_research._untrusted.json_text as _safe_json

__all__ = ["extract_json_object"]

_FENCED = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


def extract_json_object(text: str) -> Any:
    """
    Find a JSON value in a model's reply.

    :returns: The whole reply parsed as JSON; else the content of the first fenced block that parses; else the first
        JSON object embedded in the text (prose before or after it is ignored).
    :raises ValueError: If the reply holds no JSON object (JSON nested too deeply is none).
    """
    body = text.strip()
    candidates = [body, *(match.group(1).strip() for match in _FENCED.finditer(body))]
    for candidate in candidates:
        try:
            return _safe_json.loads(candidate)
        except ValueError:
            continue
    for start in (index for index, character in enumerate(body) if character == "{"):
        try:
            value, _ = _safe_json.raw_decode(body, start)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    raise ValueError("the reply holds no JSON object")
