"""A whole benchmark invocation: every library on every scenario, then the page and the picture."""

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

from benchmarks.harness import improvements, report, targets, venv
from benchmarks.harness.metrics import RunMetrics, compute
from benchmarks.harness.orchestrate import RunOptions, run_one
from benchmarks.harness.scenarios import SCENARIOS, Scenario
from benchmarks.harness.spec import LIBRARY_NAMES
from benchmarks.sim.corpus import build_corpus
from benchmarks.sim.llm_server import LatencyModel, SimLLMServer

FLOOR_CALLS = 50

NOTES = (
    "The simulator never looks at which library is calling: roles are chosen by model name, tools are found by "
    "name and then by schema, and every decision depends only on what the request contains.",
    "Researchers read their top results with one read_url call per URL, all in one turn, for both libraries "
    "(`--read-batch` sends one call with every URL instead; the peer's read_url then summarizes only the first "
    "page it fetched).",
    "Both libraries get the same generator class, timeout (60 s) and retry count (5), and 5 search results per "
    "query; every other setting is each library's default.",
    "The peer's Tavily tool has no base-URL option, so its search component is handed a `TavilyClient` pointed "
    "at the loopback search server before the run (the tool only builds its own client when it has none).",
    "Each library and scenario runs in a fresh world (new servers, same corpus and seed) and a fresh interpreter.",
)


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def measure_floor(python: str, api: str) -> dict[str, float]:
    """The shared stack's cost of one generator call at latency 0 (see :mod:`benchmarks.harness.floor`)."""
    from benchmarks.harness.orchestrate import ROOT, child_env

    with SimLLMServer() as server:
        command = [python, "-m", "benchmarks.harness.floor", server.base_url, api, str(FLOOR_CALLS)]
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


class Campaign:
    """Runs, measures and reports."""

    def __init__(self, args: argparse.Namespace, *, command: str) -> None:
        self.args = args
        self.command = command.strip()
        self.scenarios = [SCENARIOS[n.strip()] for n in args.scenarios.split(",") if n.strip()]
        self.libraries = [lib.strip() for lib in args.libraries.split(",") if lib.strip()]
        self.notes = list(NOTES)
        self.pythons = self._interpreters()
        self.records: dict[tuple[str, str], dict[str, Any]] = {}
        self.metrics: dict[tuple[str, str], RunMetrics] = {}
        self.overhead: dict[str, RunMetrics] = {}
        self.floor: dict[str, float] = {}

    def _interpreters(self) -> dict[str, str]:
        found = {"ours": sys.executable}
        if "peer" in self.libraries:
            for candidate in (sys.executable, str(venv.python_path())):
                if Path(candidate).exists() and venv.has_modules(candidate, ("haystack_integrations.agent_pack",)):
                    found["peer"] = candidate
                    break
            else:
                self.notes.append("agent-pack-haystack is not importable here, so the peer was not run.")
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
                f"tokens, precision {metrics.precision:.2f}  [{status}]",
                flush=True,
            )
            pairs.append((record, metrics))
        if not pairs:
            raise SystemExit(f"no saved log for {scenario.name} / {library} under {self.args.work_dir / 'runs'}")
        return _median_run(pairs)

    def run(self) -> int:
        """Run everything and write the outputs; returns the process exit code."""
        latency = LatencyModel(self.args.ttft, self.args.tps)
        print(f"Benchmark: {len(self.scenarios)} scenarios x {list(self.pythons)}, latency {latency}", flush=True)
        for scenario in self.scenarios:
            for library in self.pythons:
                record, metrics = self._measure(scenario, library, latency, "")
                self.records[scenario.name, library] = record
                self.metrics[scenario.name, library] = metrics
        if self.args.overhead_scenario:
            zero = SCENARIOS[self.args.overhead_scenario]
            for library in self.pythons:
                self.overhead[library] = self._measure(zero, library, LatencyModel(0.0, 0.0), "-latency0", warmup=1)[1]
        if self.args.overhead_scenario and not self.args.from_logs:
            self.floor = measure_floor(self.pythons.get("ours", sys.executable), self.args.api)
            (self.args.work_dir / "runs" / "floor.json").write_text(json.dumps(self.floor))
        elif (self.args.work_dir / "runs" / "floor.json").exists():
            self.floor = json.loads((self.args.work_dir / "runs" / "floor.json").read_text())
        if self.records and self.args.from_logs:
            latency = LatencyModel(**next(iter(self.records.values()))["latency"])
        self._write(latency)
        failed = [m for m in [*self.metrics.values(), *self.overhead.values()] if not m.ok]
        return 1 if failed else 0

    def _verdicts(self) -> list[targets.Verdict]:
        verdicts = []
        for scenario in self.scenarios:
            ours = self.metrics.get((scenario.name, "ours"))
            if ours is not None:
                verdicts += targets.check(ours, self.metrics.get((scenario.name, "peer")))
        if "ours" in self.overhead:
            verdicts.append(targets.check_overhead(self.overhead["ours"]))
        return verdicts

    def _improvements(self) -> list[str]:
        path = self.args.baseline
        baseline = improvements.Baseline.load(Path(path)) if path else None
        if baseline is None or (baseline.scenario, "ours") not in self.metrics:
            return []
        ours = improvements.current_figures(self.metrics.get((baseline.scenario, "ours")), self.overhead.get("ours"))
        peer = improvements.current_figures(self.metrics.get((baseline.scenario, "peer")), self.overhead.get("peer"))
        return improvements.render(baseline, ours, peer, self.floor)

    def _write(self, latency: LatencyModel) -> None:
        timeline_records = [self.records[k] for k in self.records if k[0] == self.args.timeline_scenario]
        png_rel = os.path.relpath(self.args.png, self.args.doc.parent)
        if timeline_records:
            from benchmarks.harness.timeline import draw

            caption = f"{self.args.timeline_scenario}: {SCENARIOS[self.args.timeline_scenario].title}"
            draw(timeline_records, self.args.png, caption)
        corpus = build_corpus(seed=self.args.seed)
        pdfs = sum(p.kind == "pdf" for p in corpus.pages)
        data = report.ReportInput(
            command=self.command,
            environment={
                "Python": platform.python_version(),
                "haystack-ai": _version("haystack-ai"),
                "openai": _version("openai"),
                "tavily-python": _version("tavily-python"),
                "haystack-deep-research": _version("haystack-deep-research"),
                "agent-pack-haystack": _version("agent-pack-haystack"),
                "CPU cores": str(os.cpu_count()),
            },
            settings={
                "model latency": f"{latency.ttft_s} s to first token, then {latency.tokens_per_s:g} output tokens/s",
                "OpenAI API": self.args.api,
                "corpus": f"{len(corpus.pages)} pages ({pdfs} PDF), seed {self.args.seed}",
                "runs per library and scenario": f"{max(1, self.args.repeat)} (median wall shown)",
            },
            scenarios=self.scenarios,
            runs=self.metrics,
            overhead=self.overhead,
            floor=self.floor,
            verdicts=self._verdicts(),
            timeline=png_rel,
            timeline_scenario=self.args.timeline_scenario,
            notes=self.notes,
            improvements=self._improvements(),
        )
        report.write(data, self.args.doc)
        print(f"Wrote {self.args.doc} and {self.args.png}", flush=True)
