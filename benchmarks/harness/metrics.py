"""
The figures of one run, computed from the child's measurements and the three servers' logs.

- critical-path bound: the sum of the scope, orchestrator and writer calls, plus the researcher phase: the shortest
  schedule of the researcher chains (each chain is a researcher's own turns plus its longest page summary) on the
  scenario's number of concurrent researchers. Only calls answered 200 count.
- citation precision: cited URLs (links and bare URLs in the report, unique) that were retrieved in this run
  (fetched from the web server, or returned by the search server) over all cited URLs.
- overhead per step: wall time not covered by any server handling a request, over the number of LLM calls.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from benchmarks.sim.prose import urls_in

SERIAL_ROLES = ("scope", "orchestrator", "writer")
WINDOW_SLACK_S = 0.001
EXACT_SCHEDULE_LIMIT = 10


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


def critical_path(llm: list[dict[str, Any]], concurrency: int) -> float:
    """
    The critical-path bound of a run's own LLM calls.

    :param llm: The LLM server's call records.
    :param concurrency: The most researchers allowed at once.
    :returns: Seconds.
    """
    done = [c for c in llm if c["status"] == 200]
    serial = sum(c["end"] - c["start"] for c in done if c["role"] in SERIAL_ROLES)
    turns: dict[str, float] = defaultdict(float)
    longest_summary: dict[str, float] = defaultdict(float)
    for call in done:
        if call["role"] == "researcher":
            turns[call["thread"]] += call["end"] - call["start"]
        elif call["role"] == "summarizer":
            thread = call["thread"]
            longest_summary[thread] = max(longest_summary[thread], call["end"] - call["start"])
    chains = [turns[t] + longest_summary[t] for t in set(turns) | set(longest_summary)]
    return serial + shortest_schedule(chains, concurrency)


def shortest_schedule(jobs: list[float], slots: int) -> float:
    """
    The shortest time in which ``jobs`` (durations) can all finish on ``slots`` parallel slots.

    Exact (a pruned search) for up to :data:`EXACT_SCHEDULE_LIMIT` jobs; beyond that the classic lower bound, the
    larger of the longest job and the total work over the slots.

    :param jobs: Job durations.
    :param slots: Jobs allowed to run at once, 1 or more.
    :returns: Seconds.
    """
    ordered = sorted(jobs, reverse=True)
    width = min(max(1, slots), len(ordered))
    if not ordered:
        return 0.0
    if len(ordered) > EXACT_SCHEDULE_LIMIT:
        return max(ordered[0], sum(ordered) / width)
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
    retrieved = {normalize(w["url"]) for w in web if 0 < w["status"] < 400}
    retrieved |= {normalize(u) for s in search for u in s["returned"]}
    cited = {normalize(u) for u in urls_in(result["outcome"]["report"])}
    intervals = [(e["start"], e["end"]) for e in (*llm, *search, *web)]
    return RunMetrics(
        scenario=record["scenario"]["name"],
        library=record["library"],
        ok=bool(result["ok"]),
        error=str(result["error"]),
        wall_s=end - start,
        bound_s=critical_path(llm, record["scenario"]["max_concurrent"]),
        roles=dict(roles),
        tool_calls=sum(len(c["tool_calls"]) for c in llm if c["status"] == 200),
        search_requests=len(search),
        web_requests=len(web),
        peak_rss_mb=float(result["peak_rss_mb"]),
        cpu_s=float(result["cpu_s"]),
        cited=len(cited),
        cited_retrieved=len(cited & retrieved),
        external_s=_union_within(intervals, start, end),
    )
