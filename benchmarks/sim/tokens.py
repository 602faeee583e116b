"""The one token-counting rule the simulator applies to every request and reply, whichever library sent it."""

from __future__ import annotations

import json
import math
from typing import Any

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD_TOKENS = 4


def count_text(text: str) -> int:
    """
    Tokens in a piece of text: one per four characters, rounded up.

    :param text: Any text.
    :returns: The token count, 0 for empty text.
    """
    return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0


def count_json(value: Any) -> int:
    """
    Tokens in a JSON value (tool schemas, tool-call arguments), counted on its compact serialisation.

    :param value: A JSON-serialisable value.
    :returns: The token count.
    """
    return count_text(json.dumps(value, separators=(",", ":"), ensure_ascii=False))
