"""
What a scan researches and what it keeps: items of a discoverable surface, and one typed row per item.

A :class:`KnowledgeProvider` lists the items (:class:`ItemRef`), describes each one as the prompt its research run
gets, and turns that run's result into a :class:`KnowledgeRow`. :class:`ListProvider` is the ready one: items from a
list of strings or a text file (one per line), the item itself as the prompt, and :func:`row_data` as the row.
"""

from __future__ import annotations

import abc
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from haystack_deep_research._serialization import FieldsSerialized
from haystack_deep_research._untrusted.files import read_regular_file
from haystack_deep_research.errors import ConfigurationError

__all__ = ["ItemRef", "KnowledgeProvider", "KnowledgeRow", "ListProvider", "row_data"]

MAX_ITEMS_BYTES = 64 * 1024 * 1024
"""The largest items file :meth:`ListProvider.from_file` reads."""

_ROW_EXTRAS = ("grounding_score", "regeneration_count", "replan_count", "exit_reason")


@dataclass(frozen=True)
class ItemRef(FieldsSerialized):
    """
    One item of a surface to scan.

    :param name: The item's name, unique within its provider (a host, a ticker, an indicator, a question).
    :param provider: The name of the provider that listed it.
    :param meta: JSON-ready details the provider wants back in ``describe_item`` and ``to_row``.
    :raises ConfigurationError: If the name is blank.
    """

    name: str
    provider: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ConfigurationError(f"An item's name must be a non-empty string; got {self.name!r}.")
        if not isinstance(self.provider, str):
            raise ConfigurationError(f"An item's provider must be a string; got {self.provider!r}.")

    @property
    def key(self) -> tuple[str, str]:
        """What identifies the item across scans: ``(provider, name)``."""
        return (self.provider, self.name)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ItemRef:
        """Rebuild the item from what :meth:`to_dict` returned."""
        return cls(name=data["name"], provider=data.get("provider", ""), meta=dict(data.get("meta") or {}))


@dataclass(frozen=True)
class KnowledgeRow(FieldsSerialized):
    """
    One row of a scan's results: what the research found about one item.

    :param id: The row's id (usually the item's name).
    :param data: The row's fields; JSON-ready values only.
    :raises ConfigurationError: If the id is blank or the data is not a JSON-ready mapping.
    """

    id: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id.strip():
            raise ConfigurationError(f"A row's id must be a non-empty string; got {self.id!r}.")
        try:
            json.dumps(dict(self.data), allow_nan=False)
        except (TypeError, ValueError) as error:
            raise ConfigurationError(
                f"A row's data must be JSON-ready (str, numbers, bools, None, lists and dicts of them): {error}. "
                "Use model_dump(mode='json') for a pydantic model."
            ) from error

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> KnowledgeRow:
        """Rebuild the row from what :meth:`to_dict` returned."""
        return cls(id=data["id"], data=dict(data.get("data") or {}))


def row_data(result: Mapping[str, Any]) -> dict[str, Any]:
    """
    The fields of a row from the result of any of the library's shapes.

    :param result: The outputs of one research run (the shared outputs of every shape).
    :returns: The structured output's fields (``structured``, dumped as JSON), else the ``report`` text (or a
        research callable's ``summary``) as ``summary``; then ``grounding_score``, ``regeneration_count``,
        ``replan_count`` and ``exit_reason`` where the result has them.
    """
    structured = result.get("structured")
    data: dict[str, Any] = {}
    if isinstance(structured, BaseModel):
        data.update(structured.model_dump(mode="json"))
    elif (text := result.get("report", result.get("summary"))) is not None:  # a callable may say summary
        data["summary"] = str(text)
    data.update({key: result[key] for key in _ROW_EXTRAS if key in result})
    return data


class KnowledgeProvider(abc.ABC):
    """
    A discoverable surface whose items a scan researches one by one.

    Subclasses implement :meth:`list_items`, :meth:`describe_item` and :meth:`to_row`. ``describe_item`` and ``to_row``
    run in the scanning process (also with Ray), so a provider may hold clients that do not travel.
    """

    @abc.abstractmethod
    def list_items(self) -> list[ItemRef]:
        """:returns: The items to research, in the order the rows should have."""

    @abc.abstractmethod
    def describe_item(self, ref: ItemRef) -> str:
        """:returns: The prompt of the research run of one of the listed items."""

    @abc.abstractmethod
    def to_row(self, ref: ItemRef, result: Mapping[str, Any]) -> KnowledgeRow:
        """:returns: The item's row, from the outputs of its research run (see :func:`row_data`)."""


class ListProvider(KnowledgeProvider):
    """
    Items from a list of strings: each item is its own prompt, and its row is :func:`row_data` of the result.

    :param items: The items (blank ones are left out).
    :param name: The provider's name, recorded with every item.
    :raises ConfigurationError: If ``items`` is not a list of strings.
    """

    def __init__(self, items: Iterable[str], *, name: str = "list") -> None:
        given = None if isinstance(items, str) or not isinstance(items, Iterable) else list(items)
        if given is None or not all(isinstance(item, str) for item in given):
            raise ConfigurationError("items must be a list of strings, for example ListProvider(['first', 'second']).")
        self.items = [item.strip() for item in given if item.strip()]
        self.name = name

    @classmethod
    def from_file(cls, path: str | Path) -> ListProvider:
        """
        :param path: A UTF-8 text file with one item per line; blank lines and lines starting with ``#`` are skipped.
        :returns: The provider, named after the file.
        :raises ConfigurationError: If the file cannot be read, is not a regular file (a FIFO would block the scan) or
            is larger than :data:`MAX_ITEMS_BYTES`.
        """
        try:
            text = read_regular_file(path, root=None, max_bytes=MAX_ITEMS_BYTES).decode("utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise ConfigurationError(f"cannot read the items file {path}: {error}") from error
        lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
        return cls(lines, name=Path(path).name)

    def list_items(self) -> list[ItemRef]:
        """:returns: One item per string, in order."""
        return [ItemRef(name=item, provider=self.name) for item in self.items]

    def describe_item(self, ref: ItemRef) -> str:
        """:returns: The item's name: it is the prompt."""
        return ref.name

    def to_row(self, ref: ItemRef, result: Mapping[str, Any]) -> KnowledgeRow:
        """:returns: ``KnowledgeRow(id=ref.name, data=row_data(result))``."""
        return KnowledgeRow(id=ref.name, data=row_data(result))
