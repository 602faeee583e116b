"""
The deep agent's loop: the hooks of ``create_deep_agent`` and the layers they wire, each in its own module.

- :mod:`.deep_hooks` opens and closes a run (memory files, outputs, structured output, ``ExitReached``);
- :mod:`.deep_loop` holds the hooks of each step (exit conditions, submission check, grounding, reflexion);
- :mod:`.deep_settings` holds the settings they share and the reflexion and condensing layers; :mod:`.turn_grounding`
  and :mod:`.submission` are the other layers.

The exit conditions are in :mod:`haystack_deep_research.research.exits`, the tools of the capability layers in
:mod:`haystack_deep_research.tools`.
"""

__all__: list[str] = []
