"""The ``deep-research`` command: research a question (:mod:`.research`) or check a report (:mod:`.check`)."""

from haystack_deep_research.cli.research import main

__all__ = ["main"]
