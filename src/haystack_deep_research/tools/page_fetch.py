"""
How ``read_url`` gets a page's text: from the cross-run cache when it holds the page (read at least as far as the tool
reads) and this run's URL policy admits it, else fetched under the policy and the fetch limits within the run's time
budget, extracted, cleaned and cut to the tool's length, and stored in the cache.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from haystack_deep_research.errors import FetchError
from haystack_deep_research.evidence.text import clean_text
from haystack_deep_research.run import RunView
from haystack_deep_research.run._cache import CacheStore, page_key
from haystack_deep_research.run._phases import Call, Phase, blocking
from haystack_deep_research.web import (
    FetchedDocument,
    FetchLimits,
    UrlPolicy,
    extract_text,
    extract_text_async,
    fetch,
    fetch_async,
)

__all__ = ["Page", "PageFetcher"]


@dataclass(frozen=True)
class Page:
    """One page's text as ``read_url`` reads it."""

    url: str
    title: str
    text: str
    partial: bool
    final_url: str = ""  # where the body came from, after redirects ("" in entries cached before it was kept)


@dataclass(frozen=True)
class PageFetcher:
    """
    Gets pages for ``read_url``.

    :param policy: Which URLs may be fetched (and read from the cache).
    :param limits: Size cap, timeouts, redirect and PDF page limits.
    :param max_content_length: Characters of page text read and kept.
    :param cache: The cross-run cache, or ``None``.
    """

    policy: UrlPolicy
    limits: FetchLimits
    max_content_length: int
    cache: CacheStore | None = None

    def cached(self, url: str) -> Phase[Page | FetchError | None]:
        """The cached page, if this run's URL policy admits the URL asked for and the one the body came from."""
        if self.cache is None:
            return None
        [looked_up] = yield [blocking(self.cache.get, "page", page_key(url))]
        if looked_up.error is not None:
            raise looked_up.error
        found = looked_up.value if isinstance(looked_up.value, dict) else None
        if found is None or (found.get("partial") and int(found.get("limit") or 0) < self.max_content_length):
            return None  # cut shorter than this tool reads: fetch it again
        final, policy = str(found.get("final_url") or url), self.policy
        [admitted] = yield [blocking(lambda: [policy.check(one) for one in dict.fromkeys((url, final))])]
        if isinstance(admitted.error, FetchError):
            return admitted.error  # stored by a run under another policy: this run may not read it
        if admitted.error is not None:
            raise admitted.error
        title, text = str(found.get("title") or ""), str(found.get("text") or "")
        return self.cut(url, title, text, bool(found.get("partial")), final_url=final)

    def fetched(self, view: RunView | None, url: str) -> Phase[Page | FetchError]:
        """The page fetched and extracted (and stored in the cache), or why it could not be read."""
        policy, limits = self.policy, self.limits
        # The run's time budget caps every read: research stuck in I/O still ends on time.
        left = view.time_left() if view is not None else None
        [fetched] = yield [
            Call(
                lambda: fetch(url, policy=policy, limits=limits, deadline_s=left),
                lambda: fetch_async(url, policy=policy, limits=limits, deadline_s=left),
            )
        ]
        if fetched.error is None:
            document: FetchedDocument = fetched.value
            left = view.time_left() if view is not None else None
            [extracted] = yield [
                Call(
                    lambda: extract_text(document, limits=limits, deadline_s=left),
                    lambda: extract_text_async(document, limits=limits, deadline_s=left),
                )
            ]
        else:
            extracted = fetched
        if isinstance(extracted.error, FetchError):
            return extracted.error
        if extracted.error is not None:
            raise extracted.error
        title, text = clean_text(extracted.value.title), clean_text(extracted.value.text)
        page = self.cut(url, title, text, final_url=document.final_url)
        if self.cache is not None:
            stored = {**asdict(page), "limit": self.max_content_length}
            yield [blocking(self.cache.put, "page", page_key(url), stored)]
        return page

    def cut(self, url: str, title: str, text: str, partial: bool = False, *, final_url: str = "") -> Page:
        """The page as ``read_url`` reads it: its text cut to ``max_content_length`` characters."""
        partial = partial or len(text) > self.max_content_length
        return Page(url=url, title=title, text=text[: self.max_content_length], partial=partial, final_url=final_url)
