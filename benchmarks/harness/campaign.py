"""A whole benchmark invocation: every library on every scenario, then the page and the pictures."""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from benchmarks import import_time
from benchmarks.harness import improvements, report, targets, venv
from benchmarks.harness.metrics import RunMetrics, compute
from benchmarks.harness.orchestrate import RunOptions, run_one
from benchmarks.harness.scenarios import HEADLINE, SCALE_SERIES, SCENARIOS, SHORT_SUITE, Scenario
from benchmarks.harness.spec import LIBRARY_NAMES
from benchmarks.sim.corpus import build_corpus
from benchmarks.sim.llm_server import LatencyModel, SimLLMServer
from benchmarks.sim.realsize import build_real_corpus

FLOOR_CALLS = 50

NOTES = (
    "The simulator never looks at which library is calling: roles are chosen by model name, tools are found by "
    "name and then by schema, and every decision depends only on what the request contains. The writer role "
    "answers a request for one section of a report with that section, and a request for a report's opening with "
    "its title and executive summary (told apart by what the system message asks for); any other writer request "
    "gets a whole report.",
    "Researchers read their top results with one read_url call per URL, all in one turn, for both libraries "
    "(`--read-batch` sends one call with every URL instead; the peer's read_url then summarizes only the first "
    "page it fetched).",
    "Both libraries get the same generator class, timeout and retry count (60 s and 5 unless the scenario says "
    "otherwise), and 5 search results per query; every other setting is each library's default.",
    "The peer's Tavily tool has no base-URL option, so its search component is handed a `TavilyClient` pointed "
    "at the loopback search server before the run (the tool only builds its own client when it has none).",
    "GPT Researcher (in its own environment, Python 3.12) is set up through its environment variables: its "
    "`custom` retriever asks the loopback search server (`GET /search`, which answers the same ranked hits as a "
    "list of URLs), its own `bs` scraper (PyMuPDF for PDF) reads the loopback web with `ALLOW_PRIVATE_URLS=true` "
    "(its URL guard refuses 127.0.0.1 otherwise), and its LLMs are the simulated roles priced as its own defaults: "
    "strategic LLM (planning the sub-queries) as the orchestrator and smart LLM (choosing its agent, writing the "
    "report) as the writer, both `gpt-5.4`; fast LLM as the summarizer, `gpt-5.4-mini` (a `research_report` run "
    "does not call it). The simulated writer states every whole finding in the passages GPT Researcher hands it, "
    "cited to the `Source:` above each passage; a finding that its 1,000-character chunks cut in two, or that "
    "a line break of its PDF text splits, is not stated: the simulator reads every library's text by the same "
    "rule. `MAX_ITERATIONS` (its "
    "number of sub-queries) is the scenario's number of sub-questions, `LLM_KWARGS` carries the same timeout and "
    "retries; every other setting is its default (`research_report`, keyword context filter).",
    "Each library and scenario runs in a fresh world (new servers, same corpus and seed) and a fresh interpreter.",
)


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _version_in(python: str | None, dist: str) -> str:
    """``dist``'s version in another interpreter's environment (GPT Researcher's has its own)."""
    if python is None or not Path(python).exists():
        return "not run"
    probe = "import sys; from importlib import metadata; print(metadata.version(sys.argv[1]))"
    proc = subprocess.run([python, "-c", probe, dist], capture_output=True, text=True, timeout=60, check=False)
    return proc.stdout.strip() or "not installed"


