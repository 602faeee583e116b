"""The scripted roles of the research workflow answer by template name and variables, never by wording."""

from __future__ import annotations

import json

import pytest

from haystack_deep_research import ConfigurationError, ResearchSummary
from haystack_deep_research.prompts import CAUSAL, STRUCTURED, SUMMARY, SUMMARY_REWRITE, render_chat
from haystack_deep_research.testing import ScriptedChatGenerator

FINDING = "## Tides\n\nFindings:\n- Spring tides occur at new moon. They are strong [Tides](https://t.example/tides)"
CLAIM = "Tides stopped in 1990"


def _reply(generator: ScriptedChatGenerator, template: object, **variables: object) -> str:
    return generator.run(messages=render_chat(template, **variables))["replies"][0].text or ""  # type: ignore[arg-type]


def _summary(corrects: str, template: object, **extra: object) -> str:
    generator = ScriptedChatGenerator(role="summarize", unsupported_claims=[CLAIM], corrects=corrects)  # type: ignore[arg-type]
    variables = {"question": "q", "findings": [FINDING], "causal_chain": "", "urls": ["https://t.example/tides"]}
    return _reply(generator, template, **variables, **extra)


def test_summarize_restates_each_allowed_finding_as_one_cited_claim() -> None:
    text = _summary("never", SUMMARY)

    assert "- Spring tides occur at new moon, They are strong [source](https://t.example/tides)." in text
    assert f"- {CLAIM} [source](https://t.example/tides)." in text


@pytest.mark.parametrize(
    ("corrects", "on_rewrite", "with_new_evidence"),
    [("never", True, True), ("on_rewrite", False, True), ("on_new_evidence", True, False)],
)
def test_summarize_drops_its_unsupported_claim_by_its_rule(
    corrects: str, on_rewrite: bool, with_new_evidence: bool
) -> None:
    rewrite = _summary(corrects, SUMMARY_REWRITE, previous="p", unsupported=[f"{CLAIM} source."])
    generator = ScriptedChatGenerator(role="summarize", unsupported_claims=[CLAIM], corrects=corrects)  # type: ignore[arg-type]
    findings = [FINDING, f"## Evidence on claims checked again (round 1): {CLAIM}\n\nNothing found."]
    later = _reply(
        generator, SUMMARY, question="q", findings=findings, causal_chain="", urls=["https://t.example/tides"]
    )

    assert (CLAIM in rewrite, CLAIM in later) == (on_rewrite, with_new_evidence)


def test_causal_numbers_the_cited_findings() -> None:
    text = _reply(ScriptedChatGenerator(role="causal"), CAUSAL, question="q", findings=[FINDING])

    assert text == "1. Spring tides occur at new moon. They are strong [Tides](https://t.example/tides)"


def test_summarize_fills_a_structured_output_schema_from_the_report() -> None:
    report = "# Summary\n\nThe answer.\n\n## Key findings\n\n- Spring tides are strong [s](https://t.example/tides).\n"
    schema = json.dumps(ResearchSummary.model_json_schema())
    text = _reply(
        ScriptedChatGenerator(role="summarize"),
        STRUCTURED,
        schema=schema,
        report=report,
        sources=["Tides — https://t.example/tides"],
    )

    summary = ResearchSummary.model_validate_json(text)
    assert summary.summary == "The answer."
    assert summary.key_findings == ["Spring tides are strong"]
    assert summary.sources == ["https://t.example/tides"]


def test_an_unknown_rule_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="corrects must be one of never, on_rewrite, on_new_evidence"):
        ScriptedChatGenerator(role="summarize", corrects="sometimes")  # type: ignore[arg-type]
