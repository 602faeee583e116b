"""Write docs/benchmarks.md from the figures of every run."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.harness.dollars import PRICES_AS_OF, ROLE_MODELS, role_cost, run_cost
from benchmarks.harness.metrics import RunMetrics
from benchmarks.harness.scenarios import SCALE_SERIES, SCENARIOS, Scenario
from benchmarks.harness.sections import kept_sections
from benchmarks.harness.spec import LIBRARIES, LIBRARY_NAMES
from benchmarks.harness.targets import Verdict

ROLE_ORDER = ("scope", "orchestrator", "researcher", "summarizer", "writer")


@dataclass(frozen=True)
class ReportInput:
    """Everything the page shows."""

    command: str
    environment: dict[str, str]
    settings: dict[str, str]
    scenarios: Sequence[Scenario]
    runs: dict[tuple[str, str], RunMetrics]
    overhead: dict[tuple[str, str], RunMetrics]
    floor: dict[str, float]
    verdicts: Sequence[Verdict]
    timeline: str
    timeline_scenario: str
    notes: Sequence[str]
    improvements: Sequence[str] = ()
    imports: dict[str, float] | None = None
    timeline_before: str = ""


def _fmt(value: float, digits: int = 2) -> str:
    return "n/a" if math.isnan(value) else f"{value:,.{digits}f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _metric_rows(cols: Sequence[RunMetrics | None]) -> list[list[str]]:
    def row(label: str, get: object) -> list[str]:
        return [label, *("—" if m is None else get(m) for m in cols)]  # type: ignore[operator]

    return [
        row("completed", lambda m: "yes" if m.ok else f"no: {m.error.splitlines()[0][:80] if m.error else ''}"),
        row("wall time (s)", lambda m: _fmt(m.wall_s)),
        row("critical-path bound (s)", lambda m: _fmt(m.bound_s)),
        row("wall / bound", lambda m: _fmt(m.ratio)),
        row("exit reason", lambda m: m.exit_reason or "—"),
        row("LLM calls (answered)", lambda m: str(m.llm_calls)),
        row("LLM requests answered 429", lambda m: str(sum(r.throttled for r in m.roles.values()))),
        row("LLM requests abandoned (timeouts) / their tokens", lambda m: f"{m.abandoned} / {m.abandoned_tokens:,}"),
        row("input tokens", lambda m: f"{m.input_tokens:,}"),
        row("output tokens", lambda m: f"{m.output_tokens:,}"),
        row("cost at the default models (US$)", lambda m: f"{run_cost(m):.4f}"),
        row("tool calls (made by the models)", lambda m: str(m.tool_calls)),
        row("search requests / page fetches", lambda m: f"{m.search_requests} / {m.web_requests}"),
        row("peak RSS (MiB)", lambda m: _fmt(m.peak_rss_mb, 0)),
        row("citation precision", lambda m: f"{_fmt(m.precision)} ({m.cited_retrieved}/{m.cited})"),
        row("corpus facts stated in the report", lambda m: str(m.facts)),
    ]


def _scale_section(data: ReportInput, libs: Sequence[str]) -> list[str]:
    names = [n for n in SCALE_SERIES if (n, "ours") in data.runs]
    if len(names) < 2:
        return []

    def pair(get: object, name: str, source: dict, digits: int = 2) -> str:
        cells = []
        for lib in libs:
            m = source.get((name, lib))
            cells.append("—" if m is None else _fmt(get(m), digits))  # type: ignore[operator]
        return " / ".join(cells)

    rows = []
    for name in names:
        scenario = SCENARIOS[name]
        rows.append(
            [
                f"`{name}`",
                f"{scenario.subtopics} @ {scenario.max_concurrent}",
                pair(lambda m: m.wall_s, name, data.runs),
                pair(lambda m: m.ratio, name, data.runs),
                pair(lambda m: m.overhead_ms_per_step, name, data.overhead),
                pair(lambda m: m.cpu_ms_per_step, name, data.overhead),
                pair(lambda m: m.peak_rss_mb, name, data.runs, 0),
                pair(lambda m: float(m.input_tokens), name, data.runs, 0),
            ]
        )
    out = [
        "## Scale",
        "",
        "The same world with ever more sub-questions (prompt reading modelled). Each cell is "
        + " / ".join(LIBRARY_NAMES[lib] for lib in libs)
        + ". Overhead and CPU per step come from the same scenario run again at model latency 0 on a warm agent.",
        "",
    ]
    out += _table(
        [
            "scenario",
            "sub-questions @ concurrency",
            "wall (s)",
            "wall / own critical path",
            "overhead per step (ms)",
            "CPU per step (ms)",
            "peak RSS (MiB)",
            "input tokens",
        ],
        rows,
    )
    first, last = names[0], names[-1]
    growth = []
    for lib, label in ((lib, LIBRARY_NAMES[lib]) for lib in libs):
        a, b = data.runs.get((first, lib)), data.runs.get((last, lib))
        za, zb = data.overhead.get((first, lib)), data.overhead.get((last, lib))
        if a is None or b is None:
            continue
        text = (
            f"{label}: from `{first}` to `{last}` wall / critical path goes {a.ratio:.2f} → {b.ratio:.2f}, "
            f"peak RSS {a.peak_rss_mb:.0f} → {b.peak_rss_mb:.0f} MiB ({b.peak_rss_mb - a.peak_rss_mb:+.0f})"
        )
        if za is not None and zb is not None:
            text += (
                f", overhead per step {za.overhead_ms_per_step:.2f} → {zb.overhead_ms_per_step:.2f} ms "
                f"(x{zb.overhead_ms_per_step / za.overhead_ms_per_step:.2f})"
                if za.overhead_ms_per_step
                else ""
            )
        growth.append(f"- {text}.")
    return [*out, "", "How each grows:", "", *growth, ""]


def _cost_section(data: ReportInput, libs: Sequence[str], names: Sequence[str]) -> list[str]:
    """One row per scenario: each library's cost at the default models, and ours over the peer's."""
    rows = []
    for scenario in data.scenarios:
        cols = [data.runs.get((scenario.name, lib)) for lib in libs]
        costs = [None if m is None else run_cost(m) for m in cols]
        ratio = f"{costs[0] / costs[1]:.2f}x" if costs[0] is not None and costs[1] else "—"
        rows.append([scenario.name, *("—" if c is None else f"${c:.4f}" for c in costs), ratio])
    return [
        "",
        "## Cost at the default models",
        "",
        "What each run's answered calls would cost in US dollars at the models the library defaults to (see How each "
        "figure is computed); the tables by scenario below split it by role.",
        "",
        *_table(["scenario", *names, "ratio" if len(names) == 2 else f"ratio ({names[0]} / {names[1]})"], rows),
    ]


def facts_per_dollar(m: RunMetrics) -> float:
    """
    :param m: One run's figures.
    :returns: Corpus facts stated in its report per US dollar at the default models (NaN for a run that cost nothing).
    """
    cost = run_cost(m)
    return m.facts / cost if cost > 0 else float("nan")


def _ahead_on_facts_per_dollar(runs: dict[str, RunMetrics]) -> str:
    """Whether ours states more facts per dollar than every other library, at citation precision 1.00."""
    ours = runs.get("ours")
    others = {lib: m for lib, m in runs.items() if lib != "ours"}
    if ours is None or not others:
        return "not measured: it needs haystack-deep-research and at least one other library"
    missed = []
    if not (ours.ok and ours.precision == 1.0):
        missed.append(f"haystack-deep-research's citation precision is {_fmt(ours.precision)}")
    for lib, m in others.items():
        if not m.ok:
            missed.append(f"{LIBRARY_NAMES[lib]} did not complete")
        elif not facts_per_dollar(ours) > facts_per_dollar(m):
            missed.append(f"{LIBRARY_NAMES[lib]} states {_fmt(facts_per_dollar(m), 0)} facts per dollar")
    if missed:
        return "not met: " + "; ".join(missed)
    return "met"


def _facts_per_dollar_section(data: ReportInput, libs: Sequence[str]) -> list[str]:
    """Facts, cost, facts per dollar, citation precision and wall of every library on the real-size scenarios."""
    real = [sc for sc in data.scenarios if sc.corpus == "real-size" and (sc.name, "ours") in data.runs]
    if not real:
        return []
    out = [
        "",
        "## Facts per dollar on real-size pages",
        "",
        "Corpus facts stated in the report for each US dollar its answered calls would cost at the default models, "
        "with the figures it comes from. The target: haystack-deep-research ahead of every other library on facts "
        "per dollar, at citation precision 1.00.",
    ]
    for scenario in real:
        runs = {lib: m for lib in libs if (m := data.runs.get((scenario.name, lib))) is not None}
        rows = [
            [
                LIBRARY_NAMES[lib],
                "yes" if m.ok else "no",
                str(m.facts),
                f"${run_cost(m):.4f}",
                _fmt(facts_per_dollar(m), 0),
                f"{_fmt(m.precision)} ({m.cited_retrieved}/{m.cited})",
                _fmt(m.wall_s),
            ]
            for lib, m in runs.items()
        ]
        out += ["", f"### {scenario.name}: {scenario.title}", ""]
        out += _table(
            ["library", "completed", "facts", "cost (US$)", "facts per dollar", "citation precision", "wall (s)"], rows
        )
        line = ", ".join(f"{LIBRARY_NAMES[lib]} {_fmt(facts_per_dollar(m), 0)}" for lib, m in runs.items())
        out += ["", f"Facts per dollar on `{scenario.name}`: {line}. Target {_ahead_on_facts_per_dollar(runs)}."]
    return out


def _role_rows(cols: Sequence[RunMetrics | None]) -> list[list[str]]:
    rows = []
    for role in ROLE_ORDER:
        cells = [role]
        for m in cols:
            usage = m.roles.get(role) if m is not None else None
            cells.append(
                "—"
                if usage is None
                else f"{usage.calls} / {usage.input_tokens:,} / {usage.output_tokens:,} / ${role_cost(role, usage):.4f}"
            )
        rows.append(cells)
    return rows


def render(data: ReportInput) -> str:
    """The Markdown page."""
    ran = {lib for _, lib in [*data.runs, *data.overhead]}
    libs = ("ours", "peer", *(lib for lib in LIBRARIES[2:] if lib in ran))  # a third library only where it ran
    names = [LIBRARY_NAMES[lib] for lib in libs]
    out = ["# Benchmarks", "", "<!-- Generated by benchmarks/run.py; edit the generator, not this file. -->", ""]
    out += [
        "What a research report costs, how long it takes and whether its citations hold, for haystack-deep-research "
        "and the closest peer, agent-pack-haystack, run side by side in the same simulated world: an "
        "OpenAI-compatible LLM server whose deterministic role policies make the same decisions for both libraries, "
        "a Tavily-compatible search server and a web server with a generated corpus (HTML and PDF pages), all on "
        "127.0.0.1. Both libraries use their real HTTP clients (the `openai` client through Haystack's chat "
        "generators, `tavily-python`), so retries, timeouts and parsing are part of what is measured.",
        "",
        "## Targets",
        "",
    ]
    out += _table(
        ["target", "scenario", "haystack-deep-research", "met", "reason if missed"],
        [[v.target, v.scenario, v.value, "yes" if v.met else "no", v.reason] for v in data.verdicts],
    )
    out += ["", *data.improvements] if data.improvements else []
    out += _cost_section(data, libs, names)
    out += _facts_per_dollar_section(data, libs)
    out += ["", "## Results by scenario", ""]
    for scenario in data.scenarios:
        cols = [data.runs.get((scenario.name, lib)) for lib in libs]
        out += [f"### {scenario.name}: {scenario.title}", ""]
        out += _table(["", *names], _metric_rows(cols))
        out += ["", "LLM calls / input tokens / output tokens / cost in US$ by role (the phase it runs in):", ""]
        out += _table(["role", *names], _role_rows(cols))
        out.append("")
    out += _scale_section(data, libs)
    out += [
        "## Library overhead (model latency 0)",
        "",
        "Measured on a warm agent: the same agent object runs the question once unmeasured, then once measured, so "
        "one-time set-up (HTTP clients, lazy imports) is left out. The scenario runs above are cold: their wall "
        "time includes that set-up.",
        "",
    ]
    zero_names = list(dict.fromkeys(name for name, _ in data.overhead))
    cols = [data.overhead.get((n, lib)) for n in zero_names for lib in libs]
    out += _table(
        ["", *(f"`{n}`, {LIBRARY_NAMES[lib]}" for n in zero_names for lib in libs)],
        [
            ["wall time (s)", *("—" if m is None else _fmt(m.wall_s, 3) for m in cols)],
            ["time inside the servers (s)", *("—" if m is None else _fmt(m.external_s, 3) for m in cols)],
            ["LLM calls (agent steps)", *("—" if m is None else str(m.llm_calls) for m in cols)],
            ["overhead per step (ms)", *("—" if m is None else _fmt(m.overhead_ms_per_step) for m in cols)],
            ["CPU per step (ms)", *("—" if m is None else _fmt(m.cpu_ms_per_step) for m in cols)],
        ],
    )
    if data.floor:
        out += [
            "",
            "For scale, one bare Haystack chat-generator call (a researcher-sized request with three tools) through "
            f"the `openai` client to the same server costs {data.floor['wall_ms_per_call']:.1f} ms of wall time and "
            f"{data.floor['cpu_ms_per_call']:.1f} ms of CPU, averaged over {data.floor['calls']:.0f} warm calls: a "
            "floor under any library's per-step overhead on this machine.",
        ]
    if data.imports:
        extra = data.imports["library_s"]
        verdict = "within" if extra <= 0.25 else "not within"
        out += [
            "",
            "## Import time",
            "",
            f"`import haystack_deep_research` takes {extra:.3f} s on top of `import haystack` "
            f"({data.imports['haystack_s']:.3f} s), "
            f"median of {data.imports['runs']:.0f} fresh interpreters (`python benchmarks/import_time.py`): {verdict} "
            "the 0.25 s target.",
        ]
    out += ["", "## Timeline", ""]
    if data.timeline_before:
        out += [
            f"Scenario `{data.timeline_scenario}`, one row per agent. Before (the earlier code, the same scenario):",
            "",
            f"![timeline before]({data.timeline_before})",
            "",
            "After (this run, with the peer below):",
        ]
    else:
        out.append(f"Scenario `{data.timeline_scenario}`, one row per agent:")
    out += ["", f"![timeline]({data.timeline})", ""]
    out += ["## Setup", ""]
    out += [f"- {k}: {v}" for k, v in {**data.environment, **data.settings}.items()]
    out += ["", "## How each figure is computed", ""]
    out += [
        "- **wall time**: `time.monotonic()` around `agent.run(...)` in a fresh subprocess per library and "
        "scenario; imports and agent construction are excluded.",
        "- **critical-path bound**: from the LLM server's log of this run: scope + orchestrator turns, plus "
        "the researcher phase, which is the shortest schedule of the researcher chains (each chain is one "
        "researcher's turns plus its longest page summary) on the scenario's number of concurrent researchers, plus "
        "the writer phase: the writer's calls split into groups of calls that overlapped in time (what the library "
        "sent side by side; one call is a group of one), each group counting the shortest schedule of its calls on "
        "the same number of slots. Only calls answered 200 count, so time lost to 429 back-off or to abandoned "
        "requests shows up as wall / bound above 1.",
        "- **model latency**: every reply waits the time to first token, plus, where a scenario models prompt "
        "reading, one second per 8,000 input tokens, plus its output tokens at the output rate.",
        "- **tokens**: counted by the simulator with one rule for every request: a quarter of the characters of "
        "every message, tool call, tool result and tool schema sent (plus 4 per message), and of every reply.",
        "- **cost**: each role's input and output tokens priced at the model the library defaults to for it ("
        + ", ".join(f"{role}: `{model}`" for role, model in ROLE_MODELS.items())
        + "), with the library's own price table (`DEFAULT_PRICES` in `settings/grouped.py`, "
        f"read {PRICES_AS_OF}); every input token at the uncached price, for every library alike."
        + (
            " GPT Researcher's LLMs run as roles: its strategic LLM as the orchestrator and its smart LLM as the "
            "writer (its defaults for both: `gpt-5.4`), its fast LLM as the summarizer (its default: `gpt-5.4-mini`), "
            "so its calls are priced at its own default models too."
            if "gptr" in libs
            else ""
        ),
        "- **tool calls**: tool calls in the models' replies; search requests and page fetches are counted at the "
        "servers.",
        "- **peak RSS**: `ru_maxrss` of the subprocess that ran the library (includes the interpreter and imports).",
        "- **citation precision**: unique URLs cited in the report (Markdown links and bare URLs) that were "
        "retrieved in the run (fetched from the web server or returned by the search server), over all unique "
        "cited URLs.",
        "- **corpus facts stated in the report**: the corpus's numbered findings (each page states its own, such as "
        "`Finding RHP-2-3-1: ...`) that the report repeats word for word, each counted once: what survived from "
        "page to summary to note to report.",
        "- **abandoned requests**: requests whose client hung up before the reply was sent (a client timeout), "
        "with the tokens the simulator had billed for them; they are not in the token totals above.",
        "- **overhead per step**: at model latency 0, wall time not covered by any server handling a request, "
        "divided by the number of LLM calls; CPU per step is the process's user + system time over the same calls.",
        "",
        "## Reproduce",
        "",
        "```",
        data.command,
        "```",
        "",
        "`benchmarks/run.py --help` lists the options (scenarios, latency, repeats, API flavour, output paths). The "
        "first run creates a virtual environment under `benchmarks/.work/` (git-ignored) from "
        "`benchmarks/requirements.txt` and this repository; the peer is installed only there. GPT Researcher gets a "
        "virtual environment of its own, `benchmarks/.work/gptr-venv`, from `benchmarks/requirements-gptr.txt`, built "
        "with the first Python 3.12 or later found (`$HDR_GPTR_PYTHON`, then `python3.13`, `python3.12`, `python3`, "
        "then pyenv's); "
        "without one it is left out and the notes say so. Raw logs of every run "
        "(the LLM server's call log, the search and web servers' request logs, the subprocess's measurements) are "
        "written to `benchmarks/.work/runs/`.",
        "",
        "## Notes",
        "",
    ]
    out += [f"- {n}" for n in data.notes]
    return "\n".join(out) + "\n"


def write(data: ReportInput, path: Path) -> None:
    """Write the page to ``path``, keeping the sections other generators wrote there (see :mod:`.sections`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    kept = kept_sections(path.read_text(encoding="utf-8")) if path.exists() else []
    path.write_text(render(data) + "".join(f"\n{section}\n" for section in kept), encoding="utf-8")
