"""
The library's own headings and labels of a report, in the language of its question (:func:`report_sections`), chosen
here so the structure does not depend on the model's reading of the prompt (docs/clarify-and-report-types.md).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from haystack_deep_research._serialization import FieldsSerialized

__all__ = ["NO_EVIDENCE_SENTENCES", "SUMMARY_HEADINGS", "ReportSections", "report_sections"]


@dataclass(frozen=True)
class ReportSections(FieldsSerialized):
    """The headings and labels of one report in one ``language``; ``translate``: the writer translates them."""

    language: str
    summary: str
    findings: str
    conclusions: str
    uncertainties: str
    future: str
    sources: str
    contradictions: str
    changed: str
    new_topics: str
    rechecked: str
    kept: str
    changed_source: str
    new_source: str
    new_claim: str
    changed_claim: str
    dropped_claim: str
    nothing_new: str
    no_evidence: str
    translate: bool = False


_ENGLISH = ReportSections(
    language="en",
    summary="Executive summary",
    findings="Main findings",
    conclusions="Conclusions and recommendations",
    uncertainties="Remaining uncertainties",
    future="Future research directions",
    sources="Sources",
    contradictions="Contradictions between sources",
    changed="What changed since the last run",
    new_topics="New topics searched",
    rechecked="Topics checked again (their sources were stale)",
    kept="Topics kept (their sources are still fresh)",
    changed_source="Changed since the last run",
    new_source="New source",
    new_claim="New claim",
    changed_claim="Changed claim",
    dropped_claim="No longer supported (cited before, not now)",
    nothing_new="Nothing new was found.",
    no_evidence="This research gathered no evidence on this heading.",
    translate=True,
)
_CHINESE = ReportSections(
    language="zh",
    summary="执行摘要",
    findings="主要发现",
    conclusions="结论与建议",
    uncertainties="尚存的不确定性",
    future="未来研究方向",
    sources="参考来源",
    contradictions="来源之间的矛盾",
    changed="自上次研究以来的变化",
    new_topics="新搜索的主题",
    rechecked="重新核查的主题 (来源已过期)",
    kept="保留的主题 (来源仍然有效)",
    changed_source="自上次研究以来已更新",
    new_source="新来源",
    new_claim="新的论断",
    changed_claim="已变化的论断",
    dropped_claim="不再有依据 (上次引用, 本次未引用)",
    nothing_new="未发现新的内容。",
    no_evidence="本次研究没有收集到关于这一标题的证据。",
)


_FRENCH = ReportSections(
    language="fr",
    summary="Synthèse",
    findings="Principaux résultats",
    conclusions="Conclusions et recommandations",
    uncertainties="Incertitudes restantes",
    future="Pistes de recherche futures",
    sources="Sources",
    contradictions="Contradictions entre les sources",
    changed="Ce qui a changé depuis la dernière recherche",
    new_topics="Nouveaux sujets recherchés",
    rechecked="Sujets revérifiés (leurs sources étaient périmées)",
    kept="Sujets conservés (leurs sources sont encore récentes)",
    changed_source="Modifiée depuis la dernière recherche",
    new_source="Nouvelle source",
    new_claim="Nouvelle affirmation",
    changed_claim="Affirmation modifiée",
    dropped_claim="Plus étayée (citée la dernière fois, plus maintenant)",
    nothing_new="Rien de nouveau n'a été trouvé.",
    no_evidence="Cette recherche n'a réuni aucune source sur ce point.",
)
_GERMAN = ReportSections(
    language="de",
    summary="Zusammenfassung",
    findings="Wichtigste Ergebnisse",
    conclusions="Schlussfolgerungen und Empfehlungen",
    uncertainties="Verbleibende Unsicherheiten",
    future="Künftige Forschungsrichtungen",
    sources="Quellen",
    contradictions="Widersprüche zwischen den Quellen",
    changed="Was sich seit der letzten Recherche geändert hat",
    new_topics="Neu gesuchte Themen",
    rechecked="Erneut geprüfte Themen (ihre Quellen waren veraltet)",
    kept="Beibehaltene Themen (ihre Quellen sind noch aktuell)",
    changed_source="Seit der letzten Recherche geändert",
    new_source="Neue Quelle",
    new_claim="Neue Aussage",
    changed_claim="Geänderte Aussage",
    dropped_claim="Nicht mehr belegt (zuletzt zitiert, jetzt nicht mehr)",
    nothing_new="Es wurde nichts Neues gefunden.",
    no_evidence="Diese Recherche hat zu diesem Punkt keine Belege gefunden.",
)
_SPANISH = ReportSections(
    language="es",
    summary="Resumen ejecutivo",
    findings="Principales hallazgos",
    conclusions="Conclusiones y recomendaciones",
    uncertainties="Incertidumbres pendientes",
    future="Futuras líneas de investigación",
    sources="Fuentes",
    contradictions="Contradicciones entre las fuentes",
    changed="Qué ha cambiado desde la última investigación",
    new_topics="Nuevos temas buscados",
    rechecked="Temas revisados de nuevo (sus fuentes estaban desactualizadas)",
    kept="Temas conservados (sus fuentes siguen vigentes)",
    changed_source="Cambiada desde la última investigación",
    new_source="Fuente nueva",
    new_claim="Afirmación nueva",
    changed_claim="Afirmación modificada",
    dropped_claim="Ya no respaldada (citada la última vez, ahora no)",
    nothing_new="No se encontró nada nuevo.",
    no_evidence="Esta investigación no reunió ninguna fuente sobre este punto.",
)
_JAPANESE = ReportSections(
    language="ja",
    summary="エグゼクティブサマリー",
    findings="主な調査結果",
    conclusions="結論と提言",
    uncertainties="残る不確実性",
    future="今後の研究の方向性",
    sources="出典",
    contradictions="出典間の矛盾",
    changed="前回の調査からの変更点",
    new_topics="新たに検索したトピック",
    rechecked="再確認したトピック (出典が古くなっていました)",
    kept="維持したトピック (出典はまだ新しいものです)",
    changed_source="前回の調査から更新",
    new_source="新しい出典",
    new_claim="新しい主張",
    changed_claim="変更された主張",
    dropped_claim="裏付けがなくなった主張 (前回は引用、今回は引用なし)",
    nothing_new="新しい情報は見つかりませんでした。",
    no_evidence="この調査では、この見出しについての根拠は得られませんでした。",
)
_TABLES = (_ENGLISH, _FRENCH, _GERMAN, _SPANISH, _CHINESE, _JAPANESE)
SUMMARY_HEADINGS = frozenset(table.summary for table in _TABLES)
"""The executive summary's heading in every language the library writes headings in."""
NO_EVIDENCE_SENTENCES = frozenset(table.no_evidence for table in _TABLES)
"""The sentence under a heading of the user's outline that no note gives evidence for, in every such language: the
library's own, it claims nothing."""

