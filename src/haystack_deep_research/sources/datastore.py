"""
Datastores: your own documents behind any Haystack retriever (or component with a ``query`` input returning
``documents``), each a :class:`Datastore` with a ``search_<name>`` tool and a line of the researchers' routing block
(:func:`routing_prompt`), every document cited by a stable :func:`citation_target`. See docs/sources.md.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import quote

from haystack import Document

from haystack_deep_research import _checks
from haystack_deep_research._prompts import DATASTORE_ROUTING, DATASTORE_TOOL_PREFIX, render_text
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.evidence.text import clean_text
from haystack_deep_research.sources.plugins import accepts_input, is_component

__all__ = [
    "DEFAULT_TOP_K",
    "MAX_TOP_K",
    "Datastore",
    "citation_target",
    "datastores_from",
    "routing_prompt",
    "title_of",
]

DEFAULT_TOP_K = 6
MAX_TOP_K = 50
_NAME = re.compile(r"^[a-z0-9][a-z0-9_]{0,40}$")
_SPEC_KEYS = frozenset({"retriever", "description", "top_k", "min_score"})
_URL_KEYS = ("url", "source_url", "link")


@dataclass(frozen=True)
class Datastore:
    """
    One named document store the researchers can search.

    :param name: Lower-case letters, digits and underscores (the tool is ``search_<name>``), at most 41 characters.
    :param retriever: A Haystack component with a ``query`` input returning ``documents``.
    :param description: What the store holds; the researchers route their queries by it.
    :param top_k: Passages per search, 1 to 50 (the model may ask for fewer or more, up to 50).
    :param min_score: Drop documents scored below this (documents without a score are kept); ``None`` keeps all.
    :raises ConfigurationError: If a field is invalid.
    """

    name: str
    retriever: Any
    description: str = ""
    top_k: int = DEFAULT_TOP_K
    min_score: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ConfigurationError(
                "a datastore name must be lower-case letters, digits and underscores, starting with a letter or "
                f"digit, at most 41 characters (it becomes the tool name search_<name>); got {self.name!r}."
            )
        if not is_component(self.retriever):
            raise ConfigurationError(
                f"datastores[{self.name!r}]['retriever'] must be a Haystack retriever or component with a 'query' "
                f"input; got {type(self.retriever).__name__}."
            )
        if not accepts_input(self.retriever, "query"):
            raise ConfigurationError(
                f"datastores[{self.name!r}]['retriever'] ({type(self.retriever).__name__}) has no 'query' input; "
                "wrap it in a SuperComponent with input_mapping={'query': [...]} (for example an embedder's 'text')."
            )
        if not isinstance(self.description, str):
            raise ConfigurationError(f"datastores[{self.name!r}]['description'] must be a string.")
        _checks.int_in_range(f"datastores[{self.name!r}]['top_k']", self.top_k, 1, MAX_TOP_K)
        if self.min_score is not None:
            _checks.number_in_range(
                f"datastores[{self.name!r}]['min_score']", self.min_score, -1e9, 1e9, include_low=True
            )

    @property
    def tool_name(self) -> str:
        """The name of the store's search tool: ``search_<name>``."""
        return f"{DATASTORE_TOOL_PREFIX}{self.name}"


def datastores_from(datastores: Any) -> list[Datastore]:
    """
    The ``datastores`` of a :class:`~haystack_deep_research.Sources` (``None``, or a mapping of name to a spec
    ``{"retriever", "description", "top_k", "min_score"}`` or to a :class:`Datastore`), checked, in the mapping's order.

    :raises ConfigurationError: If the mapping or a spec is invalid; the message names the store and the key.
    """
    if datastores is None:
        return []
    if not isinstance(datastores, Mapping):
        raise ConfigurationError(
            "datastores must be a mapping of name to {'retriever': ..., 'description': ..., 'top_k': ...}; "
            f"got {type(datastores).__name__}."
        )
    stores = []
    for name, spec in datastores.items():
        if isinstance(spec, Datastore):
            if spec.name != name:
                raise ConfigurationError(f"datastores[{name!r}] holds a Datastore named {spec.name!r}.")
            stores.append(spec)
            continue
        if not isinstance(spec, Mapping) or "retriever" not in spec:
            raise ConfigurationError(
                f"datastores[{name!r}] must be a mapping with a 'retriever' (and optionally 'description', 'top_k', "
                f"'min_score'); got {type(spec).__name__}."
            )
        unknown = sorted(set(spec) - _SPEC_KEYS)
        if unknown:
            raise ConfigurationError(f"datastores[{name!r}] has unknown keys {unknown}; allowed: {sorted(_SPEC_KEYS)}.")
        stores.append(Datastore(name=name, **dict(spec)))
    return stores


def citation_target(store: str, document: Document, *, by_url: bool = True) -> str:
    """
    The stable address a document is cited by (see the module docstring): an ``http(s)`` URL (unless ``by_url`` is
    ``False``: the URL policy refused it), a ``file://`` URI or a ``doc://<store>/...`` URI.
    """
    meta = document.meta or {}
    for key in _URL_KEYS if by_url else ():
        value = meta.get(key)
        if isinstance(value, str) and value.strip().lower().startswith(("http://", "https://", "file://")):
            return value.strip()
    path = meta.get("file_path")
    if isinstance(path, str | PurePath) and str(path).strip():
        if Path(path).is_absolute():
            return Path(path).as_uri()
        return f"doc://{store}/{quote(os.fsencode(PurePath(path).as_posix()))}"  # undecodable bytes as %XX
    return f"doc://{store}/{quote(str(document.id), safe='')}"


def title_of(document: Document) -> str:
    """
    A document's ``meta["title"]``, else the name of its file, else its id; always encodable as UTF-8 (a file name
    that is not UTF-8 gets U+FFFD for its undecodable bytes).
    """
    meta = document.meta or {}
    title = meta.get("title")
    if isinstance(title, str) and title.strip():
        return clean_text(" ".join(title.split()))
    path = meta.get("file_path")
    if isinstance(path, str | PurePath) and str(path).strip():
        return os.fsencode(PurePath(path).name).decode("utf-8", "replace")
    return clean_text(str(document.id))


def routing_prompt(datastores: Any, *, web: bool = True) -> str:
    """
    The routing block of a researcher's system prompt: one line per store, its tool and its description.

    :param datastores: The ``datastores`` mapping, or a list of :class:`Datastore`.
    :param web: Whether the researcher also searches the web.
    :returns: The block; ``""`` without datastores.
    """
    stores = datastores if isinstance(datastores, list) else datastores_from(datastores)
    if not stores:
        return ""
    lines = [{"tool": store.tool_name, "description": store.description or store.name} for store in stores]
    return render_text(DATASTORE_ROUTING, web=web, stores=lines)
