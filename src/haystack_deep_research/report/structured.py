"""
Structured output: the final report turned into an instance of a pydantic model.

``create_deep_research_agent(output_schema=MyModel)`` gives the write hook a :class:`StructuredOutputStage`, which
runs last, after grounding. It makes one call to the writer model with the model's JSON schema, the final report and
its verified sources, and validates the reply with pydantic (a Markdown code fence around the JSON is tolerated).
When validation fails, it calls once more, showing the model its reply and the validation errors; when that fails
too, the run raises :class:`~haystack_deep_research.errors.StructuredOutputError`, which carries the last reply
(``raw_text``), its ``errors`` and the final ``report``. The validated instance is the run's ``structured`` output.

The JSON object grows with the report (a finding per line, a URL per source), so its call may take longer than a
client's timeout allows for a whole reply. When the model's ``run`` takes a ``streaming_callback`` and the model does
not stream already, the stage asks for the reply as a stream and drops the chunks: a client's read timeout (Haystack's
OpenAI generators: 30 s by default) then applies to the wait between two chunks, not to the whole reply. The reply is
the same message as without streaming; with Haystack's ``OpenAIChatGenerator`` the stream is asked to include the
token usage, so usage is still counted.

:class:`ResearchSummary` is a ready model to pass. A schema is serialized by its import path, so it must be a
module-level class, and loading it back needs its module on Haystack's deserialization allowlist (this package's
own models always are; for yours, call ``haystack.core.serialization_security.allow_deserialization_module``).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import threading
from typing import Any

from haystack.components.agents.state import State
from haystack.core.serialization import component_to_dict, default_from_dict, default_to_dict
from haystack.dataclasses import ChatMessage, StreamingChunk
from haystack.utils.deserialization import deserialize_component_inplace
from haystack.utils.type_serialization import deserialize_type, serialize_type
from pydantic import BaseModel, Field, ValidationError

from haystack_deep_research import _checks
from haystack_deep_research.errors import ConfigurationError, StructuredOutputError
from haystack_deep_research.events import PhaseEnded, PhaseStarted
from haystack_deep_research.prompts import STRUCTURED, STRUCTURED_RETRY, fence, render_chat
from haystack_deep_research.report.attempts import TIMEOUT_ADVICE, is_timeout
from haystack_deep_research.run import Outcome, Phase, ResearchRun, UsesModels, ask, publish
from haystack_deep_research.run.phases import model_name
from haystack_deep_research.state import CITATIONS, PHASE_STRUCTURE, REPORT
from haystack_deep_research.state import STRUCTURED as STRUCTURED_OUTPUT

__all__ = ["ResearchSummary", "StructuredOutputStage", "parse_structured"]

_FENCED = re.compile(r"^```[A-Za-z]*\s*(.*?)\s*```$", re.DOTALL)
_IMPORT_LOCK = threading.Lock()


class ResearchSummary(BaseModel):
    """A ready ``output_schema``: the report's summary, key findings, sources and the writer's confidence."""

    summary: str = Field(description="The answer to the research question in a few sentences.")
    key_findings: list[str] = Field(description="The most important findings, one sentence each.")
    sources: list[str] = Field(description="URLs of the sources the findings rest on, exactly as in the report.")
    confidence: float = Field(ge=0.0, le=1.0, description="How well the sources support the summary, 0 to 1.")


def parse_structured(schema: type[BaseModel], text: str) -> tuple[BaseModel | None, list[dict[str, Any]]]:
    """
    Validate a reply against a schema.

    :param schema: The pydantic model.
    :param text: The reply; a Markdown code fence around the JSON is removed first.
    :returns: ``(instance, [])`` when it validates, else ``(None, errors)`` with pydantic's errors as JSON-ready dicts.
    """
    body = text.strip()
    fenced = _FENCED.match(body)
    try:
        return schema.model_validate_json(fenced.group(1) if fenced else body), []
    except ValidationError as error:
        return None, json.loads(error.json(include_url=False))


def _drop(chunk: StreamingChunk) -> None:
    """A streaming callback that keeps nothing: the generator still assembles the whole reply."""


async def _drop_async(chunk: StreamingChunk) -> None:
    """The async form of :func:`_drop`."""


class _Streamed:
    """A chat generator called with a streaming callback that drops the chunks (see the module docstring)."""

    def __init__(self, generator: Any) -> None:
        self.generator = generator
        self.model = model_name(generator)

    def _options(self, callback: Any) -> dict[str, Any]:
        options: dict[str, Any] = {"streaming_callback": callback}
        with _IMPORT_LOCK:  # Haystack's lazily imported packages are not safe to import from two threads at once
            from haystack.components.generators.chat.openai import OpenAIChatGenerator

        if isinstance(self.generator, OpenAIChatGenerator):  # its stream carries usage only when asked to
            options["generation_kwargs"] = {"stream_options": {"include_usage": True}}
        return options

    def run(self, messages: list[ChatMessage]) -> dict[str, Any]:
        return dict(self.generator.run(messages=messages, **self._options(_drop)))

    async def run_async(self, messages: list[ChatMessage]) -> dict[str, Any]:
        if hasattr(self.generator, "run_async"):
            return dict(await self.generator.run_async(messages=messages, **self._options(_drop_async)))
        return await asyncio.to_thread(self.run, messages)


def _streamed(generator: Any) -> Any:
    """The generator as the stage calls it: streamed when it can stream and does not already."""
    if getattr(generator, "streaming_callback", None) is not None:
        return generator
    try:
        takes_callback = "streaming_callback" in inspect.signature(generator.run).parameters
    except (TypeError, ValueError):
        takes_callback = False
    return _Streamed(generator) if takes_callback else generator


class StructuredOutputStage(UsesModels):
    """
    A write-hook stage that turns the final report into an instance of ``output_schema`` (see the module docstring).

    :param output_schema: A pydantic ``BaseModel`` subclass.
    :param chat_generator: The model that writes the JSON. Default (``None``): the writer's.
    :raises ConfigurationError: If ``output_schema`` is not a pydantic model class.
    """

    max_concurrency = 1

    def __init__(self, *, output_schema: type[BaseModel], chat_generator: Any | None = None) -> None:
        if not (isinstance(output_schema, type) and issubclass(output_schema, BaseModel)):
            raise ConfigurationError(
                "output_schema must be a pydantic BaseModel subclass, for example ResearchSummary; "
                f"got {output_schema!r}."
            )
        if chat_generator is not None:
            _checks.chat_generator("chat_generator", chat_generator, needs_tools=False)
        self.output_schema = output_schema
        self.chat_generator = chat_generator

    def _used_models(self) -> list[Any]:
        return [self.chat_generator] if self.chat_generator is not None else []

    def review(self, state: State, run: ResearchRun, writer: Any) -> Phase[None]:
        """
        Ask for the JSON, validate it, retry once with the errors; set ``structured`` or raise.

        :param state: The orchestrator's live State, holding the final report.
        :param run: The run.
        :param writer: The writer's chat generator, used when this stage has none of its own.
        :returns: The phase to drive.
        :raises StructuredOutputError: If the second reply does not validate either.
        """
        model = _streamed(self.chat_generator or writer)
        report = state.data.get(REPORT) or ""
        titles = {entry.url: entry.title for entry in run.ledger.entries()}
        urls = (state.data.get(CITATIONS) or {}).get("verified_urls") or []
        variables = {
            "schema": json.dumps(self.output_schema.model_json_schema(), ensure_ascii=False),
            "report": fence(report),
            "sources": [fence(f"{titles[url]} — {url}" if titles.get(url) else url) for url in urls],
        }
        detail = f"writing the structured output ({self.output_schema.__name__})"
        run.events.emit(PhaseStarted(phase=PHASE_STRUCTURE, detail=detail))
        [outcome] = yield [ask(model, render_chat(STRUCTURED, **variables), role="structure")]
        instance, errors = self._read(run, outcome)
        if instance is None:
            run.events.emit(
                PhaseStarted(phase=PHASE_STRUCTURE, detail="the structured output did not validate; asking once more")
            )
            retry = render_chat(
                STRUCTURED_RETRY,
                **variables,
                previous=fence(outcome.text),
                errors=json.dumps(errors, ensure_ascii=False, indent=1),
            )
            [outcome] = yield [ask(model, retry, role="structure")]
            instance, errors = self._read(run, outcome)
        publish(state, run)
        if instance is None:
            raise StructuredOutputError(
                f"the writer's JSON for {self.output_schema.__name__} did not validate after one retry "
                f"({len(errors)} error(s)); see raw_text and errors",
                raw_text=outcome.text,
                errors=errors,
                report=report,
            )
        state.set(STRUCTURED_OUTPUT, instance)
        run.events.emit(PhaseEnded(phase=PHASE_STRUCTURE, detail="structured output ready"))

    def _read(self, run: ResearchRun, outcome: Outcome) -> tuple[BaseModel | None, list[dict[str, Any]]]:
        if outcome.reply is not None:
            run.record_usage(PHASE_STRUCTURE, outcome.reply.meta.get("usage"))
        if outcome.error is not None:
            why = f"{type(outcome.error).__name__}: {outcome.error}"
            if is_timeout(outcome.error):
                run.warn(PHASE_STRUCTURE, f"the structured-output call failed ({why}); {TIMEOUT_ADVICE}")
            return None, [{"type": "call_failed", "msg": f"the model call failed ({why})"}]
        return parse_structured(self.output_schema, outcome.text)

    def to_dict(self) -> dict[str, Any]:
        """
        :returns: The serialized stage; the schema is stored by its import path.
        :raises ConfigurationError: If the schema is defined inside a function and cannot be imported by path.
        """
        if "<locals>" in self.output_schema.__qualname__:
            raise ConfigurationError(
                f"output_schema {self.output_schema.__qualname__} is defined inside a function; define it at module "
                "level so the agent can be serialized."
            )
        generator = None if self.chat_generator is None else component_to_dict(obj=self.chat_generator, name="chat")
        return default_to_dict(self, output_schema=serialize_type(self.output_schema), chat_generator=generator)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StructuredOutputStage:
        """
        :param data: What ``to_dict`` returned.
        :returns: The stage, with the schema imported from its path (subject to Haystack's allowlist).
        """
        params = data["init_parameters"]
        params["output_schema"] = deserialize_type(params["output_schema"])
        if params.get("chat_generator") is not None:
            deserialize_component_inplace(params, key="chat_generator")
        return default_from_dict(cls, data)
