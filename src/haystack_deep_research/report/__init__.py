"""
The report layer: the write hook that writes and verifies the report and closes the run, the grounding stage and
its judge, the structured-output stage, publishing a verified report with the passage behind each citation, and
exporting it as a page a reader can check (:func:`export_html`), a Word document (:func:`export_docx`), an evidence
table (:func:`export_evidence`) or a PDF
(:func:`export_pdf`); and answering a question from a finished run's evidence (:func:`ask_report`).
"""

from haystack_deep_research.report.ask import NOT_ANSWERED, ask_report
from haystack_deep_research.report.assessment import (
    UNCITED_MARK,
    UNSUPPORTED_MARK,
    judge_report,
    mark_unsupported,
    report_claims,
    unjudged_claims,
    verdict_outputs,
)
from haystack_deep_research.report.contradictions import add_contradictions, find_contradictions
from haystack_deep_research.report.export_files import export_docx, export_evidence, export_pdf
from haystack_deep_research.report.export_html import export_html
from haystack_deep_research.report.grounding import GroundingStage
from haystack_deep_research.report.judge import (
    SUPPORTED,
    UNKNOWN,
    UNSUPPORTED,
    Claim,
    ClaimVerdict,
    Judgement,
    SourceText,
    SourceTexts,
    SourceVerdict,
    cited_claims,
    grounding_score,
    judge_claims,
    parse_verdicts,
)
from haystack_deep_research.report.no_evidence import NoEvidenceStage
from haystack_deep_research.report.passages import cited_passages
from haystack_deep_research.report.publish import (
    allowed_urls,
    citation_findings,
    publish_report,
    reset_review_outputs,
    verify_report,
)
from haystack_deep_research.report.structured import (
    ResearchSummary,
    StructuredOutputStage,
    parse_structured,
    strict_output_kwargs,
)
from haystack_deep_research.report.style import ReportStyle
from haystack_deep_research.report.writer import ReportStage, WriteHook

__all__ = [
    "NOT_ANSWERED",
    "SUPPORTED",
    "UNCITED_MARK",
    "UNKNOWN",
    "UNSUPPORTED",
    "UNSUPPORTED_MARK",
    "Claim",
    "ClaimVerdict",
    "GroundingStage",
    "Judgement",
    "NoEvidenceStage",
    "ReportStage",
    "ReportStyle",
    "ResearchSummary",
    "SourceText",
    "SourceTexts",
    "SourceVerdict",
    "StructuredOutputStage",
    "WriteHook",
    "add_contradictions",
    "allowed_urls",
    "ask_report",
    "citation_findings",
    "cited_claims",
    "cited_passages",
    "export_docx",
    "export_evidence",
    "export_html",
    "export_pdf",
    "find_contradictions",
    "grounding_score",
    "judge_claims",
    "judge_report",
    "mark_unsupported",
    "parse_structured",
    "parse_verdicts",
    "publish_report",
    "report_claims",
    "reset_review_outputs",
    "strict_output_kwargs",
    "unjudged_claims",
    "verdict_outputs",
    "verify_report",
]
