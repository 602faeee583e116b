"""
The deep agent's loop: the hooks of ``create_deep_agent`` (:mod:`.deep_hooks`, :mod:`.deep_loop`) and the layers they
wire (:mod:`.deep_settings`, :mod:`.turn_grounding`); see docs/deep-agent.md.
"""

__all__: list[str] = []
