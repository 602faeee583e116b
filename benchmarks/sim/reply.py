"""What a role policy answers: text, tool calls, or both, plus the usage the simulator bills for it."""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field

from benchmarks.sim.conversation import ToolCall
from benchmarks.sim.tokens import CHARS_PER_TOKEN, count_json, count_text


@dataclass(frozen=True)
class Reply:
    """A model turn before it is put on the wire."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    cut: bool = False
    """Whether the text stopped at the request's output cap (the wire says ``finish_reason: length``)."""

    def output_tokens(self) -> int:
        """Tokens the model generates for this turn."""
        return count_text(self.text) + sum(count_text(c.name) + count_json(c.arguments) for c in self.tool_calls)

    def capped(self, max_output_tokens: int | None) -> Reply:
        """
        This turn as a model bound by ``max_output_tokens`` gives it: a text reply longer than the cap stops there.

        :param max_output_tokens: The request's cap, or ``None``.
        :returns: The reply, its text cut to the cap where it was longer (tool calls are never cut).
        """
        if max_output_tokens is None or self.tool_calls or count_text(self.text) <= max_output_tokens:
            return self
        return Reply(text=self.text[: max_output_tokens * CHARS_PER_TOKEN], cut=True)


@dataclass(frozen=True)
class Usage:
    """Billed tokens of one call."""

    input_tokens: int
    output_tokens: int

    @property
    def total(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens


@dataclass
class IdFactory:
    """Zero-padded, increasing ids, so ids sort in the order they were made (clients sort tool calls by id)."""

    _counter: itertools.count = field(default_factory=lambda: itertools.count(1))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def next(self, prefix: str) -> str:
        """A fresh id such as ``call_000000042``."""
        with self._lock:
            return f"{prefix}_{next(self._counter):09d}"


def split_text(text: str, pieces: int) -> list[str]:
    """
    Cut text into at most ``pieces`` consecutive parts (the stream deltas); joining them gives the text back.

    :param text: The text to stream.
    :param pieces: The wanted number of parts, 1 or more.
    :returns: The parts, none empty (an empty text gives no parts).
    """
    if not text:
        return []
    size = max(1, -(-len(text) // max(1, pieces)))
    return [text[i : i + size] for i in range(0, len(text), size)]
