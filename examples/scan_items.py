"""A multi-item scan with no API key and no network: one research workflow run per item, rows in a JSONL file."""

import tempfile
from functools import partial
from pathlib import Path

from haystack.utils import Secret

from haystack_deep_research import (
    Grounding,
    ReadUrlTool,
    ResearchSummary,
    UrlPolicy,
    WebSearchTool,
    create_research_workflow,
)
from haystack_deep_research.scans import ScanRunner
from haystack_deep_research.testing import (
    LoopbackSearchServer,
    LoopbackWebServer,
    ScriptedChatGenerator,
    SearchDocument,
)


def workflow(search_url: str):
    """A fresh research workflow for one item (scripted models; the real tools, on loopback)."""
    return create_research_workflow(
        chat_generator=ScriptedChatGenerator(role="researcher"),
        tools=[
            WebSearchTool(api_key=Secret.from_token("test"), api_base_url=search_url),
            ReadUrlTool(
                summarizer_llm=ScriptedChatGenerator(role="summarizer"),
                url_policy=UrlPolicy(allow_hosts=("127.0.0.1",)),
            ),
        ],
        output_schema=ResearchSummary,
        causal_llm=ScriptedChatGenerator(role="causal"),
        summary_llm=ScriptedChatGenerator(role="summarize"),
        grounding=Grounding(judge_llm=ScriptedChatGenerator(role="judge")),
    )


with LoopbackWebServer() as web:
    for name, text in [
        ("tides", "Spring tides occur at new and full moon."),
        ("moon", "The moon drives the tides."),
        ("sun", "The sun adds about half as much tidal pull as the moon."),
    ]:
        web.add_page(f"/{name}.html", f"<html><body><article><h1>{name}</h1><p>{text}</p></article></body></html>")
    corpus = [SearchDocument(web.url(f"/{n}.html"), n, n) for n in ("tides", "moon", "sun")]
    with LoopbackSearchServer(corpus) as search, tempfile.TemporaryDirectory() as folder:
        results = Path(folder) / "rows.jsonl"
        scan = ScanRunner(
            provider=["tides", "moon", "sun"],  # one research run per item
            research=partial(workflow, search.base_url),  # a fresh Pipeline per item
            results=results,  # append-only: a rerun skips finished items
            max_concurrency=2,
            on_event=lambda event: print(event.describe()),
        )
        result = scan.run()
        again = scan.run()  # nothing left to research

for row in result.rows:
    print(row.id, row.data["grounding_score"], row.data["sources"])
print(f"second run researched {again.researched}, skipped {again.skipped}")
