"""The ``deep-research`` command; its options are in :mod:`haystack_deep_research.options` (docs/cli.md)."""

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
