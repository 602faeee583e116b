"""
The offline testing kit: run and test deep research agents with no network and no API keys.

- :class:`ScriptedChatGenerator` plays any role of a run (scope, orchestrator, researcher, summarizer, writer).
- :class:`LoopbackChatServer` is an OpenAI Chat Completions API on 127.0.0.1 whose models are chat generators
  (by default the scripted roles, one per model name), for runs through real HTTP clients and the CLI.
- :class:`LoopbackSearchServer` is a Tavily-compatible search API over a small corpus, on 127.0.0.1.
- :class:`LoopbackWebServer` serves HTML pages, PDFs (see :func:`make_pdf`), redirects, slow bodies and raw (even
  hostile) responses on 127.0.0.1; :func:`.pdf.make_scanned_pdf` and :func:`.pdf.make_inflating_pdf` build the PDFs
  a reader must survive (a scan without text, a decompression bomb).
- :func:`forbid_network` refuses connections to anything but loopback (with :class:`NetworkForbiddenError`).
- :func:`prompt_of` tells a fake of your own which of the library's prompts a message is, and with what values.

``python -m haystack_deep_research.testing serve`` starts the three servers from the shell and prints the
``deep-research`` command lines that use them (:func:`serve_kit` starts them in Python, :func:`kit_commands` gives
the command lines). See docs/testing.md for a complete example.
"""

from haystack_deep_research._prompts import prompt_of
from haystack_deep_research.testing._kit import kit_commands, serve_kit
from haystack_deep_research.testing.chat_server import LoopbackChatServer
from haystack_deep_research.testing.generators import ScriptedChatGenerator
from haystack_deep_research.testing.network import NetworkForbiddenError, forbid_network
from haystack_deep_research.testing.pdf import make_pdf
from haystack_deep_research.testing.search_server import LoopbackSearchServer, SearchDocument
from haystack_deep_research.testing.web_server import LoopbackWebServer

__all__ = [
    "LoopbackChatServer",
    "LoopbackSearchServer",
    "LoopbackWebServer",
    "NetworkForbiddenError",
    "ScriptedChatGenerator",
    "SearchDocument",
    "forbid_network",
    "kit_commands",
    "make_pdf",
    "prompt_of",
    "serve_kit",
]
