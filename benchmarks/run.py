"""
Run the benchmark: both libraries, every scenario, in the simulated world; write docs/benchmarks.md and a timeline.

    python benchmarks/run.py                      # everything, default latency model
    python benchmarks/run.py --scenarios three --repeat 3 --ttft 0.2 --tps 200
    python benchmarks/run.py --libraries ours --ours-src OLD/src --save-baseline benchmarks/baseline.json \
        --baseline-description "..." --png benchmarks/timeline-before.png --doc /tmp/before.md   # a "before"

The first run creates benchmarks/.work/venv (the peer and matplotlib live only there) and re-runs itself with it;
benchmarks/.work/gptr-venv (GPT Researcher) is built with the first Python 3.12 or later found ($HDR_GPTR_PYTHON,
then python3.13, python3.12 and python3 on PATH, then pyenv's installed versions); without one, GPT Researcher
is left out and the page says so.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.harness import venv  # noqa: E402

REEXEC_MARK = "HDR_BENCHMARK_VENV"


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The command line."""
    from benchmarks.harness.scenarios import SCENARIOS

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scenarios", default=",".join(SCENARIOS), help="comma-separated, from: " + ", ".join(SCENARIOS))
    p.add_argument(
        "--libraries",
        default="ours,peer,gptr",
        help="comma-separated: ours, peer, gptr (GPT Researcher, in its own environment; needs Python 3.12 or later)",
    )
    p.add_argument("--ttft", type=float, default=0.5, help="model time to first token, seconds (default 0.5)")
    p.add_argument("--tps", type=float, default=100.0, help="model output tokens per second; 0 = instant (default 100)")
    p.add_argument("--repeat", type=int, default=1, help="runs per library and scenario; the median-wall run is shown")
    p.add_argument(
        "--overhead-scenario",
        default="three,scale-20,scale-50",
        help="comma-separated scenarios also run at latency 0 for overhead; '' skips them",
    )
    p.add_argument("--timeline-scenario", default="scale-20", help="scenario drawn in the timeline picture")
    p.add_argument(
        "--timeline-before",
        default=str(ROOT / "benchmarks" / "timeline-before.png"),
        help="a timeline picture of the earlier code, shown next to this run's when it exists",
    )
    p.add_argument("--ours-src", default="", help="import haystack-deep-research from this src folder instead")
    p.add_argument(
        "--ours-option",
        action="append",
        default=[],
        help="NAME=VALUE (JSON) passed to create_deep_research_agent, e.g. passage_budget=0 (in Sources); repeatable",
    )
    p.add_argument("--api", choices=("responses", "chat"), default="responses", help="OpenAI API flavour")
    p.add_argument("--read-batch", action="store_true", help="researchers read all top URLs in one read_url call")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--timeout", type=float, default=600.0, help="seconds before a run is stopped")
    p.add_argument("--work-dir", type=Path, default=ROOT / "benchmarks" / ".work")
    p.add_argument("--doc", type=Path, default=ROOT / "docs" / "benchmarks.md")
    p.add_argument("--png", type=Path, default=ROOT / "benchmarks" / "timeline.png")
    p.add_argument(
        "--baseline",
        default=str(ROOT / "benchmarks" / "baseline.json"),
        help="earlier figures shown in the page's Improvements section; '' leaves the section out",
    )
    p.add_argument("--save-baseline", type=Path, default=None, help="also write this run's figures as a baseline file")
    p.add_argument("--baseline-description", default="", help="what --save-baseline measured, one sentence")
    p.add_argument("--from-logs", action="store_true", help="recompute the page from the saved logs; run nothing")
    p.add_argument("--no-setup", action="store_true", help="use the current interpreter as it is")
    return p.parse_args(argv)


def _shown(argv: list[str]) -> list[str]:
    """The options that produced the figures: without ``--from-logs`` and without where the logs were kept."""
    shown: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--work-dir":
            skip = True
        elif arg != "--from-logs" and not arg.startswith("--work-dir="):
            shown.append(arg)
    return shown


def main(argv: list[str]) -> int:
    """Entry point."""
    args = parse_args(argv)
    if not args.no_setup and not os.environ.get(REEXEC_MARK) and not venv.has_modules(sys.executable):
        python = venv.ensure()
        env = {**os.environ, REEXEC_MARK: "1"}
        os.execve(str(python), [str(python), str(Path(__file__).resolve()), *argv], env)
    from benchmarks.harness.campaign import Campaign

    shown = _shown(argv)  # the page shows how the figures were produced
    return Campaign(args, command=" ".join(["python benchmarks/run.py", *shown])).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
