"""
How the library's objects serialize, on top of Haystack's ``default_to_dict`` / ``default_from_dict``: from the
parameters of their ``__init__``, each read back from the attribute of its name (:func:`init_parameters`, nested
components through Haystack's ``component_to_dict``), in Haystack's envelope (:class:`InitSerialized`), as one key per
dataclass field (:class:`FieldsSerialized`), or as ``{"type": <tag>, **parameters}`` (:class:`Tagged`).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Mapping
from datetime import date
from pathlib import PurePath
from typing import Any, ClassVar, TypeVar

from haystack.core.component import Component
from haystack.core.errors import SerializationError
from haystack.core.serialization import component_to_dict, default_from_dict, default_to_dict
from haystack.utils.deserialization import deserialize_component_inplace

from haystack_deep_research.errors import ConfigurationError

T = TypeVar("T", bound="InitSerialized")
TaggedT = TypeVar("TaggedT", bound="Tagged")
FieldsT = TypeVar("FieldsT", bound="FieldsSerialized")


def _serializable(value: Any) -> bool:
    return isinstance(value, Component) or (not isinstance(value, type) and callable(getattr(value, "to_dict", None)))


def _serialized(value: Any, name: str) -> Any:
    if isinstance(value, PurePath):
        return str(value)
    if _serializable(value):
        return component_to_dict(obj=value, name=name)
    if isinstance(value, list | tuple) and value and all(_serializable(item) for item in value):
        return [component_to_dict(obj=item, name=name) for item in value]
    return value


def init_parameters(obj: Any, **given: Any) -> dict[str, Any]:
    """
    The parameters that rebuild ``obj``, each ``__init__`` parameter read from ``given`` or the attribute of its name,
    nested components serialized; a ``SerializationError`` names one without a default that is neither.
    """
    parameters: dict[str, Any] = {}
    for name, parameter in inspect.signature(type(obj).__init__).parameters.items():
        if name == "self" or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        if name in given:
            value = given[name]
        elif hasattr(obj, name):
            value = getattr(obj, name)
        elif parameter.default is not parameter.empty:
            value = parameter.default
        else:
            raise SerializationError(f"{type(obj).__name__} keeps no '{name}': pass it to init_parameters.")
        parameters[name] = _serialized(value, name)
    return parameters


def _is_serialized_component(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("type"), str) and "." in value["type"]


def restore_parameters(cls: type[Any], parameters: Mapping[str, Any] | None) -> dict[str, Any]:
    """
    The parameters :func:`init_parameters` wrote, their nested components (a list of them too) restored with
    Haystack's ``component_from_dict``. Only the parameters the ``__init__`` of ``cls`` takes are restored: a class
    named under any other key is never imported.

    :returns: A new dict of the parameters.
    """
    names = set(inspect.signature(cls.__init__).parameters) - {"self"}
    restored = dict(parameters or {})
    for name in names & set(restored):
        value = restored[name]
        if _is_serialized_component(value):
            deserialize_component_inplace(restored, key=name)
        elif isinstance(value, list) and value and all(_is_serialized_component(item) for item in value):
            items = {str(index): item for index, item in enumerate(value)}
            for key in items:
                deserialize_component_inplace(items, key=key)
            restored[name] = list(items.values())
    return restored


class InitSerialized:
    """``to_dict`` / ``from_dict`` from the ``__init__`` parameters, in Haystack's envelope."""

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized object."""
        return default_to_dict(self, **init_parameters(self))

    @classmethod
    def from_dict(cls: type[T], data: dict[str, Any]) -> T:
        """Rebuild the object from what ``to_dict`` returned."""
        return default_from_dict(cls, {**data, "init_parameters": restore_parameters(cls, data.get("init_parameters"))})


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Mapping):
        return dict(value)
    return value.isoformat() if isinstance(value, date) else value


class FieldsSerialized:
    """A frozen dataclass of settings, serialized as one JSON-ready key per field."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        """:returns: One key per field (see :meth:`from_dict`)."""
        return {item.name: _plain(getattr(self, item.name)) for item in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls: type[FieldsT], data: Mapping[str, Any]) -> FieldsT:
        """
        :param data: What :meth:`to_dict` returned; a missing key keeps its default.
        :returns: The settings.
        :raises ConfigurationError: If ``data`` is not a mapping, a key is unknown or a value is out of range.
        """
        if not isinstance(data, Mapping):
            raise ConfigurationError(
                f"{cls.__name__}.from_dict needs a mapping, as to_dict returns; got {type(data).__name__}."
            )
        known = {item.name for item in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigurationError(
                f"{cls.__name__}.from_dict got unknown keys {unknown}; the allowed keys are {sorted(known)}."
            )
        return cls(**dict(data))


class Tagged:
    """A value object serialized as ``{"type": tag, **its parameters}``; each subclass names its ``tag``."""

    tag: ClassVar[str] = ""

    def to_dict(self) -> dict[str, Any]:
        """:returns: The object as a JSON-ready dict (see :meth:`tagged_from_dict`)."""
        return {"type": self.tag, **init_parameters(self)}

    @classmethod
    def tagged_from_dict(cls: type[TaggedT], data: Mapping[str, Any], what: str) -> TaggedT:
        """The object of the subclass whose tag ``data`` names (a ConfigurationError if none, or it does not fit)."""
        tag = data.get("type") if isinstance(data, Mapping) else None
        kinds = {kind.tag: kind for kind in _subclasses(cls) if kind.tag}
        if tag not in kinds:
            raise ConfigurationError(f"not a serialized {what}: {data!r}.")
        try:
            return kinds[tag](**{key: value for key, value in data.items() if key != "type"})
        except TypeError as error:
            raise ConfigurationError(f"not a serialized {what}: {data!r} ({error}).") from error


def _subclasses(cls: type[TaggedT]) -> list[type[TaggedT]]:
    found = [cls]
    for sub in cls.__subclasses__():
        found.extend(_subclasses(sub))
    return found
