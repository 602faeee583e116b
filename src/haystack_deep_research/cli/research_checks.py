"""
What the ``deep-research`` command checks before any model is called: the question, the output paths, the
credentials, the combinations of options, and (for ``--max-cost``) that every model has a price.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from haystack_deep_research.cli.approval import check_approve_plan
from haystack_deep_research.cli.arguments import check_option_credentials
from haystack_deep_research.cli.paths import check_output_paths
from haystack_deep_research.errors import UsageError
from haystack_deep_research.evidence.text import clean_text
from haystack_deep_research.run import check_question, model_name
from haystack_deep_research.run.cost import CostMeter

__all__ = ["check_prices", "check_research_args"]


def check_prices(options: Mapping[str, Any]) -> None:
    """--max-cost needs a price for every model: say so before a folder is indexed or a model called."""
    models = {name: model_name(value) for name, value in options.items() if name.endswith("_llm")}
    budgets = options.get("budgets")
    unpriced = CostMeter(prices=dict(budgets.prices or {}) if budgets is not None else None).unpriced(models)
    if unpriced:
        raise UsageError(
            f"--max-cost needs the price of every model; none is known for {', '.join(unpriced)}. Give it with "
            f"--price {unpriced[0]}=INPUT,OUTPUT (US dollars per million tokens), or use --token-budget instead."
        )


def _question(text: str) -> str:
    question = clean_text(text).strip()
    if not question:
        raise UsageError('the question is empty; ask one in quotes: deep-research "your question".')
    return check_question(question)


def check_research_args(args: argparse.Namespace, *, replay: bool) -> str:
    """Everything that can be checked before a model is called; the question, cleaned."""
    question = _question(args.question)
    check_output_paths(output=args.output, sources=args.sources, run_dir=args.run_dir)
    if not replay:  # a replay calls no model and no search
        check_option_credentials(args)
    if args.no_web and not args.docs:
        raise UsageError("--no-web leaves the researchers nothing to search; add --docs FOLDER.")
    if args.cache_ttl is not None and args.cache is None:
        raise UsageError(
            "--cache-ttl is how long the entries of --cache DIR are used (and, in an update, how long sources stay "
            "fresh); add --cache DIR."
        )
    if args.record is not None and args.mode != "iterative":
        raise UsageError("--record records iterative runs; add --mode iterative.")
    if args.clarify and args.mode == "iterative":
        raise UsageError("--clarify asks its question in the deep mode; drop --mode iterative or --clarify.")
    check_approve_plan(args)
    return question