def measure_floor(python: str, api: str) -> dict[str, float]:
    """The shared stack's cost of one generator call at latency 0 (see :mod:`benchmarks.harness.floor`)."""
    from benchmarks.harness.orchestrate import ROOT, child_env

    with SimLLMServer() as server:
        command = [python, "-m", "benchmarks.harness.floor", server.api_url, api, str(FLOOR_CALLS)]
        proc = subprocess.run(
            command, cwd=ROOT, env=child_env(), capture_output=True, text=True, timeout=120, check=False
        )
    try:
        return dict(json.loads(proc.stdout.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        return {}


def _median_run(pairs: list[tuple[dict[str, Any], RunMetrics]]) -> tuple[dict[str, Any], RunMetrics]:
    ordered = sorted(pairs, key=lambda p: p[1].wall_s)
    return ordered[(len(ordered) - 1) // 2]


def _option(text: str) -> tuple[str, Any]:
    """``name=value`` with the value read as JSON (a bare word stays a string)."""
    name, _, raw = text.partition("=")
    try:
        return name.strip(), json.loads(raw)
    except ValueError:
        return name.strip(), raw


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


class Campaign:
    """Runs, measures and reports."""

    def __init__(self, args: argparse.Namespace, *, command: str) -> None:
        self.args = args
        self.command = command.strip()
        self.scenarios = [SCENARIOS[n] for n in _names(args.scenarios)]
        self.overhead_scenarios = [SCENARIOS[n] for n in _names(args.overhead_scenario)]
        self.libraries = _names(args.libraries)
        self.notes = list(NOTES)
        self.pythons = self._interpreters()
        self.records: dict[tuple[str, str], dict[str, Any]] = {}
        self.metrics: dict[tuple[str, str], RunMetrics] = {}
        self.overhead: dict[tuple[str, str], RunMetrics] = {}
        self.floor: dict[str, float] = {}
        self.counts: dict[str, int] = {}
        self.imports: dict[str, float] = {}
        self.ours_src = Path(args.ours_src).resolve() if args.ours_src else None

    def _interpreters(self) -> dict[str, str]:
        found = {"ours": sys.executable}
        if "peer" in self.libraries:
            for candidate in (sys.executable, str(venv.python_path())):
                if Path(candidate).exists() and venv.has_modules(candidate, ("haystack_integrations.agent_pack",)):
                    found["peer"] = candidate
                    break
            else:
                self.notes.append("agent-pack-haystack is not importable here, so the peer was not run.")
        if "gptr" in self.libraries and not self.args.from_logs:
            gptr = venv.ensure_gptr()
            if gptr is None:
                self.notes.append(
                    "GPT Researcher was not run: it needs Python 3.12 or later to build its environment, and none was "
                    f"found (set {venv.GPTR_PYTHON_VARIABLE} to one)."
                )
            else:
                found["gptr"] = str(gptr)
        elif "gptr" in self.libraries:
            found["gptr"] = str(venv.python_path(venv.GPTR_VENV))
        return {lib: py for lib, py in found.items() if lib in self.libraries}

    def _options(self, latency: LatencyModel, warmup: int) -> RunOptions:
        return RunOptions(
            warmup_runs=warmup,
            latency=latency,
            work_dir=self.args.work_dir,
            api=self.args.api,
            read_batch=self.args.read_batch,
            seed=self.args.seed,
            timeout_s=self.args.timeout,
            ours_src=self.ours_src,
            ours_options=tuple(_option(text) for text in self.args.ours_option),
        )

    def _measure(
        self, scenario: Scenario, library: str, latency: LatencyModel, tag: str, warmup: int = 0
    ) -> tuple[dict, RunMetrics]:
        pairs = []
        for i in range(max(1, self.args.repeat)):
            if self.args.from_logs:
                saved = self.args.work_dir / "runs" / f"{scenario.name}-{library}{tag}-{i + 1}.json"
                if not saved.exists():
                    continue
                record = json.loads(saved.read_text())
            else:
                options = self._options(latency, warmup)
                record = run_one(scenario, library, self.pythons[library], options, f"{tag}-{i + 1}")
            metrics = compute(record)
            status = (
                "ok" if metrics.ok else "FAILED: " + metrics.error.splitlines()[0][:120] if metrics.error else "FAILED"
            )
            print(
                f"  {scenario.name:14} {LIBRARY_NAMES[library]:24} run {i + 1}: wall {metrics.wall_s:7.2f} s, "
                f"bound {metrics.bound_s:6.2f} s, {metrics.input_tokens:7,} in / {metrics.output_tokens:6,} out "
                f"tokens, facts {metrics.facts}, precision {metrics.precision:.2f}, exit {metrics.exit_reason}  "
                f"[{status}]",
                flush=True,
            )
            pairs.append((record, metrics))
        self.counts[scenario.name + tag] = min(self.counts.get(scenario.name + tag, len(pairs)), len(pairs))
        if not pairs:
            raise SystemExit(f"no saved log for {scenario.name} / {library} under {self.args.work_dir / 'runs'}")
        return _median_run(pairs)

    def run(self) -> int:
        """Run everything and write the outputs; returns the process exit code."""
        latency = LatencyModel(self.args.ttft, self.args.tps)
        print(f"Benchmark: {len(self.scenarios)} scenarios x {list(self.pythons)}, latency {latency}", flush=True)
        for scenario in self.scenarios:
            for library in self.pythons:
                if self._unlogged(scenario.name, library, ""):
                    continue  # GPT Researcher runs only where its figures are shown (the real-size scenarios)
                record, metrics = self._measure(scenario, library, latency, "")
                self.records[scenario.name, library] = record
                self.metrics[scenario.name, library] = metrics
        for zero in self.overhead_scenarios:
            for library in self.pythons:
                if self._unlogged(zero.name, library, "-latency0"):
                    continue
                measured = self._measure(zero, library, LatencyModel(0.0, 0.0), "-latency0", warmup=1)[1]
                self.overhead[zero.name, library] = measured
        self._side_figures()
        if self.records and self.args.from_logs:
            latency = LatencyModel(**next(iter(self.records.values()))["latency"])
        self._write(latency)
        failed = [m for m in [*self.metrics.values(), *self.overhead.values()] if not m.ok]
        return 1 if failed else 0

    def _unlogged(self, scenario: str, library: str, tag: str) -> bool:
        """Whether ``--from-logs`` finds no saved run of GPT Researcher here: it is run only where its figures are shown
        (the real-size and short scenarios), so the others are left out for it alone."""
        saved = (self.args.work_dir / "runs").glob(f"{scenario}-{library}{tag}-[0-9]*.json")
        return self.args.from_logs and library == "gptr" and not any(saved)

    def _runs_line(self) -> str:
        """How many runs each scenario's figures are the median of (fewer than asked where logs were missing)."""
        asked = max(1, self.args.repeat)
        fewer = [f"`{name}` {count}" for name, count in self.counts.items() if count < asked]
        return f"{asked} (median wall shown)" + (f"; fewer for {', '.join(fewer)}" if fewer else "")

    def _side_figures(self) -> None:
        """The bare generator call's cost and the import time: measured now, or read back with --from-logs."""
        runs = self.args.work_dir / "runs"
        runs.mkdir(parents=True, exist_ok=True)
        if self.args.from_logs:
            for name, target in (("floor.json", self.floor), ("import_time.json", self.imports)):
                if (runs / name).exists():
                    target.update(json.loads((runs / name).read_text()))
            return
        if self.overhead_scenarios:
            self.floor = measure_floor(self.pythons.get("ours", sys.executable), self.args.api)
            (runs / "floor.json").write_text(json.dumps(self.floor))
        if "ours" in self.pythons:
            self.imports = import_time.measure(self.pythons["ours"], library_path=self.ours_src)
            (runs / "import_time.json").write_text(json.dumps(self.imports))

    def _verdicts(self) -> list[targets.Verdict]:
        verdicts = []
        for scenario in self.scenarios:
            ours = self.metrics.get((scenario.name, "ours"))
            if ours is not None:
                peer = self.metrics.get((scenario.name, "peer"))
                verdicts += targets.check(ours, peer, headline=scenario.name == HEADLINE)
                if scenario.name in SHORT_SUITE:
                    verdicts += targets.check_reference(ours, peer)
        verdicts += targets.check_scale(self.metrics, SCALE_SERIES)
        for zero in self.overhead_scenarios:
            ours = self.overhead.get((zero.name, "ours"))
            if ours is not None:
                verdicts += targets.check_overhead(ours, self.overhead.get((zero.name, "peer")))
        return verdicts

    def now_figures(self) -> dict[str, dict[str, dict[str, float]]]:
        """This run's figures for the Improvements section and for a saved baseline."""
        found: dict[str, dict[str, dict[str, float]]] = {}
        for (scenario, library), run in self.metrics.items():
            found.setdefault(scenario, {})[library] = improvements.figures(run, self.overhead.get((scenario, library)))
        for (scenario, library), zero in self.overhead.items():
            if (scenario, library) not in self.metrics:
                found.setdefault(scenario, {})[library] = improvements.figures(None, zero)
        return found

    def _improvements(self, verdicts: list[targets.Verdict]) -> list[str]:
        path = self.args.baseline
        baseline = improvements.Baseline.load(Path(path)) if path else None
        if baseline is None:
            return []
        missed = [f"{v.target} on `{v.scenario}`: {v.value}. {v.reason}." for v in verdicts if not v.met]
        return improvements.render(baseline, self.now_figures(), missed)

    def _write(self, latency: LatencyModel) -> None:
        png_rel = os.path.relpath(self.args.png, self.args.doc.parent)
        timeline_records = [self.records[k] for k in self.records if k[0] == self.args.timeline_scenario]
        if timeline_records:
            from benchmarks.harness.timeline import draw

            caption = f"{self.args.timeline_scenario}: {SCENARIOS[self.args.timeline_scenario].title}"
            draw(timeline_records, self.args.png, caption)
        if self.args.save_baseline:
            improvements.Baseline(self.args.baseline_description, self.now_figures()).save(self.args.save_baseline)
            print(f"Wrote {self.args.save_baseline}", flush=True)
        before = self.args.timeline_before
        corpus = build_corpus(seed=self.args.seed)
        pdfs = sum(p.kind == "pdf" for p in corpus.pages)
        real = build_real_corpus(seed=self.args.seed)
        verdicts = self._verdicts()
        data = report.ReportInput(
            command=self.command,
            environment={
                "Python": platform.python_version(),
                "haystack-ai": _version("haystack-ai"),
                "openai": _version("openai"),
                "tavily-python": _version("tavily-python"),
                "haystack-deep-research": _version("haystack-deep-research"),
                "agent-pack-haystack": _version("agent-pack-haystack"),
                "gpt-researcher": _version_in(self.pythons.get("gptr"), "gpt-researcher"),
                "CPU cores": str(os.cpu_count()),
            },
            settings={
                "model latency": latency.describe() + " (a scenario may set its own output rate and prompt reading)",
                "OpenAI API": self.args.api,
                "corpus": f"{len(corpus.pages)} pages ({pdfs} PDF), seed {self.args.seed}",
                "real-size corpus": f"{len(real.pages)} pages ({sum(p.kind == 'pdf' for p in real.pages)} PDF), "
                "8-20 KB of article text inside 30-40 KB of site furniture",
                "runs per library and scenario": self._runs_line(),
            },
            scenarios=self.scenarios,
            runs=self.metrics,
            overhead=self.overhead,
            floor=self.floor,
            imports=self.imports,
            verdicts=verdicts,
            timeline=png_rel,
            timeline_before=os.path.relpath(before, self.args.doc.parent) if before and Path(before).exists() else "",
            timeline_scenario=self.args.timeline_scenario,
            notes=self.notes,
            improvements=self._improvements(verdicts),
        )
        report.write(data, self.args.doc)
        print(f"Wrote {self.args.doc} and {self.args.png}", flush=True)
