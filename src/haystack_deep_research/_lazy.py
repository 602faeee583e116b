"""Package attributes imported when first used (PEP 562), so that importing a package costs only what is used."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, namespace: dict[str, Any], sources: Mapping[str, tuple[str, ...]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """:returns: ``(__getattr__, __dir__)`` of a package whose public names live in its modules."""
    owner = {name: module for module, names in sources.items() for name in names}

    def getattr_(name: str) -> Any:
        module = owner.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted({*namespace, *owner})

    return getattr_, dir_
