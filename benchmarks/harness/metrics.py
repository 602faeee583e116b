"""
The figures of one run, computed from the child's measurements and the three servers' logs.

- critical-path bound: the sum of the scope and orchestrator calls, plus the researcher phase: the shortest
  schedule of the researcher chains (each chain is a researcher's own turns plus its longest page summary) on the
  scenario's number of concurrent researchers, plus the writer phase: the writer's calls fall into groups of calls
  that overlap in time (one group per round the library sent side by side; a single call is a group of one), and
  each group counts the shortest schedule of its calls on as many slots as the library used at once for them (at
  least the scenario's concurrency: a library may write more parts at once than it runs researchers). Only calls
  answered 200 count.
- abandoned calls: requests the client gave up on before the reply was sent (a timeout), and their tokens.
- facts in the report: the corpus's numbered findings that the report states word for word (each counted once).
- citation precision: cited URLs (links and bare URLs in the report, unique) that were retrieved in this run
  (fetched from the web server, or returned by the search server) over all cited URLs.
- overhead per step: wall time not covered by any server handling a request, over the number of LLM calls.
- fallback parts: the report's parts that the library filled without its writer (a section holding the researcher's
  note, an opening holding the brief, a report assembled from the notes), found by the notices it puts there.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from benchmarks.harness.scenarios import corpus_of
from benchmarks.sim.prose import FINDING, urls_in

SERIAL_ROLES = ("scope", "orchestrator")
FACT_ID = re.compile(r"Finding ([A-Z]+-\d+-\d+-\d+): ")
WINDOW_SLACK_S = 0.001
EXACT_SCHEDULE_LIMIT = 10
FALLBACK_NOTICES = ("The report writer could not write", "The report writer failed")
"""How haystack-deep-research's report begins a part it filled without its writer (``FALLBACK_*`` in its prompts)."""


@dataclass
class RoleUsage:
    """LLM calls and tokens of one role."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    throttled: int = 0


@dataclass
class RunMetrics:
    """Every figure the report shows for one library on one scenario."""

    scenario: str
    library: str
    ok: bool
    error: str
    wall_s: float
    bound_s: float
    roles: dict[str, RoleUsage] = field(default_factory=dict)
    tool_calls: int = 0
    search_requests: int = 0
    web_requests: int = 0
    peak_rss_mb: float = 0.0
    cpu_s: float = 0.0
    cited: int = 0
    cited_retrieved: int = 0
    external_s: float = 0.0
    facts: int = 0
    bound_parts: dict[str, float] = field(default_factory=dict)
    exit_reason: str = ""
    abandoned: int = 0
    abandoned_tokens: int = 0
    fallback_parts: int = 0

    @property
    def ratio(self) -> float:
        """Wall time over the critical-path bound."""
        return self.wall_s / self.bound_s if self.bound_s > 0 else float("nan")

    @property
    def llm_calls(self) -> int:
        """LLM calls answered 200."""
        return sum(r.calls for r in self.roles.values())

    @property
    def input_tokens(self) -> int:
        """Input tokens over all roles."""
        return sum(r.input_tokens for r in self.roles.values())

    @property
    def output_tokens(self) -> int:
        """Output tokens over all roles."""
        return sum(r.output_tokens for r in self.roles.values())

    @property
    def precision(self) -> float:
        """Share of cited URLs that were retrieved; NaN when nothing was cited."""
        return self.cited_retrieved / self.cited if self.cited else float("nan")

    @property
    def overhead_ms_per_step(self) -> float:
        """Milliseconds of wall time outside every server, per LLM call."""
        return 1000 * max(0.0, self.wall_s - self.external_s) / max(1, self.llm_calls)

    @property
    def cpu_ms_per_step(self) -> float:
        """Milliseconds of the library process's CPU time per LLM call."""
        return 1000 * self.cpu_s / max(1, self.llm_calls)


def normalize(url: str) -> str:
    """Lower-case scheme and host, drop the fragment and a trailing slash, so equal URLs compare equal."""
    parts = urlsplit(url.strip())
    path = parts.path.rstrip("/") or "/"
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


