"""
The guarded web layer: which URLs may be read, downloading them within limits, and turning them into text.

* :class:`UrlPolicy` refuses non-http(s) URLs, denied domains and every non-public address (loopback, private,
  link-local, cloud metadata, ...) unless it is explicitly allowed.
* :func:`fetch` / :func:`fetch_async` download a URL under :class:`FetchLimits`, checking every redirect hop and
  connecting to the checked address.
* :func:`extract_text` / :func:`extract_text_async` turn a :class:`FetchedDocument` into :class:`ExtractedText`,
  parsing HTML and PDF in a separate process under a time and memory bound (the ``read_url`` tool's ``warm_up`` starts
  that process, and builds the verifying TLS contexts of the first fetches, ahead of them).
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
