"""The corpus is reproducible and the metrics compute what the report says they do."""

from __future__ import annotations

from benchmarks.harness.metrics import (
    compute,
    corpus_facts,
    critical_path,
    critical_path_parts,
    facts_in,
    normalize,
    shortest_schedule,
)
from benchmarks.sim import prose
from benchmarks.sim.corpus import build_corpus
from benchmarks.sim.llm_server import LatencyModel


def test_corpus_is_the_same_for_the_same_seed_and_states_findings():
    first, second = build_corpus(seed=3), build_corpus(seed=3)
    assert first == second
    assert build_corpus(seed=4) != first
    assert {p.kind for p in first.pages} == {"html", "pdf"}
    assert all(prose.findings_in(p.text) for p in first.pages)
    assert "Aspects to cover: cold climate efficiency; installation cost." in first.question(2)


def _call(role, thread, start, end, status=200):
    return {
        "role": role,
        "thread": thread,
        "start": start,
        "end": end,
        "status": status,
        "input_tokens": 10,
        "output_tokens": 5,
        "tool_calls": [],
    }


def test_critical_path_schedules_researcher_chains_on_the_slots():
    llm = [
        _call("scope", "scope", 0, 1),
        _call("orchestrator", "orchestrator", 1, 2),
        _call("researcher", "a", 2, 3),
        _call("summarizer", "a", 3, 5),
        _call("summarizer", "a", 3, 4),
        _call("researcher", "a", 5, 6),
        _call("researcher", "b", 2, 3),
        _call("researcher", "b", 3, 3.5, status=429),
        _call("writer", "writer", 7, 9),
    ]
    # serial 1 + 1 + 2; chains a = 2 + 2 = 4, b = 1
    assert critical_path(llm, concurrency=5) == 8
    assert critical_path(llm, concurrency=1) == 9


def test_shortest_schedule_is_exact_for_small_sets():
    assert shortest_schedule([3.0] * 5, 2) == 9.0
    assert shortest_schedule([3.0, 3.0, 2.0, 2.0, 2.0], 2) == 6.0
    assert shortest_schedule([1.0, 2.0], 5) == 2.0
    assert shortest_schedule([], 3) == 0.0


def test_beyond_the_exact_limit_the_schedule_bound_counts_the_jobs_some_slot_must_chain():
    assert shortest_schedule([2.0] * 20 + [1.0], 10) == 2.0 + 2.0 + 1.0  # 21 jobs on 10 slots: one slot runs three
    assert shortest_schedule([10.0] + [1.0] * 11, 4) == 10.0


def test_precision_counts_unique_cited_urls_that_were_retrieved():
    report = "See [a](http://h/x/1.html) and [a again](http://h/x/1.html), [b](http://h/x/2.html), http://h/x/9.html."
    record = {
        "scenario": {"name": "s", "max_concurrent": 2},
        "library": "ours",
        "result": {
            "ok": True,
            "error": "",
            "start": 0.0,
            "end": 2.0,
            "cpu_s": 0.1,
            "peak_rss_mb": 1.0,
            "outcome": {"report": report},
        },
        "llm": [_call("writer", "writer", 0.5, 1.5)],
        "search": [{"start": 0.1, "end": 0.2, "status": 200, "query": "q", "returned": ["http://h/x/2.html"]}],
        "web": [{"start": 0.2, "end": 0.3, "status": 200, "method": "GET", "url": "http://H/x/1.html"}],
    }
    metrics = compute(record)
    assert (metrics.cited, metrics.cited_retrieved) == (3, 2)
    assert metrics.external_s == 1.2
    assert normalize("HTTP://Example.org/a/#frag") == "http://example.org/a"


def test_researchers_invent_citations_only_at_the_set_rate() -> None:
    from benchmarks.sim import prose

    page = "Finding AB-1-2-3: solar grew in the sample. Finding AB-1-2-4: storage doubled in the sample."
    evidence = [("http://127.0.0.1:1/aspect/one.html", page)]

    honest = prose.researcher_summary("solar", evidence, invent_rate=0.0, seed=7)
    inventive = prose.researcher_summary("solar", evidence, invent_rate=1.0, seed=7)

    assert "http://127.0.0.1:1/aspect/one.html" in honest
    assert "http://127.0.0.1:1/aspect/one.html" not in inventive
    assert inventive == prose.researcher_summary("solar", evidence, invent_rate=1.0, seed=7)


