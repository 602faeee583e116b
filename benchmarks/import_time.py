"""
How long ``import haystack_deep_research`` takes on top of ``import haystack``, in fresh interpreters.

    python benchmarks/import_time.py            # median of 7 runs, printed as JSON

Each run starts a new interpreter that imports ``haystack`` and then ``haystack_deep_research`` and times both with
``time.perf_counter``; the figure is the median of the second import's time over the runs. Haystack telemetry is
off, as in the test suite.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = 7
PROBE = (
    "import time\n"
    "t0 = time.perf_counter()\n"
    "import haystack\n"
    "t1 = time.perf_counter()\n"
    "import haystack_deep_research\n"
    "t2 = time.perf_counter()\n"
    "print(t1 - t0, t2 - t1)\n"
)


def measure(python: str = sys.executable, runs: int = RUNS, library_path: Path | None = None) -> dict[str, float]:
    """
    Time the two imports in ``runs`` fresh interpreters.

    :param python: The interpreter to run.
    :param runs: How many interpreters to start.
    :param library_path: A folder put first on ``PYTHONPATH`` (another checkout's ``src``), or ``None``.
    :returns: ``haystack_s`` and ``library_s`` (medians, seconds) and ``runs``.
    """
    env = {**os.environ, "HAYSTACK_TELEMETRY_ENABLED": "False"}
    if library_path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(library_path), *filter(None, [env.get("PYTHONPATH")])])
    haystack, library = [], []
    for _ in range(runs):
        out = subprocess.run([python, "-c", PROBE], capture_output=True, text=True, check=True, env=env, cwd=ROOT)
        first, second = (float(v) for v in out.stdout.split())
        haystack.append(first)
        library.append(second)
    return {"haystack_s": statistics.median(haystack), "library_s": statistics.median(library), "runs": runs}


def main() -> int:
    """Entry point: print the figures as JSON."""
    print(json.dumps(measure()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
