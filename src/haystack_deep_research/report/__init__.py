"""
The report layer: the write hook that writes and verifies the report and closes the run, the grounding stage and
its judge, the structured-output stage, publishing a verified report with the passage behind each citation, and
exporting it as a page a reader can check (:func:`export_html`), a Word document (:func:`export_docx`), an evidence
table (:func:`export_evidence`) or a PDF
(:func:`export_pdf`); and answering a question from a finished run's evidence (:func:`ask_report`).
"""

from haystack_deep_research.report.ask import NOT_ANSWERED, ask_report
from haystack_deep_research.report.contradictions import find_contradictions
from haystack_deep_research.report.export_files import export_docx, export_evidence, export_html, export_pdf
from haystack_deep_research.report.publish import citation_findings, verify_report
from haystack_deep_research.report.structured import ResearchSummary
from haystack_deep_research.report.style import ReportStyle

__all__ = [
    "NOT_ANSWERED",
    "ReportStyle",
    "ResearchSummary",
    "ask_report",
    "citation_findings",
    "export_docx",
    "export_evidence",
    "export_html",
    "export_pdf",
    "find_contradictions",
    "verify_report",
]
