"""
``deep-research check``: check the citations of any Markdown report, including reports this library did not write,
against ``--sources`` (a ledger or a JSON array of URLs); ``--judge`` also judges each claim as grounding does.
docs/evidence.md describes the output and the exit status.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import haystack_deep_research._untrusted.json_text as _safe_json
from haystack_deep_research._untrusted.files import read_regular_file
from haystack_deep_research._untrusted.terminal import say
from haystack_deep_research.agents.models import DEFAULT_MODEL
from haystack_deep_research.errors import ConfigurationError, UsageError
from haystack_deep_research.evidence import EvidenceLedger
from haystack_deep_research.evidence.citations import Citation
from haystack_deep_research.evidence.reading import ReadingProblem, reading_problems
from haystack_deep_research.evidence.verification import verify_citations
from haystack_deep_research.options.arguments import judge_model, option_value
from haystack_deep_research.options.config import parse_configured
from haystack_deep_research.options.exit_codes import ExitCode
from haystack_deep_research.options.parsers import check_parser
from haystack_deep_research.report.assessment import (
    SUPPORTED,
    UNKNOWN,
    UNSUPPORTED,
    Judgement,
    judge_claims,
    report_claims,
)
from haystack_deep_research.run._budget import model_name
from haystack_deep_research.run._phases import drive

__all__ = ["NOT_JUDGED", "UNREADABLE", "check_parser", "default_judge", "load_sources", "run_check"]

NOT_JUDGED = ExitCode.PARTIAL
"""The exit status when ``--judge`` could not judge some cited claim (and nothing else failed)."""
UNREADABLE = ExitCode.UNREADABLE
"""The exit status when the report's Markdown hides citations from a reader (and every citation read verifies)."""


MAX_REPORT_BYTES = 16 * 1024 * 1024
MAX_SOURCES_BYTES = 256 * 1024 * 1024  # a ledger keeps every page's text, up to max_content_length characters each


def load_sources(path: Path) -> EvidenceLedger:
    """
    The ``--sources`` file as a ledger (plain URLs become pages without stored text).

    :raises UsageError: If the file cannot be read or is neither form.
    """
    try:
        data = _safe_json.loads(read_regular_file(path, root=None, max_bytes=MAX_SOURCES_BYTES))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UsageError(f"cannot read the sources file {path}: {error}") from error
    if not isinstance(data, list):
        raise UsageError(f"{path} must hold a JSON array: ledger entries or URL strings.")
    if all(isinstance(item, str) for item in data):
        return EvidenceLedger.from_urls(data)
    try:
        return EvidenceLedger.from_list(data)
    except ConfigurationError as error:
        raise UsageError(f"{path} is not an evidence ledger: {error}") from error


def default_judge(model: str, options: argparse.Namespace | None = None) -> Any:
    """The judge's chat generator for ``--judge``."""
    return judge_model(options or argparse.Namespace(), model)


def _judge_name(args: argparse.Namespace) -> str:
    roles = dict(pair.partition("=")[::2] for pair in args.role_model)
    return str(args.judge_model or roles.get("judge") or option_value(args, "model") or DEFAULT_MODEL)


def _print_citations(citations: list[Citation], out: TextIO) -> None:
    for citation in citations:
        say(f"  - {citation.url} (line {citation.line}): {citation.sentence}", file=out)


def _print_judgement(judgement: Judgement, model: str, out: TextIO, err: TextIO) -> int:
    """Print the verdicts (a claim not judged with why); return how many were judged."""
    verdicts = judgement.verdicts
    judged = [verdict for verdict in verdicts if verdict.verdict != UNKNOWN]
    counts = {v: sum(c.verdict == v for c in verdicts) for v in (SUPPORTED, UNSUPPORTED, UNKNOWN)}
    if not verdicts:
        say(f"grounding (judge {model}): no claim cites a verified source, so there is nothing to judge", file=out)
    elif judged:
        say(
            f"grounding (judge {model}): score {judgement.score:.2f} over {len(judged)} of {len(verdicts)} claim(s); "
            f"{len(judged)} judged, {counts[UNKNOWN]} not judged; "
            f"{counts[SUPPORTED]} supported, {counts[UNSUPPORTED]} unsupported",
            file=out,
        )
    else:
        say(f"grounding (judge {model}): no score; none of the {len(verdicts)} claim(s) could be judged", file=out)
    for verdict in verdicts:
        reasons = "; ".join(f"{s.url}: {s.reason}" for s in verdict.sources if s.reason)
        said = "not judged" if verdict.verdict == UNKNOWN else verdict.verdict
        say(f"  - {said} (line {verdict.claim.line}): {verdict.claim.sentence}", file=out)
        if reasons:
            say(f"      {reasons}", file=out)
    for warning in judgement.warnings:
        say(f"deep-research check: warning: {warning}", file=err)
    return len(judged)


