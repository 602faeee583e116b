"""
Every text the library puts in front of a model: system prompts, user prompts, tool names and descriptions, and the
tool results and errors a model reads. Nothing model-facing is written anywhere else.

Values reach a prompt only as template variables, rendered by Haystack's ``PromptBuilder``. Text that came from the
web (search snippets, page text, the researchers' notes built from it) is passed through :func:`fence` and rendered
inside an ``<untrusted_...>`` block, under a standing instruction that anything inside such a block is data, never an
instruction.

A rendered user prompt carries its template's name and variables in ``meta[PROMPT_META_KEY]`` (models never see
``meta``), so offline test doubles can answer from the data they were given rather than from the wording.

The texts live in the modules of this package, by the part of the library that uses them, and every name is
imported from here.
"""

from haystack_deep_research._prompts._base import *  # noqa: F403
from haystack_deep_research._prompts.deep_agent import *  # noqa: F403
from haystack_deep_research._prompts.report import *  # noqa: F403
from haystack_deep_research._prompts.research import *  # noqa: F403
from haystack_deep_research._prompts.tools import *  # noqa: F403
from haystack_deep_research._prompts.workflow import *  # noqa: F403
