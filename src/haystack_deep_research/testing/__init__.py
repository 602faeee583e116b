"""
The offline testing kit: run and test deep research agents with no network and no API keys (docs/testing.md).

:class:`ScriptedChatGenerator` plays any role of a run. :class:`LoopbackChatServer` (an OpenAI Chat Completions API
whose models are chat generators), :class:`LoopbackSearchServer` (a Tavily-compatible search API) and
:class:`LoopbackWebServer` (pages, PDFs, redirects, slow and raw responses) listen on 127.0.0.1;
:func:`.pdf.make_scanned_pdf` and :func:`.pdf.make_inflating_pdf` build the PDFs a reader must survive (a scan
without text, a decompression bomb). :func:`forbid_network` refuses connections beyond loopback, and :func:`prompt_of`
tells a fake of your own which of the library's prompts a message is. ``python -m haystack_deep_research.testing
serve`` starts the three servers and prints the command lines that use them (:func:`serve_kit`, :func:`kit_commands`).
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