def test_writer_calls_sent_side_by_side_count_once_on_the_slots():
    llm = [
        _call("scope", "scope", 0, 1),
        _call("writer", "writer", 2, 4),  # three sections side by side
        _call("writer", "writer", 2.1, 4.1),
        _call("writer", "writer", 2.2, 3.2),
        _call("writer", "writer", 5, 6),  # then one call on its own
    ]
    parts = critical_path_parts(llm, concurrency=5)
    assert parts["writer"] == 2 + 1
    assert critical_path(llm, concurrency=2) == 1 + 2 + 1  # the writer had the three in flight at once: three slots


def test_facts_are_counted_once_and_only_word_for_word():
    facts = corpus_facts(7)
    fact_id, sentence = next(iter(facts.items()))
    assert sentence.startswith(f"Finding {fact_id}: ")
    assert not sentence.endswith(".")
    altered = sentence.replace(" was ", " was about ")
    report = f"- {sentence}. [source](http://h/a)\n- {sentence}. again\n- {altered}."
    assert facts_in(report, facts) == 1
    assert facts_in(f"- {altered}.", facts) == 0


def test_prompt_reading_adds_to_the_time_to_first_token():
    latency = LatencyModel(ttft_s=0.5, tokens_per_s=100, prefill_tokens_per_s=8_000)
    assert latency.first_token_s(16_000) == 2.5
    assert LatencyModel(ttft_s=0.5).first_token_s(16_000) == 0.5
    assert latency.generation_s(50) == 0.5


def test_the_simulated_writer_answers_a_section_or_an_opening_as_asked():
    from benchmarks.sim.conversation import Conversation, Message
    from benchmarks.sim.policies import Policies, PolicyConfig

    note = (
        "Research brief. Objective: establish what the evidence says about heat pumps. Aspects to cover: noise.\n"
        "Finding AB-1-2-3: the noise was 40 points in the sample ([source](http://h/heat-pumps/noise/1.html))."
    )

    def ask(system: str) -> str:
        messages = [Message("system", system), Message("user", note)]
        conversation = Conversation("chat", "sim-writer", False, messages, [])
        return Policies(PolicyConfig()).decide(conversation)[1].text

    section = ask("You write one section of a research report.")
    opening = ask("You write the opening of a research report.")
    whole = ask("You write research reports.")
    assert section.startswith("## Noise\n")
    assert "Sources" not in section
    assert "Executive summary" not in section
    assert "Finding AB-1-2-3: the noise was 40 points in the sample. [source](http://h/heat-pumps/noise/1.html)" in (
        section
    )
    assert opening.startswith("# Heat pumps\n\n## Executive summary\n")
    assert "Finding" not in opening
    assert whole.startswith("# Heat pumps")
    assert "## Sources" in whole
    assert "## Noise" in whole


def test_the_writer_bound_uses_the_slots_the_writer_really_used() -> None:
    from benchmarks.harness.metrics import critical_path_parts, most_at_once

    def call(start: float, end: float) -> dict[str, object]:
        return {"role": "writer", "status": 200, "start": start, "end": end, "thread": "w"}

    four_at_once = [call(0.0, 1.0) for _ in range(4)]

    assert most_at_once(four_at_once) == 4
    assert critical_path_parts(four_at_once, 2)["writer"] == 1.0  # not 2.0: the four parts ran side by side
    assert critical_path_parts([call(0.0, 1.0), call(1.0, 2.0)], 2)["writer"] == 2.0


