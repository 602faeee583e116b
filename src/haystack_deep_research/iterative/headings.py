"""
The sections of the iterative agent's report, in the question's language.

The report has a fixed structure (executive summary, main findings by theme, conclusions and recommendations,
remaining uncertainties, future research directions, sources). Its headings are chosen here, from the script the
question is written in, so the structure does not depend on the model's reading of the prompt: a question in Chinese
characters gets Chinese headings, any other question English ones, which the writer is asked to translate into the
question's language when that is not English. The "what changed" section of an update uses the same choice.
"""

from __future__ import annotations

import unicodedata
from dataclasses import asdict, dataclass

__all__ = ["ReportSections", "report_sections"]


@dataclass(frozen=True)
class ReportSections:
    """
    The headings and labels of one report.

    :param language: ``"zh"`` or ``"en"``.
    :param translate: Whether the writer should translate the headings into the question's language.
    """

    language: str
    translate: bool
    summary: str
    findings: str
    conclusions: str
    uncertainties: str
    future: str
    sources: str
    changed: str
    new_topics: str
    rechecked: str
    kept: str
    changed_source: str
    new_source: str
    nothing_new: str

    def to_dict(self) -> dict[str, object]:
        """:returns: The headings and labels as template variables."""
        return asdict(self)


_ENGLISH = ReportSections(
    language="en",
    translate=True,
    summary="Executive summary",
    findings="Main findings",
    conclusions="Conclusions and recommendations",
    uncertainties="Remaining uncertainties",
    future="Future research directions",
    sources="Sources",
    changed="What changed since the last run",
    new_topics="New topics searched",
    rechecked="Topics checked again (their sources were stale)",
    kept="Topics kept (their sources are still fresh)",
    changed_source="Changed since the last run",
    new_source="New source",
    nothing_new="Nothing new was found.",
)
_CHINESE = ReportSections(
    language="zh",
    translate=False,
    summary="执行摘要",
    findings="主要发现",
    conclusions="结论与建议",
    uncertainties="尚存的不确定性",
    future="未来研究方向",
    sources="参考来源",
    changed="自上次研究以来的变化",
    new_topics="新搜索的主题",
    rechecked="重新核查的主题 (来源已过期)",
    kept="保留的主题 (来源仍然有效)",
    changed_source="自上次研究以来已更新",
    new_source="新来源",
    nothing_new="未发现新的内容。",
)


def _han(character: str) -> bool:
    return unicodedata.name(character, "").startswith("CJK UNIFIED IDEOGRAPH")


def _kana_or_hangul(character: str) -> bool:
    name = unicodedata.name(character, "")
    return name.startswith(("HIRAGANA", "KATAKANA", "HANGUL"))


def report_sections(question: str) -> ReportSections:
    """
    :param question: The research question.
    :returns: Chinese headings when the question's letters are mostly Chinese characters (and it has no Japanese
        kana or Korean hangul), else English headings marked for translation.
    """
    letters = [c for c in question if c.isalpha()]
    han = sum(1 for c in letters if _han(c))
    if letters and han * 2 >= len(letters) and not any(_kana_or_hangul(c) for c in letters):
        return _CHINESE
    return _ENGLISH