def run_check(
    argv: Sequence[str], *, out: TextIO | None = None, err: TextIO | None = None, judge_llm: Any = None
) -> int:
    """Run ``deep-research check``; returns the exit status (see docs/evidence.md)."""
    out, err = out or sys.stdout, err or sys.stderr
    try:
        args = parse_configured(check_parser(), argv, command="check")
    except SystemExit as stop:  # --help, or a usage error already printed as one line
        return stop.code if isinstance(stop.code, int) else 2
    try:
        if args.judge and args.sources is None:
            raise UsageError("--judge needs --sources: the ledger whose stored texts the claims are judged against.")
        keyless = judge_llm is not None or option_value(args, "base_url")
        if args.judge and not keyless and not os.environ.get("OPENAI_API_KEY", "").strip():
            raise UsageError(
                "--judge needs OPENAI_API_KEY in the environment (for example: export OPENAI_API_KEY=...), or "
                "--base-url for an OpenAI-compatible server."
            )
        judge: Any = (judge_llm or default_judge(_judge_name(args), args)) if args.judge else None
        try:
            report = read_regular_file(args.report, root=None, max_bytes=MAX_REPORT_BYTES).decode("utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise UsageError(f"cannot read the report {args.report}: {error}") from error
        ledger = load_sources(args.sources) if args.sources is not None else None
        if args.judge and ledger is not None and not any(entry.text.strip() for entry in ledger.entries()):
            raise UsageError(
                f"--judge needs the stored texts of the pages that were read, and {args.sources} holds none (a plain "
                "URL list never does): pass the evidence ledger that `deep-research --sources` writes."
            )
    except UsageError as error:  # a ConfigurationError of the model options too
        say(f"deep-research check: error: {error}", file=err)
        return 2
    problems = reading_problems(report)
    _print_problems(args.report, problems, out, err)
    unreadable = UNREADABLE if problems else 0
    if ledger is None:
        check = verify_citations(report, [])
        say(
            f"{args.report}: {len(check.cited)} cited URL(s) in {len(check.unverified)} citation(s); no --sources "
            "given, so every citation is unverifiable. Pass --sources with the evidence ledger (`deep-research "
            "--sources` writes it) or a JSON list of the URLs that were read.",
            file=out,
        )
        _print_citations(check.unverified, out)
        return unreadable
    check = verify_citations(report, ledger.citable_urls(), named=ledger.named_notes())
    say(
        f"{args.report}: {len(check.cited)} cited URL(s), {len(check.verified_urls)} verified, "
        f"{len(check.unverified_urls)} unverified; citation precision {check.precision:.2f}",
        file=out,
    )
    if check.unverified:
        say("unverified citations:", file=out)
        _print_citations(check.unverified, out)
    status = 1 if check.unverified else unreadable
    if args.judge:
        claims, sources = report_claims(report, check.verified_urls, ledger)
        judgement = drive(judge_claims(claims, sources, judge)) if claims else Judgement([])
        judged = _print_judgement(
            judgement, model_name(judge) if judge_llm is not None else _judge_name(args), out, err
        )
        status = 1 if any(v.verdict == UNSUPPORTED for v in judgement.verdicts) else status
        if judged < len(claims):
            what = "any" if not judged else f"{len(claims) - judged}"
            say(
                f"deep-research check: error: the judge could not judge {what} of the {len(claims)} claim(s) "
                f"(see why above); {judged} judged, {len(claims) - judged} not judged, and a claim not judged is not "
                "supported.",
                file=err,
            )
            status = status or NOT_JUDGED
    return status


def _print_problems(path: Path, problems: list[ReadingProblem], out: TextIO, err: TextIO) -> None:
    """Print what hides the report's citations from a reader, and one error line."""
    if not problems:
        return
    say(f"{path}: {len(problems)} problem(s) hide citations from a reader:", file=out)
    for problem in problems:
        say(f"  - {problem.message}", file=out)
    say(
        f"deep-research check: error: {path} does not read as its author meant (see the problems above); fix its "
        "Markdown and check it again.",
        file=err,
    )
