"""The base every tool of the library builds on, below ``sources/`` and ``tools/`` (see :mod:`.base`)."""
