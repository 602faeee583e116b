"""
Structured output: the final report turned into an instance of a pydantic model, in the provider's strict mode where
it has one, validated with one retry, its URLs verified like the report's (docs/evidence.md, "Structured output",
gives the calls, the retry, the URL check and the error). The call streams (``ask(..., keep_alive=True)``) because
the JSON grows with the report: a client's read timeout then applies between two chunks, not to the whole reply.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from haystack.components.agents.state import State
from haystack.components.generators.chat.types import ChatGenerator
from haystack.core.serialization import component_to_dict, default_from_dict, default_to_dict
from haystack.utils.deserialization import deserialize_component_inplace
from haystack.utils.type_serialization import deserialize_type, serialize_type
from pydantic import BaseModel, Field, ValidationError

from haystack_deep_research import _checks
from haystack_deep_research._prompts import STRUCTURED, STRUCTURED_RETRY, fence, render_chat
from haystack_deep_research.errors import ConfigurationError, StructuredOutputError
from haystack_deep_research.events import PhaseEnded, PhaseStarted
from haystack_deep_research.evidence.citations import extract_citations
from haystack_deep_research.evidence.entry import normalize_url
from haystack_deep_research.evidence.verification import verify_citations
from haystack_deep_research.report.assessment import without_code_fence
from haystack_deep_research.run import ResearchRun
from haystack_deep_research.run._phases import TIMEOUT_ADVICE, Outcome, Phase, UsesModels, ask_counted, is_timeout
from haystack_deep_research.run._research_run import publish
from haystack_deep_research.state import CITATIONS, PHASE_STRUCTURE, REPORT
from haystack_deep_research.state import STRUCTURED as STRUCTURED_OUTPUT

__all__ = ["ResearchSummary", "StructuredOutputStage", "parse_structured", "strict_output_kwargs", "verify_structured"]


class ResearchSummary(BaseModel):
    """A ready ``output_schema``: the report's summary, key findings, sources and the writer's confidence."""

    summary: str = Field(description="The answer to the research question in a few sentences.")
    key_findings: list[str] = Field(description="The most important findings, one sentence each.")
    sources: list[str] = Field(description="URLs of the sources the findings rest on, exactly as in the report.")
    confidence: float = Field(ge=0.0, le=1.0, description="How well the sources support the summary, 0 to 1.")


def parse_structured(schema: type[BaseModel], text: str) -> tuple[BaseModel | None, list[dict[str, Any]]]:
    """Validate a reply (a code fence around it removed): ``(instance, [])``, or ``(None, pydantic's errors)``."""
    try:
        return schema.model_validate_json(without_code_fence(text)), []
    except ValidationError as error:
        return None, json.loads(error.json(include_url=False))


# Haystack's generators with a strict structured-output mode: module, class, and the generation_kwargs key for it.
_STRICT_MODES = (
    ("haystack.components.generators.chat.openai", "OpenAIChatGenerator", "response_format"),
    ("haystack.components.generators.chat.openai_responses", "OpenAIResponsesChatGenerator", "text"),
)


def strict_output_kwargs(generator: Any, schema: type[BaseModel]) -> dict[str, Any] | None:
    """
    The generation settings that make a generator's provider enforce ``schema``, or ``None`` without such a mode.

    Detection is by class (subclasses count), looked up only in modules already imported: a generator of such a class
    has imported its module. The schema is given as a strict JSON schema, not as the pydantic class, because the class
    form is accepted only by OpenAI's non-streaming ``parse`` endpoints and the stage streams.
    """
    for module_name, class_name, key in _STRICT_MODES:
        module = sys.modules.get(module_name)
        kind = getattr(module, class_name, None) if module is not None else None
        if isinstance(kind, type) and isinstance(generator, kind):
            # The same strict conversion Haystack's OpenAI generators apply to a pydantic response format, through
            # openai's public helper; a generator of these classes has imported the openai package already.
            from openai import pydantic_function_tool

            parameters = pydantic_function_tool(schema)["function"].get("parameters", {})
            strict = {"name": schema.__name__, "strict": True, "schema": parameters}
            if key == "response_format":
                return {key: {"type": "json_schema", "json_schema": strict}}
            own = (getattr(generator, "generation_kwargs", None) or {}).get(key) or {}
            return {key: {**own, "format": {"type": "json_schema", **strict}}}
    return None


_DROP = object()


def _repaired(text: str, read: set[str], path: str, removed: list[str]) -> Any:
    """``text`` without its links to URLs the run never read (the report's repair), or ``_DROP`` if nothing is left."""
    unverified = [c.url for c in extract_citations(text) if normalize_url(c.url) not in read]
    if not unverified:
        return text
    removed.extend(f"{path or 'the output'}: {url}" for url in dict.fromkeys(unverified))
    repaired = verify_citations(text, sorted(read)).report
    if "## Sources" not in text:  # the repair rebuilds a Sources list; a field never had one
        repaired = repaired.split("\n\n## Sources\n", 1)[0]
    return repaired.strip() or _DROP


def _clean(value: Any, read: set[str], path: str, removed: list[str]) -> Any:
    if isinstance(value, str):
        return _repaired(value, read, path, removed)
    if isinstance(value, list):
        kept = [_clean(item, read, f"{path}[{index}]", removed) for index, item in enumerate(value)]
        return [item for item in kept if item is not _DROP]
    if isinstance(value, dict):
        cleaned = {}
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and _repaired(key, read, where, removed) is not key:
                continue  # a key naming a URL the run never read goes with its value
            cleaned[key] = _clean(item, read, where, removed)
        return {key: (None if item is _DROP else item) for key, item in cleaned.items()}
    return value


def _without_none(value: Any, original: Any) -> Any:
    """Leave out the fields emptied to ``None`` that the schema does not allow to be ``None``: their defaults apply."""
    if isinstance(value, dict) and isinstance(original, dict):
        return {
            key: _without_none(item, original.get(key))
            for key, item in value.items()
            if not (item is None and original.get(key) is not None)
        }
    return value


def verify_structured(instance: BaseModel, run: ResearchRun, *, report: str = "") -> BaseModel:
    """
    Keep in ``instance`` only the URLs the run may cite; a warning names those dropped.

    :param report: The report the instance was written from (kept on the error).
    :raises StructuredOutputError: If the schema cannot hold the instance without them.
    """
    read = {normalize_url(url) for url in run.ledger.citable_urls()}
    data = instance.model_dump(mode="json")
    removed: list[str] = []
    cleaned = _clean(data, read, "", removed)
    if not removed:
        return instance
    schema = type(instance)
    try:
        verified = schema.model_validate(cleaned)
    except ValidationError:
        try:
            verified = schema.model_validate(_without_none(cleaned, data))
        except ValidationError as error:
            raise StructuredOutputError(
                f"the structured output ({schema.__name__}) holds URL(s) the run never read ({'; '.join(removed)}), "
                "and the schema cannot hold it without them",
                raw_text=instance.model_dump_json(),
                errors=[dict(e) for e in error.errors(include_url=False)],
                report=report,
            ) from error
    run.warn(
        PHASE_STRUCTURE,
        f"removed {len(removed)} URL(s) the run never read from the structured output: {'; '.join(removed)}",
    )
    return verified


class StructuredOutputStage(UsesModels):
    """
    A write-hook stage that turns the final report into an instance of ``output_schema`` (a pydantic model class, else
    ``ConfigurationError``), written by ``chat_generator`` (``None``: the writer).
    """

    max_concurrency = 1
    _model_attributes = ("chat_generator",)

    def __init__(self, *, output_schema: type[BaseModel], chat_generator: ChatGenerator | None = None) -> None:
        if not (isinstance(output_schema, type) and issubclass(output_schema, BaseModel)):
            raise ConfigurationError(
                "output_schema must be a pydantic BaseModel subclass, for example ResearchSummary; "
                f"got {output_schema!r}."
            )
        if chat_generator is not None:
            _checks.chat_generator("chat_generator", chat_generator, needs_tools=False)
        self.output_schema = output_schema
        self.chat_generator = chat_generator

    def review(self, state: State, run: ResearchRun, writer: ChatGenerator) -> Phase[None]:
        """Set ``structured``; ``StructuredOutputError`` if the second reply does not validate either."""
        urls = (state.data.get(CITATIONS) or {}).get("verified_urls") or []
        try:
            instance = yield from self.convert(run, state.data.get(REPORT) or "", urls, writer)
        finally:
            publish(state, run)
        state.set(STRUCTURED_OUTPUT, instance)

    def convert(self, run: ResearchRun, report: str, urls: list[str], writer: Any) -> Phase[BaseModel]:
        """
        Turn the verified ``report`` (citing ``urls``) into an instance of ``output_schema``: ask for the JSON, validate
        it, retry once with the errors; ``writer`` serves when this stage has no generator of its own.
        """
        model = self.chat_generator or writer
        titles = {entry.url: entry.title for entry in run.ledger.entries()}
        variables = {
            "schema": json.dumps(self.output_schema.model_json_schema(), ensure_ascii=False),
            "report": fence(report),
            "sources": [fence(f"{titles[url]} — {url}" if titles.get(url) else url) for url in urls],
        }
        detail = f"writing the structured output ({self.output_schema.__name__})"
        run.events.emit(PhaseStarted(phase=PHASE_STRUCTURE, detail=detail))
        options: dict[str, Any] = {"keep_alive": True}
        strict = strict_output_kwargs(model, self.output_schema)
        if strict is not None:
            options["generation_kwargs"] = strict
        prompt = render_chat(STRUCTURED, **variables)
        outcome = yield from ask_counted(run, PHASE_STRUCTURE, model, prompt, role="structure", **options)
        instance, errors = self._read(run, outcome)
        if instance is None and outcome.error is not None and strict is not None:
            options.pop("generation_kwargs")  # the provider refused strict mode: validate and retry instead
        if instance is None:
            run.events.emit(
                PhaseStarted(phase=PHASE_STRUCTURE, detail="the structured output did not validate; asking once more")
            )
            said = json.dumps(errors, ensure_ascii=False, indent=1)
            retry = render_chat(STRUCTURED_RETRY, **variables, previous=fence(outcome.text), errors=said)
            outcome = yield from ask_counted(run, PHASE_STRUCTURE, model, retry, role="structure", **options)
            instance, errors = self._read(run, outcome)
        if instance is None:
            raise StructuredOutputError(
                f"the writer's JSON for {self.output_schema.__name__} did not validate after one retry "
                f"({len(errors)} error(s)); see raw_text and errors",
                raw_text=outcome.text,
                errors=errors,
                report=report,
            )
        instance = verify_structured(instance, run, report=report)
        run.events.emit(PhaseEnded(phase=PHASE_STRUCTURE, detail="structured output ready"))
        return instance

    def _read(self, run: ResearchRun, outcome: Outcome) -> tuple[BaseModel | None, list[dict[str, Any]]]:
        if outcome.error is not None:
            why = f"{type(outcome.error).__name__}: {outcome.error}"
            if is_timeout(outcome.error):
                run.warn(PHASE_STRUCTURE, f"the structured-output call failed ({why}); {TIMEOUT_ADVICE}")
            return None, [{"type": "call_failed", "msg": f"the model call failed ({why})"}]
        return parse_structured(self.output_schema, outcome.text)

    def to_dict(self) -> dict[str, Any]:
        """The serialized stage, the schema by its import path (``ConfigurationError`` for a local class)."""
        if "<locals>" in self.output_schema.__qualname__:
            raise ConfigurationError(
                f"output_schema {self.output_schema.__qualname__} is defined inside a function; define it at module "
                "level so the agent can be serialized."
            )
        generator = None if self.chat_generator is None else component_to_dict(obj=self.chat_generator, name="chat")
        return default_to_dict(self, output_schema=serialize_type(self.output_schema), chat_generator=generator)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StructuredOutputStage:
        """The stage, its schema imported from its path (subject to Haystack's allowlist)."""
        params = data["init_parameters"]
        params["output_schema"] = deserialize_type(params["output_schema"])
        if params.get("chat_generator") is not None:
            deserialize_component_inplace(params, key="chat_generator")
        return default_from_dict(cls, data)
