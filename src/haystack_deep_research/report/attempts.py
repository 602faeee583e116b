"""
The report layer's model calls: a batch of calls side by side, each tried at most twice, with what went wrong said
in the run's warnings.

The library retries a failed call once, never more: the chat generator's own client already retries timeouts,
connection errors, 429 and 5xx answers (the ``openai`` client in Haystack's generators does so ``max_retries``
times, 5 by default, each waiting up to ``timeout``, 30 s by default). A failure is a timeout when the error, or an
error it was raised from, is a :class:`TimeoutError`, an ``httpx.TimeoutException`` or an ``openai.APITimeoutError``
(recognised by type; the two packages are looked at only when they are already imported, because an error of theirs
cannot exist otherwise). The warning for a timeout says how to make the client give up sooner. A reply that stopped
at the model's output limit (``finish_reason`` "length") is kept, with a warning: asking again would stop there
again.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

from haystack.components.generators.chat.types import ChatGenerator
from haystack.dataclasses import ChatMessage

from haystack_deep_research.run import ResearchRun
from haystack_deep_research.run._phases import Call, Outcome, Phase, ask, failure
from haystack_deep_research.state import PHASE_WRITE

__all__ = ["Attempt", "Request", "ask_twice", "is_timeout"]

_CHAIN_DEPTH = 5
TIMEOUT_ADVICE = (
    "it timed out after the chat generator's client had retried it; pass a longer `timeout` or a smaller "
    "`max_retries` to the generator (for example `OpenAIChatGenerator(timeout=120, max_retries=1)`) to wait longer "
    "per try or give up sooner"
)


def _timeout_types() -> tuple[type[BaseException], ...]:
    kinds: list[type[BaseException]] = [TimeoutError]
    if "httpx" in sys.modules:
        import httpx

        kinds.append(httpx.TimeoutException)
    if "openai" in sys.modules:
        import openai

        kinds.append(openai.APITimeoutError)
    return tuple(kinds)


def is_timeout(error: BaseException | None) -> bool:
    """
    Tell whether a model call failed on a timeout.

    :param error: The error the call raised, or ``None``.
    :returns: ``True`` when it, or an error it was raised from, is a timeout by type (see the module docstring).
    """
    kinds = _timeout_types()
    for _ in range(_CHAIN_DEPTH):
        if error is None:
            return False
        if isinstance(error, kinds):
            return True
        error = error.__cause__ or error.__context__
    return False


def _why(outcome: Outcome) -> str:
    why = failure(outcome.error)
    return f"{why}; {TIMEOUT_ADVICE}" if is_timeout(outcome.error) else why


@dataclass(frozen=True)
class Request:
    """
    One call of a batch.

    :param what: What the call writes, for warnings ("the section on 'solar'").
    :param messages: The prompt.
    """

    what: str
    messages: list[ChatMessage]


@dataclass(frozen=True)
class Attempt:
    """
    What a request gave after at most two tries.

    :param text: The reply's text, or ``""`` when both tries failed.
    :param why: Why the last try failed (with advice for a timeout), or ``""``.
    """

    text: str
    why: str = ""


def _usable(run: ResearchRun, request: Request, outcome: Outcome, phase: str) -> bool:
    reply = outcome.reply
    if reply is not None:
        run.record_usage(phase, reply.meta.get("usage"))
    if not outcome.text:
        return False
    if reply is not None and reply.meta.get("finish_reason") == "length":
        run.warn(phase, f"the writer's reply for {request.what} hit the model's output limit and may be cut off")
    return True


def _ask(generator: ChatGenerator, request: Request, run: ResearchRun, role: str) -> Call:
    streaming = run.streaming_callback
    return ask(
        generator, request.messages, role=role, streaming_callback=streaming, agent=request.what, budget=run.budget
    )


def ask_twice(
    generator: ChatGenerator,
    requests: Sequence[Request],
    run: ResearchRun,
    *,
    role: str = "writer",
    phase: str = PHASE_WRITE,
) -> Phase[list[Attempt]]:
    """
    Make every request side by side; make the failed ones once more, side by side. The phase returns one
    :class:`Attempt` per request, in order; usage and warnings go to ``run`` under ``phase``, ``role`` tags the calls.
    """
    outcomes = yield [_ask(generator, request, run, role) for request in requests]
    attempts: list[Attempt] = []
    failed: list[tuple[int, str]] = []
    for index, (request, outcome) in enumerate(zip(requests, outcomes, strict=True)):
        if _usable(run, request, outcome, phase):
            attempts.append(Attempt(outcome.text))
        else:
            attempts.append(Attempt("", _why(outcome)))
            failed.append((index, attempts[-1].why))
    if not failed:
        return attempts
    again = yield [_ask(generator, requests[index], run, role) for index, _ in failed]
    for (index, first), outcome in zip(failed, again, strict=True):
        what = requests[index].what
        if _usable(run, requests[index], outcome, phase):
            attempts[index] = Attempt(outcome.text)
            run.warn(phase, f"the writer's call for {what} failed ({first}); it succeeded when tried once more")
        else:
            attempts[index] = Attempt("", _why(outcome))
    return attempts
