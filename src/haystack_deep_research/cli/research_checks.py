"""
What the ``deep-research`` command checks before any model is called: the question, the output paths, the
credentials, the combinations of options, the prices (``--max-cost``) and the model server (``--base-url``).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Mapping
from typing import Any

import httpx

from haystack_deep_research.agents.models import API_TABLE
from haystack_deep_research.cli.display import check_approve_plan
from haystack_deep_research.cli.output import check_output_paths
from haystack_deep_research.errors import ModelServerError, UsageError
from haystack_deep_research.evidence.text import clean_text
from haystack_deep_research.options.arguments import ENVIRONMENT, check_option_credentials, option_value
from haystack_deep_research.run._budget import CostMeter, model_name
from haystack_deep_research.run._lifecycle import check_question

__all__ = ["check_model_server", "check_prices", "check_research_args", "check_sources"]

PROBE_TRIES = 2
"""How many times a model server that refuses the connection is tried before the command gives up."""
PROBE_MAX_BYTES = 64 * 1024  # of the probe's answer, read
PROBE_TIMEOUT_S = 10.0
"""The most seconds the probe waits to connect (or the ``--timeout``, when shorter)."""


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


def check_sources(args: argparse.Namespace, *, credentials: bool = True) -> None:
    """:raises UsageError: If a key the models or search need is missing, or ``--no-web`` leaves nothing to search."""
    if credentials:
        check_option_credentials(args)
    if args.no_web and not args.docs:
        raise UsageError("--no-web leaves the researchers nothing to search; add --docs FOLDER.")


def check_research_args(args: argparse.Namespace, *, replay: bool) -> str:
    """Everything that can be checked before a model is called; the question, cleaned."""
    question = clean_text(args.question).strip()
    if not question:
        raise UsageError('the question is empty; ask one in quotes: deep-research "your question".')
    question = check_question(question)
    check_output_paths(output=args.output, sources=args.sources, run_dir=args.run_dir)
    check_sources(args, credentials=not replay)  # a replay calls no model and no search
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


def _base_url_option(args: argparse.Namespace) -> str:
    """Where the server's address came from, as the user wrote it: the option, its variable, or a config file."""
    where = (getattr(args, "configured_from", None) or {}).get("base_url", "")
    if where or getattr(args, "base_url", None):
        return where.removeprefix("environment variable ") or "--base-url"
    return next((name for name in ENVIRONMENT["base_url"] if os.environ.get(name, "").strip()), "--base-url")


def _probe(url: str, seconds: float) -> tuple[int, bool]:
    """The status of an empty request to ``url``, and whether its body (the first 64 KiB) is an API error object."""
    with (
        httpx.Client(timeout=httpx.Timeout(seconds), follow_redirects=False) as client,
        client.stream("POST", url, json={}) as response,
    ):
        body = b""
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) >= PROBE_MAX_BYTES:
                break
    try:
        parsed = json.loads(body[:PROBE_MAX_BYTES])
    except ValueError:  # not JSON (an HTML page), or cut short
        return response.status_code, False
    return response.status_code, isinstance(parsed, dict) and isinstance(parsed.get("error"), dict)


def check_model_server(args: argparse.Namespace) -> None:
    """
    With ``--base-url``, one request before the run: an empty body sent where the models will be asked, which an
    OpenAI-compatible server answers at once without running a model (docs/cli.md, "Errors are one line"). A 404 whose
    body is an API error object (``{"error": {...}}``) is a model the server does not hold, not a missing API.

    :raises ModelServerError: If the server cannot be reached, or answers 404 or 405.
    """
    base_url = option_value(args, "base_url")
    if not base_url:
        return
    api = API_TABLE.get(option_value(args, "api"), API_TABLE["chat"])
    url = base_url.rstrip("/") + api.path
    where = f"the model server at {base_url} ({_base_url_option(args)})"
    seconds = min(option_value(args, "timeout") or PROBE_TIMEOUT_S, PROBE_TIMEOUT_S)
    for attempt in range(1, PROBE_TRIES + 1):
        try:
            status, api_error = _probe(url, seconds)
        except httpx.InvalidURL as error:
            raise ModelServerError(f"{where} is not a usable address ({error}).", url=base_url) from None
        except httpx.TimeoutException as error:
            if isinstance(error, httpx.ConnectTimeout):
                raise ModelServerError(
                    f"{where} could not be reached: no connection within {seconds:g} s; start it, or fix the address.",
                    url=base_url,
                ) from None
            return  # connected, but busy: the run's own timeouts apply
        except httpx.TransportError as error:
            if attempt < PROBE_TRIES:
                time.sleep(0.5)
                continue
            raise ModelServerError(
                f"{where} could not be reached ({error or type(error).__name__}); start it, or fix the address.",
                url=base_url,
            ) from None
        if status == 405 or (status == 404 and not api_error):  # a 404 in the API's own words: a model not found
            raise ModelServerError(
                f"{where} answered HTTP {status} to POST {url}: it does not serve the OpenAI {api.title} API there; "
                "check the address (an OpenAI-compatible server's usually ends in /v1) or --api.",
                url=base_url,
            )
        return
