"""
The deep agent's loop: the hooks of ``create_deep_agent`` and the layers they wire.

- :mod:`.deep_hooks` opens and closes a run (memory files, outputs, structured output, ``ExitReached``);
- :mod:`.deep_loop` holds the hooks of each step (exit conditions, the submission and its check, grounding, reflexion);
- :mod:`.deep_settings` holds the settings they share and the reflexion and condensing layers; :mod:`.turn_grounding`
  is the other layer.

The exit conditions are in :mod:`haystack_deep_research.research.exits`, the tools of the capability layers in
:mod:`haystack_deep_research.tools`.
"""

__all__: list[str] = []