def test_a_report_in_gpt_researchers_citation_style_is_counted_by_unique_url() -> None:
    # In-text hyperlinks after each claim and an APA reference list whose entries link each URL to itself, as GPT
    # Researcher writes them: one URL cited four times is one citation.
    report = (
        "# Heat pumps in cold climates\n\n"
        "Seasonal efficiency held up at -15 °C ([Nordström, 2024](http://h/heat/cold/1.html)). "
        "Installers in Québec report the same ([in-text citation](http://h/heat/cost/2.pdf)).\n\n"
        "| region | figure |\n|---|---|\n| north | 3.1 ([source](http://h/heat/cold/1.html)) |\n\n"
        "## References\n\n"
        "- Nordström, K. (2024, March 3). *Cold-climate field trial*. Energy Lab. "
        "[http://h/heat/cold/1.html](http://h/heat/cold/1.html)\n"
        "- Hydro survey. (2023). *Installed costs*. [http://h/heat/cost/2.pdf](http://h/heat/cost/2.pdf).\n"
        "- Made-up review. (2022). [http://h/heat/cost/77.html](http://h/heat/cost/77.html)\n"
    )
    record = {
        "scenario": {"name": "s", "max_concurrent": 2},
        "library": "gptr",
        "result": {
            "ok": True,
            "error": "",
            "start": 0.0,
            "end": 2.0,
            "cpu_s": 0.1,
            "peak_rss_mb": 1.0,
            "outcome": {"report": report},
        },
        "llm": [_call("writer", "writer", 0.5, 1.5)],
        "search": [{"start": 0.1, "end": 0.2, "status": 200, "query": "q", "returned": ["http://h/heat/cost/2.pdf"]}],
        "web": [{"start": 0.2, "end": 0.3, "status": 200, "method": "GET", "url": "http://h/heat/cold/1.html"}],
    }
    metrics = compute(record)
    assert (metrics.cited, metrics.cited_retrieved) == (3, 2)  # 77.html was never retrieved


def test_the_simulated_planner_answers_a_request_for_search_queries_with_a_json_list() -> None:
    import json

    from benchmarks.sim.conversation import Conversation, Message
    from benchmarks.sim.policies import Policies, PolicyConfig

    task = "What does the evidence say about district heating? Aspects to cover: pipe losses; tariffs; uptake."
    prompt = f'Write 2 search queries to research this task: "{task}"\nReply with a list of strings only.'
    conversation = Conversation("chat", "sim-orchestrator", False, [Message("user", prompt)], [])

    role, reply, _ = Policies(PolicyConfig(subtopics=5)).decide(conversation)

    assert role == "orchestrator"
    assert json.loads(reply.text) == ["district heating: pipe losses", "district heating: tariffs"]


def test_the_simulated_writer_picks_an_agent_and_cites_passages_by_the_source_above_them() -> None:
    import json

    from benchmarks.sim.conversation import Conversation, Message
    from benchmarks.sim.policies import Policies, PolicyConfig

    task = "What does the evidence say about district heating? Aspects to cover: tariffs."
    pick = [Message("system", 'Answer with JSON: {"server": ..., "agent_role_prompt": ...}'), Message("user", task)]
    agent = json.loads(Policies(PolicyConfig()).decide(Conversation("chat", "sim-writer", False, pick, []))[1].text)
    assert set(agent) == {"server", "agent_role_prompt"}
    assert "district heating" in agent["agent_role_prompt"]

    one, two = "Finding DH-1-0-1: tariffs rose 4.1 percent in the Århus sample.", "Finding DH-1-0-2: tariffs fell"
    context = (
        f"Source: http://h/district-heating/tariffs/1.html\nTitle: Tariffs\nContent: Intro. {one} More.\n"
        f"Source: http://h/district-heating/tariffs/2.html\nTitle: Cut\nContent: {two}"  # a passage cut mid-finding
        f" in the\nSource: http://h/district-heating/tariffs/3.html\nTitle: Repeat\nContent: {one}\n"
    )
    ask = f'Information: "{context}"\nAnswer "{task}" citing each claim like this: ([in-text citation](url)).'
    messages = [Message("system", "You are a research analyst."), Message("user", ask)]
    report = Policies(PolicyConfig()).decide(Conversation("chat", "sim-writer", False, messages, []))[1].text

    assert f"- {one[:-1]} ([in-text citation](http://h/district-heating/tariffs/1.html))." in report
    assert f"- {one[:-1]} ([in-text citation](http://h/district-heating/tariffs/3.html))." in report
    assert "DH-1-0-2" not in report  # only whole findings are stated
    assert report.endswith(
        "## References\n\n- [http://h/district-heating/tariffs/1.html](http://h/district-heating/tariffs/1.html)\n"
        "- [http://h/district-heating/tariffs/3.html](http://h/district-heating/tariffs/3.html)"
    )
