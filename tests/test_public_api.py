"""The public surface stays tidy."""

from __future__ import annotations

import importlib

import pytest

import haystack_deep_research
from haystack_deep_research import errors


@pytest.mark.parametrize(
    "module",
    [
        "haystack_deep_research",
        "haystack_deep_research.testing",
        "haystack_deep_research.web",
        "haystack_deep_research.workflow",
    ],
)
def test_all_is_sorted_and_complete(module: str) -> None:
    imported = importlib.import_module(module)
    names = imported.__all__
    # Sorted the way ruff's RUF022 sorts: CONSTANTS, then Classes, then functions.
    assert names == sorted(names, key=lambda n: (0 if n.isupper() else 1 if n[0].isupper() else 2, n))
    for name in names:
        assert hasattr(imported, name), name


def test_every_error_derives_from_the_base() -> None:
    for name in errors.__all__:
        assert issubclass(getattr(errors, name), errors.DeepResearchError)


def test_usage_errors_are_value_errors_and_run_errors_are_not() -> None:
    assert issubclass(errors.ConfigurationError, ValueError)
    assert issubclass(errors.InvalidQuestionError, ValueError)
    assert not issubclass(errors.FetchError, ValueError)


def test_version_is_exposed() -> None:
    assert haystack_deep_research.__version__ == "0.1.0"
