"""
The ``deep-research`` command: research a question (:mod:`.research`), check a report, scan many items
(:mod:`.scan`), serve over MCP (:mod:`.mcp`).

Every command takes the same options, read once for every surface (the command, the MCP server, the Hayhooks
wrapper) by :mod:`haystack_deep_research.options`: the parsers, their defaults from a TOML config file and
``DEEP_RESEARCH_<OPTION>`` variables, what they become, the exit status and the check of a report.

What the research command is made of, for reuse and tests: its outputs and their paths (:mod:`.output`), the run under
Ctrl-C (:mod:`.session`) and its displays (:mod:`.display`, :mod:`.live`), which show what the one tracker of a run's
events and its summary say (:mod:`haystack_deep_research.options.progress`).

The command sends no Haystack telemetry unless ``HAYSTACK_TELEMETRY_ENABLED=True`` asks for it (:func:`main`).
"""

from collections.abc import Sequence

from haystack_deep_research._haystack_internals import telemetry_off_unless_asked
from haystack_deep_research.cli.research import main as _run_command

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """
    Run the ``deep-research`` command (see :func:`haystack_deep_research.cli.research.main`), with Haystack's
    telemetry off unless ``HAYSTACK_TELEMETRY_ENABLED`` is ``True`` or ``1``, and never a failure to send it shown.

    :param argv: The arguments (without the program name); ``sys.argv[1:]`` by default.
    :returns: The exit status.
    """
    telemetry_off_unless_asked()
    return _run_command(argv)
