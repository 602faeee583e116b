"""The passages the library picks rank as Haystack's own BM25+ store ranks them."""

from __future__ import annotations

import random

import pytest
from haystack import Document
from haystack.document_stores.in_memory import InMemoryDocumentStore

from haystack_deep_research.tools.passages import (
    best_passages,
    concrete_content,
    ranked_passages,
    relevant_passages,
    split_passages,
)

SENTENCES = [
    "Heat pumps in Oslo cut heating bills by 41.2 % between 2019 and 2023.",
    "Die Wärmepumpe läuft bei minus 15 Grad noch mit einer Leistungszahl von 2,1.",
    "ヒートポンプの騒音は夜間に四十デシベル以下でした。",
    "Installers in Québec report wait times of 6 to 9 weeks for ground loops.",
    "The grid operator Statnett paid 1,204 households for demand response.",
    "Ground-source loops need a borehole of 80 to 120 m per house.",
    "Radiators sized for 55 °C flow temperature rarely need replacing.",
    "Underfloor heating pairs well with low flow temperatures.",
]


def _page(seed: int) -> str:
    rng = random.Random(seed)
    paragraphs = [" ".join(rng.choice(SENTENCES) for _ in range(rng.randint(1, 9))) for _ in range(40)]
    return "\n\n".join(paragraphs)


def _store_ranking(passages: list[str], query: str) -> list[int]:
    store = InMemoryDocumentStore(bm25_algorithm="BM25Plus", shared=False)
    store.write_documents([Document(id=str(n), content=text) for n, text in enumerate(passages)])
    found = store.bm25_retrieval(query=query, top_k=len(passages)) if query.strip() else []
    return [int(document.id) for document in found]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(
    "query",
    ["heat pump bills Oslo", "Wärmepumpe Leistungszahl", "ヒートポンプ 騒音", "borehole depth per house", "zzz", ""],
)
def test_passages_rank_as_haystacks_bm25_plus_store(seed: int, query: str) -> None:
    text = _page(seed)
    passages = split_passages(text)
    expected = _store_ranking(passages, query)

    assert [passage for _, passage in ranked_passages([text], [query])[0]] == [passages[n] for n in expected]
    assert best_passages(text, [query]) == [passages[expected[0]] if expected else passages[0]]


def test_a_blank_text_has_no_passage_for_any_query() -> None:
    assert best_passages("  \n\n ", ["heat pumps"]) == [""]
    assert ranked_passages(["", "   "], ["heat pumps"]) == [[]]
    blank = " \n\n\t" * 400  # longer than the budget, and nothing in it to rank
    assert relevant_passages(blank, "heat pumps", budget=500).passages == (blank,)


@pytest.mark.parametrize(
    ("passage", "concrete"),
    [
        ("Oslo paid 1,204 households 41.2 % more.", 2),  # a number counts once, with its separators
        ("The Grid Operator in New York.", 2),  # runs of two or more capitalised words
        ("The grid operator said so.", 0),  # a sentence's first word alone is not a name
        ("xNew York and 3New York", 1),  # a name starts a word; the 3 is a figure
        ("Zürich Lake, Über Straße, New-York City", 1),  # only ASCII capitals and small letters make a name
        ("Die Wärmepumpe läuft bei ٣٤ Grad", 1),  # any script's digits are a figure
        ("", 0),
    ],
)
def test_concrete_content_counts_figures_and_names(passage: str, concrete: int) -> None:
    assert concrete_content(passage) == min(1.0, concrete / 3)


@pytest.mark.parametrize("seed", range(4))
def test_the_passages_of_several_texts_rank_together_as_the_store_ranks_them(seed: int) -> None:
    texts = [_page(seed), "", _page(seed + 10)[:3000], "Radiators sized for 55 °C flow temperature."]
    passages = [(number, part) for number, text in enumerate(texts) for part in split_passages(text)]
    query = "heat pump bills Oslo borehole Leistungszahl"

    expected = _store_ranking([part for _, part in passages], query)

    assert ranked_passages(texts, [query])[0] == [passages[n] for n in expected]


def test_a_page_ranked_toward_its_question_ranks_again_for_each_sentence_that_cites_it() -> None:
    # read_url ranks a page toward the researcher's question, the report's verification ranks it again for each
    # citing sentence; the words counted the first time serve the second, with the store's ranking both times
    text = _page(3)
    passages = split_passages(text)
    question = "Wärmepumpe Leistungszahl"
    sentences = ["Heat pump bills in Oslo fell.", "ヒートポンプ 騒音", "A borehole depth per house of 80 m."]

    excerpt = relevant_passages(text, question, budget=800)
    cited = best_passages(text, sentences)

    assert passages[_store_ranking(passages, question)[0]] in excerpt.passages
    assert cited == [passages[_store_ranking(passages, sentence)[0]] for sentence in sentences]
