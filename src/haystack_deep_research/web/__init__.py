"""
The guarded web layer: which URLs may be read, downloading them within limits, and turning them into text.

* :class:`UrlPolicy` refuses non-http(s) URLs, denied domains and every non-public address (loopback, private,
  link-local, cloud metadata, ...) unless it is explicitly allowed.
* :func:`fetch` / :func:`fetch_async` download a URL under :class:`FetchLimits`, checking every redirect hop and
  connecting to the checked address.
* :func:`extract_text` / :func:`extract_text_async` turn a :class:`FetchedDocument` into :class:`ExtractedText`,
  parsing HTML and PDF in a separate process under a time and memory bound; :func:`start_parsers` starts that process
  ahead of the first document, and :func:`prepare_tls_contexts` builds the verifying TLS contexts of the first
  fetches ahead of them.
"""

from haystack_deep_research.web._pool import start as start_parsers
from haystack_deep_research.web._tls import prepare_contexts as prepare_tls_contexts
from haystack_deep_research.web.extract import ExtractedText, extract_text, extract_text_async, extract_text_file
from haystack_deep_research.web.fetch import FetchedDocument, fetch, fetch_async
from haystack_deep_research.web.limits import FetchLimits
from haystack_deep_research.web.url_policy import ResolvedURL, Resolver, SearchScope, UrlPolicy, system_resolver

__all__ = [
    "ExtractedText",
    "FetchLimits",
    "FetchedDocument",
    "ResolvedURL",
    "Resolver",
    "SearchScope",
    "UrlPolicy",
    "extract_text",
    "extract_text_async",
    "extract_text_file",
    "fetch",
    "fetch_async",
    "prepare_tls_contexts",
    "start_parsers",
    "system_resolver",
]