@functools.cache
def corpus_facts(seed: int, corpus: str = "short") -> dict[str, str]:
    """
    The corpus's numbered findings, by fact id, as a report would state them (without the closing full stop).

    :param seed: The corpus seed.
    :param corpus: Which corpus (a scenario's ``corpus``).
    :returns: ``{fact_id: sentence}``.
    """
    facts: dict[str, str] = {}
    for page in corpus_of(corpus, seed).pages:
        for sentence in FINDING.findall(page.text):
            match = FACT_ID.match(sentence)
            if match is not None:
                facts[match.group(1)] = sentence[:-1]
    return facts


def facts_in(report: str, facts: dict[str, str]) -> int:
    """
    :param report: A report.
    :param facts: The corpus's findings (see :func:`corpus_facts`).
    :returns: How many different findings the report states word for word.
    """
    found = {fact_id for fact_id in FACT_ID.findall(report) if fact_id in facts}
    return sum(facts[fact_id] in report for fact_id in found)


def overlapping_groups(calls: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """
    Split calls into groups of calls that overlap in time: what a library sent side by side.

    :param calls: Call records.
    :returns: The groups, in time order.
    """
    groups: list[list[dict[str, Any]]] = []
    reach = float("-inf")
    for call in sorted(calls, key=lambda c: c["start"]):
        if groups and call["start"] < reach:
            groups[-1].append(call)
            reach = max(reach, call["end"])
        else:
            groups.append([call])
            reach = call["end"]
    return groups


def most_at_once(calls: list[dict[str, Any]]) -> int:
    """
    :param calls: Call records.
    :returns: The most of them in flight at the same moment (0 for none).
    """
    edges = sorted([(c["start"], 1) for c in calls] + [(c["end"], -1) for c in calls], key=lambda e: (e[0], e[1]))
    most = running = 0
    for _, step in edges:
        running += step
        most = max(most, running)
    return most


def critical_path_parts(llm: list[dict[str, Any]], concurrency: int) -> dict[str, float]:
    """
    The critical-path bound of a run's own LLM calls, by phase.

    :param llm: The LLM server's call records.
    :param concurrency: The most researchers allowed at once (the writer's calls share at least as many slots).
    :returns: Seconds of ``scope``, ``orchestrator``, ``research`` and ``writer``.
    """
    done = [c for c in llm if c["status"] == 200]
    parts = {role: sum(c["end"] - c["start"] for c in done if c["role"] == role) for role in SERIAL_ROLES}
    writer = [c for c in done if c["role"] == "writer"]
    turns: dict[str, float] = defaultdict(float)
    longest_summary: dict[str, float] = defaultdict(float)
    for call in done:
        if call["role"] == "researcher":
            turns[call["thread"]] += call["end"] - call["start"]
        elif call["role"] == "summarizer":
            thread = call["thread"]
            longest_summary[thread] = max(longest_summary[thread], call["end"] - call["start"])
    chains = [turns[t] + longest_summary[t] for t in set(turns) | set(longest_summary)]
    parts["research"] = shortest_schedule(chains, concurrency)
    slots = max(concurrency, most_at_once(writer))
    parts["writer"] = sum(
        shortest_schedule([c["end"] - c["start"] for c in group], slots) for group in overlapping_groups(writer)
    )
    return parts


def critical_path(llm: list[dict[str, Any]], concurrency: int) -> float:
    """
    The critical-path bound of a run's own LLM calls (the sum of :func:`critical_path_parts`).

    :param llm: The LLM server's call records.
    :param concurrency: The most researchers allowed at once.
    :returns: Seconds.
    """
    return sum(critical_path_parts(llm, concurrency).values())


def shortest_schedule(jobs: list[float], slots: int) -> float:
    """
    The shortest time in which ``jobs`` (durations) can all finish on ``slots`` parallel slots.

    Exact (a pruned search) for up to :data:`EXACT_SCHEDULE_LIMIT` jobs; beyond that a lower bound, the largest of
    the longest job, the total work over the slots, and the ``ceil(jobs / slots)`` shortest jobs together (some slot
    must run that many jobs one after another).

    :param jobs: Job durations.
    :param slots: Jobs allowed to run at once, 1 or more.
    :returns: Seconds.
    """
    ordered = sorted(jobs, reverse=True)
    width = min(max(1, slots), len(ordered))
    if not ordered:
        return 0.0
    if len(ordered) > EXACT_SCHEDULE_LIMIT:
        per_slot = -(-len(ordered) // width)
        return max(ordered[0], sum(ordered) / width, sum(ordered[-per_slot:]))
    best = sum(ordered)
    loads = [0.0] * width

    def place(index: int) -> None:
        nonlocal best
        if index == len(ordered):
            best = min(best, max(loads))
            return
        tried: set[float] = set()
        for slot in range(width):
            if loads[slot] in tried or loads[slot] + ordered[index] >= best:
                continue
            tried.add(loads[slot])
            loads[slot] += ordered[index]
            place(index + 1)
            loads[slot] -= ordered[index]

    place(0)
    return best


def _union_within(intervals: list[tuple[float, float]], start: float, end: float) -> float:
    clipped = sorted((max(a, start), min(b, end)) for a, b in intervals if b > start and a < end)
    total, cursor = 0.0, start
    for a, b in clipped:
        if b > cursor:
            total += b - max(a, cursor)
            cursor = b
    return total


def compute(record: dict[str, Any]) -> RunMetrics:
    """
    Compute the figures of one run record written by :func:`benchmarks.harness.orchestrate.run_one`.

    :param record: The run record.
    :returns: The figures.
    """
    result = record["result"]
    start, end = result["start"], result["end"]

    def in_run(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:  # drops warm-up runs' requests
        return [e for e in entries if e["start"] >= start - WINDOW_SLACK_S]

    llm, search, web = in_run(record["llm"]), in_run(record["search"]), in_run(record["web"])
    roles: dict[str, RoleUsage] = defaultdict(RoleUsage)
    for call in llm:
        usage = roles[call["role"]]
        if call["status"] == 200:
            usage.calls += 1
            usage.input_tokens += call["input_tokens"]
            usage.output_tokens += call["output_tokens"]
        elif call["status"] == 429:
            usage.throttled += 1
    abandoned = [c for c in llm if c["status"] == 499]
    retrieved = {normalize(w["url"]) for w in web if 0 < w["status"] < 400}
    retrieved |= {normalize(u) for s in search for u in s["returned"]}
    cited = {normalize(u) for u in urls_in(result["outcome"]["report"])}
    intervals = [(e["start"], e["end"]) for e in (*llm, *search, *web)]
    parts = critical_path_parts(llm, record["scenario"]["max_concurrent"])
    return RunMetrics(
        scenario=record["scenario"]["name"],
        library=record["library"],
        ok=bool(result["ok"]),
        error=str(result["error"]),
        wall_s=end - start,
        bound_s=sum(parts.values()),
        bound_parts=parts,
        roles=dict(roles),
        tool_calls=sum(len(c["tool_calls"]) for c in llm if c["status"] == 200),
        search_requests=len(search),
        web_requests=len(web),
        peak_rss_mb=float(result["peak_rss_mb"]),
        cpu_s=float(result["cpu_s"]),
        cited=len(cited),
        cited_retrieved=len(cited & retrieved),
        external_s=_union_within(intervals, start, end),
        exit_reason=str(result["outcome"].get("exit_reason") or ""),
        abandoned=len(abandoned),
        abandoned_tokens=sum(c["input_tokens"] + c["output_tokens"] for c in abandoned),
        facts=facts_in(
            result["outcome"]["report"],
            corpus_facts(int(record.get("seed", 7)), str(record["scenario"].get("corpus", "short"))),
        ),
        fallback_parts=sum(str(result["outcome"]["report"]).count(notice) for notice in FALLBACK_NOTICES),
    )
