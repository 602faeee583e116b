"""Where the notebook displays come from: IPython, an optional dependency (the ``notebook`` extra)."""

from __future__ import annotations

from typing import Any

from haystack_deep_research.errors import MissingExtraError

__all__ = ["in_notebook", "ipython_display"]


def ipython_display() -> tuple[Any, Any]:
    """
    :returns: IPython's ``display`` function and its ``Markdown`` class.
    :raises MissingExtraError: If IPython is not installed.
    """
    try:
        from IPython.display import Markdown, display
    except ImportError as error:
        raise MissingExtraError("Notebook displays", extra="notebook", module="IPython") from error
    return display, Markdown


def in_notebook() -> bool:
    """:returns: Whether the code runs in an IPython kernel or shell (IPython installed and active)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return get_ipython() is not None
