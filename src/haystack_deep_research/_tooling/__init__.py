"""
The base every tool of the library builds on, below ``sources/`` and ``tools/``: :class:`~.base.ResearchTool`,
:class:`~.base.RunToolset` (a run's tools, spawned afresh for every run) and the coercion of arguments a provider
sent as strings, all in :mod:`.base`.
"""
