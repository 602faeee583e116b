"""Run one library on one scenario: start the world, run the library in a subprocess, collect every log."""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks.harness.scenarios import Scenario, corpus_of
from benchmarks.harness.spec import RunResult, RunSpec
from benchmarks.harness.world import World, open_world
from benchmarks.sim.llm_server import FaultModel, LatencyModel
from benchmarks.sim.policies import PolicyConfig
from haystack_deep_research.testing.search_server import rank

ROOT = Path(__file__).resolve().parents[2]
SETTLE_S = 0.2


@dataclass(frozen=True)
class RunOptions:
    """Settings shared by every run of one benchmark invocation."""

    latency: LatencyModel
    work_dir: Path
    api: str = "responses"
    read_batch: bool = False
    seed: int = 7
    timeout_s: float = 600.0
    warmup_runs: int = 0
    ours_src: Path | None = None
    """Another checkout's ``src`` folder: ``ours`` is imported from there instead (to measure a "before")."""
    ours_options: tuple[tuple[str, Any], ...] = ()
    """Extra factory arguments for ``ours`` (to measure one lever at a time)."""


def child_env(library_path: Path | None = None) -> dict[str, str]:
    """
    The environment of a run's subprocess: telemetry off, no proxies.

    :param library_path: A folder put first on ``PYTHONPATH``, so the library is imported from there.
    :returns: The environment.
    """
    env = dict(os.environ)
    if library_path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(library_path), *filter(None, [env.get("PYTHONPATH")])])
    env.update({"HAYSTACK_TELEMETRY_ENABLED": "False", "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1"})
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        env.pop(name, None)
    return env


def _search_log(world: World) -> list[dict[str, Any]]:
    documents = world.search.documents
    entries = []
    for request in world.search.requests.snapshot():
        body = request.json_body if isinstance(request.json_body, dict) else {}
        query = str(body.get("query") or "")
        limit = int(body.get("max_results") or 5)
        returned = [doc.url for doc, _ in rank(query, documents)[:limit]] if request.status == 200 and query else []
        entries.append(
            {
                "start": request.started,
                "end": request.finished,
                "status": request.status,
                "query": query,
                "returned": returned,
            }
        )
    return entries


def _web_log(world: World) -> list[dict[str, Any]]:
    return [
        {"start": r.started, "end": r.finished, "status": r.status, "method": r.method, "url": world.web.url(r.path)}
        for r in world.web.requests.snapshot()
    ]


def _settle(world: World) -> None:
    """Wait until no log grows for a moment, so the last responses are logged."""
    before = -1
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        now = len(world.llm.records) + len(world.search.requests) + len(world.web.requests)
        if now == before:
            return
        before = now
        time.sleep(SETTLE_S)


def run_one(scenario: Scenario, library: str, python: str, options: RunOptions, tag: str = "") -> dict[str, Any]:
    """
    Run ``library`` on ``scenario`` in a fresh world and a fresh interpreter.

    :param scenario: The scenario.
    :param library: ``"ours"`` or ``"peer"``.
    :param python: The interpreter that has the library installed.
    :param options: Shared settings.
    :param tag: Added to the file names of this run (for repeats and latency variants).
    :returns: The run record (also written as JSON under ``work_dir/runs``): scenario, settings, the child's
        measurements and the three servers' logs.
    """
    runs = options.work_dir / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    stem = f"{scenario.name}-{library}{tag}"
    corpus = corpus_of(scenario.corpus, options.seed)
    config = PolicyConfig(
        subtopics=scenario.subtopics,
        read_top_k=scenario.read_top_k,
        read_batch=options.read_batch,
        invent_rate=scenario.invent_rate,
        researcher_invent_rate=scenario.researcher_invent_rate,
        seed=options.seed,
    )
    faults = FaultModel(rate_429=scenario.rate_429, seed=options.seed)
    latency = scenario.latency(options.latency)
    result_path = runs / f"{stem}.result.json"
    result_path.unlink(missing_ok=True)
    with open_world(corpus, config, latency, faults, unreadable_first=scenario.unreadable_first) as world:
        spec = RunSpec(
            library=library,
            question=corpus.question(scenario.subtopics),
            llm_url=world.llm.api_url,
            search_url=world.search.base_url,
            result_path=str(result_path),
            max_subtopics=scenario.subtopics,
            max_concurrent=scenario.max_concurrent,
            api=options.api,
            llm_timeout_s=scenario.llm_timeout_s,
            llm_max_retries=scenario.llm_max_retries,
            warmup_runs=options.warmup_runs,
            ours_options=dict(options.ours_options) if library == "ours" else {},
        )
        spec_path = runs / f"{stem}.spec.json"
        spec.save(spec_path)
        command = [python, "-m", "benchmarks.harness.child", str(spec_path)]
        try:
            proc = subprocess.run(
                command,
                cwd=ROOT,
                env=child_env(options.ours_src if library == "ours" else None),
                capture_output=True,
                text=True,
                timeout=options.timeout_s,
                check=False,
            )
            stderr = proc.stderr[-4000:]
        except subprocess.TimeoutExpired:
            stderr = f"the run did not finish within {options.timeout_s} s and was stopped"
        _settle(world)
        llm_log = [asdict(r) for r in world.llm.records]
        search_log, web_log = _search_log(world), _web_log(world)
    result = RunResult.load(result_path) if result_path.exists() else RunResult(library, error=stderr)
    record = {
        "scenario": asdict(scenario),
        "library": library,
        "latency": asdict(latency),
        "ours_src": str(options.ours_src or ""),
        "ours_options": dict(options.ours_options),
        "api": options.api,
        "read_batch": options.read_batch,
        "seed": options.seed,
        "result": asdict(result),
        "stderr": stderr,
        "llm": llm_log,
        "search": search_log,
        "web": web_log,
    }
    (runs / f"{stem}.json").write_text(json.dumps(record, indent=1, default=str))
    return record
