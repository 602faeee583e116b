"""
The guarded web layer: which URLs may be read (:class:`UrlPolicy`), downloading them within :class:`FetchLimits`
(:func:`fetch`, :func:`fetch_async`), and turning them into text in parser processes (:func:`extract_text`,
:func:`extract_text_async`). docs/safety.md gives the rules.
"""

from haystack_deep_research.web.extract import ExtractedText, extract_text, extract_text_async
from haystack_deep_research.web.fetch import FetchedDocument, fetch, fetch_async
from haystack_deep_research.web.limits import FetchLimits
from haystack_deep_research.web.url_policy import SearchScope, UrlPolicy

__all__ = [
    "ExtractedText",
    "FetchLimits",
    "FetchedDocument",
    "SearchScope",
    "UrlPolicy",
    "extract_text",
    "extract_text_async",
    "fetch",
    "fetch_async",
]
