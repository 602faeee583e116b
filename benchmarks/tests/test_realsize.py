"""The real-size corpus and the offline evidence-kept measurement."""

from __future__ import annotations

from benchmarks import evidence_kept
from benchmarks.harness.metrics import corpus_facts
from benchmarks.harness.scenarios import SCENARIOS, corpus_of
from benchmarks.sim.corpus import build_corpus
from benchmarks.sim.prose import findings_in
from benchmarks.sim.realsize import build_real_corpus
from haystack_deep_research.settings.grouped import DEFAULT_PASSAGE_BUDGET


def test_real_size_pages_are_articles_inside_site_furniture_with_facts_spread_through_them() -> None:
    corpus = build_real_corpus(seed=7)

    assert corpus == build_real_corpus(seed=7)
    assert {p.kind for p in corpus.pages} == {"html", "pdf"}
    for page in corpus.pages[:9]:
        assert 8_000 <= len(page.text) <= 20_000
        assert len(page.html()) - len(page.text) >= 15_000  # furniture of a few tens of KB
        facts = findings_in(page.text)
        assert len(facts) == 6
        places = [page.text.index(f) / len(page.text) for f in facts]
        assert places[0] < 0.2
        assert places[-1] > 0.8
    assert corpus.pages[2].kind == "pdf"
    assert len(corpus.pages[2].pdf_pages()) >= 3


def test_the_real_size_scenario_serves_and_counts_the_real_size_corpus() -> None:
    scenario = SCENARIOS["real-three"]

    assert scenario.subtopics == 3
    assert corpus_of(scenario.corpus, 7) == build_real_corpus(seed=7)
    assert all(fact_id.startswith("RS-") for fact_id in corpus_facts(7, "real-size"))


def test_the_default_selection_keeps_every_real_size_fact_and_no_fewer_short_ones_than_bm25() -> None:
    budgets = (2_000, DEFAULT_PASSAGE_BUDGET)
    real = evidence_kept.measure("real-size", build_real_corpus(seed=7), budgets, facets=2)
    short = evidence_kept.measure("short", build_corpus(seed=7), budgets, facets=2)

    def point(points: list[evidence_kept.Point], method: str, budget: int) -> evidence_kept.Point:
        return next(p for p in points if p.method == method and p.budget == budget)

    now, before = "BM25 + concrete content (now)", "BM25 (before)"
    assert point(real, now, DEFAULT_PASSAGE_BUDGET).facts == point(real, now, DEFAULT_PASSAGE_BUDGET).total_facts
    assert point(real, before, 2_000).facts < point(real, now, DEFAULT_PASSAGE_BUDGET).facts
    assert point(short, now, DEFAULT_PASSAGE_BUDGET).facts >= point(short, before, 2_000).facts
    assert "evidence-kept:start" in evidence_kept.section(real)
