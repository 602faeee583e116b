"""
Run one library on one question in this process and write what was measured.

Started by the parent as ``python -m benchmarks.harness.child SPEC.json`` so that each library and scenario gets a
fresh interpreter: peak RSS (``ru_maxrss``) and CPU time then belong to that run alone.
"""

from __future__ import annotations

import importlib
import resource
import sys
import time
import traceback
from pathlib import Path

from benchmarks.harness.spec import RunResult, RunSpec

LIBRARY_MODULES = {
    "ours": "haystack_deep_research",
    "peer": "haystack_integrations.agent_pack.deep_research",
    "gptr": "gpt_researcher",
}
DRIVERS = {
    "ours": "benchmarks.harness.drive_ours",
    "peer": "benchmarks.harness.drive_peer",
    "gptr": "benchmarks.harness.drive_gptr",
}


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(spec: RunSpec) -> RunResult:
    """
    Import, build and run the library named by ``spec``; failures are recorded, not raised.

    :param spec: The run spec.
    :returns: The measurements.
    """
    result = RunResult(library=spec.library)
    try:
        began = time.monotonic()
        importlib.import_module(LIBRARY_MODULES[spec.library])
        driver = importlib.import_module(DRIVERS[spec.library])
        result.import_s = time.monotonic() - began
        began = time.monotonic()
        runner = driver.build(spec)
        result.build_s = time.monotonic() - began
        for _ in range(spec.warmup_runs):  # the same agent, so one-time set-up (clients, lazy imports) is done
            runner.run(spec.question)
        cpu_before = _cpu_s()
        result.start = time.monotonic()
        try:
            result.outcome = runner.run(spec.question)
            result.ok = bool(result.outcome.report)
            if not result.ok:
                result.error = "the run returned no report"
        finally:
            result.end = time.monotonic()
            result.cpu_s = _cpu_s() - cpu_before
    except Exception as err:
        result.error = f"{type(err).__name__}: {err}\n{traceback.format_exc(limit=8)}"
    result.peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def main(argv: list[str]) -> int:
    """Entry point: read the spec, run, write the result next to where the spec says."""
    spec = RunSpec.load(Path(argv[1]))
    result = measure(spec)
    result.save(Path(spec.result_path))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
