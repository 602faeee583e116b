"""A complete research run with no API key and no network: scripted models, loopback search and web."""

from haystack.dataclasses import ChatMessage
from haystack.utils import Secret

from haystack_deep_research import Sources, UrlPolicy, WebSearchTool, create_deep_research_agent
from haystack_deep_research.testing import (
    LoopbackSearchServer,
    LoopbackWebServer,
    ScriptedChatGenerator,
    SearchDocument,
)

with LoopbackWebServer() as web:
    web.add_page(
        "/tides.html",
        "<html><body><article><h1>Tides</h1><p>Spring tides occur at new and full moon, when the sun and moon "
        "pull in line.</p><p>Neap tides occur at the quarter moons.</p></article></body></html>",
    )
    web.add_pdf("/moon.pdf", ["The moon's gravity is the main driver of ocean tides on Earth."], title="Moon")
    corpus = [
        SearchDocument(web.url("/tides.html"), "Tides", "Spring and neap tides explained."),
        SearchDocument(web.url("/moon.pdf"), "Moon", "The moon drives the tides."),
    ]
    with LoopbackSearchServer(corpus) as search:
        agent = create_deep_research_agent(
            scope_llm=ScriptedChatGenerator(role="scope"),
            orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=["spring tides", "the moon"]),
            researcher_llm=ScriptedChatGenerator(role="researcher"),
            summarizer_llm=ScriptedChatGenerator(role="summarizer"),
            writer_llm=ScriptedChatGenerator(role="writer"),
            sources=Sources(
                search=WebSearchTool(api_key=Secret.from_token("test"), api_base_url=search.base_url),
                url_policy=UrlPolicy(allow_hosts=("127.0.0.1",)),
            ),
        )
        result = agent.run(messages=[ChatMessage.from_user("What causes spring tides?")])

    # Assert while the web server still runs: its URLs name its port.
    assert f"]({web.url('/tides.html')})" in result["report"]
    assert len(result["notes"]) == 2

print(result["report"])