_WORDS = {
    _ENGLISH: "the and is are was what how which why who of to in for with on does do will can a an this that",
    _FRENCH: "le la les des du est sont et une un que qui pour dans sur au aux quel quelle quels quelles comment "
    "pourquoi ce ces avec plus leur selon entre été",
    _GERMAN: "der die das und ist sind wie welche welcher welches nicht mit für den dem des ein eine einer im auf "
    "zu von warum was wird werden bei über",
    _SPANISH: "el la los las es son y una un del que cómo qué cuál cuáles para por con se su sus más entre según "
    "está están porque",
}
_ACCENTS = {_FRENCH: "éèêëàâçùûôîœ", _GERMAN: "äöüß", _SPANISH: "ñáíóú¿¡"}
_TOKEN = re.compile(r"[^\W\d_]+")


def _script(character: str) -> str:
    name = unicodedata.name(character, "")
    if name.startswith(("HIRAGANA", "KATAKANA")):
        return "kana"
    return "hangul" if name.startswith("HANGUL") else "han" if name.startswith("CJK UNIFIED IDEOGRAPH") else ""


def _latin(question: str) -> ReportSections:
    tokens = [token.casefold() for token in _TOKEN.findall(question)]
    scores = {table: float(sum(token in words.split() for token in tokens)) for table, words in _WORDS.items()}
    for table, letters in _ACCENTS.items():
        scores[table] += sum(letter in question.casefold() for letter in letters) / 10
    best = max(scores.values())
    winners = [table for table, score in scores.items() if score == best]
    return winners[0] if best >= 1 and len(winners) == 1 else _ENGLISH


def report_sections(question: str) -> ReportSections:
    """
    The headings in the question's language: Japanese when it holds kana, Chinese when its letters are mostly Han
    characters (without kana or hangul), French, German or Spanish by their most frequent words (accented letters
    breaking a tie), else English headings marked for translation.
    """
    scripts = [_script(c) for c in question if c.isalpha()]
    if "kana" in scripts:
        return _JAPANESE
    if scripts and scripts.count("han") * 2 >= len(scripts) and "hangul" not in scripts:
        return _CHINESE
    return _latin(question)
