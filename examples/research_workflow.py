"""The research workflow with no API key and no network: scripted models, loopback search and web."""

from haystack.dataclasses import ChatMessage
from haystack.utils import Secret

from haystack_deep_research import (
    Grounding,
    ReadUrlTool,
    ResearchSummary,
    UrlPolicy,
    WebSearchTool,
    create_research_workflow,
)
from haystack_deep_research.testing import (
    LoopbackSearchServer,
    LoopbackWebServer,
    ScriptedChatGenerator,
    SearchDocument,
)

with LoopbackWebServer() as web:
    web.add_page(
        "/tides.html",
        "<html><body><article><h1>Tides</h1><p>Spring tides occur at new and full moon, "
        "when the sun and moon pull in line.</p></article></body></html>",
    )
    corpus = [SearchDocument(web.url("/tides.html"), "Tides", "Spring tides occur at new and full moon.")]
    with LoopbackSearchServer(corpus) as search:
        workflow = create_research_workflow(
            chat_generator=ScriptedChatGenerator(role="researcher"),
            tools=[
                WebSearchTool(api_key=Secret.from_token("test"), api_base_url=search.base_url),
                ReadUrlTool(
                    summarizer_llm=ScriptedChatGenerator(role="summarizer"),
                    url_policy=UrlPolicy(allow_hosts=("127.0.0.1",)),  # the default policy refuses loopback
                ),
            ],
            output_schema=ResearchSummary,
            causal_llm=ScriptedChatGenerator(role="causal"),
            summary_llm=ScriptedChatGenerator(
                role="summarize", unsupported_claims=["Tides stopped in 1990"], corrects="on_new_evidence"
            ),
            grounding=Grounding(judge_llm=ScriptedChatGenerator(role="judge"), threshold=0.9),
        )
        result = workflow.run(messages=[ChatMessage.from_user("What causes spring tides?")])

print(result["report"])
print(
    f"grounding {result['grounding_score']:.0%}, rewrites {result['regeneration_count']}, "
    f"replans {result['replan_count']}, exit reason {result['exit_reason']}"
)
print(result["structured"].model_dump_json(indent=1))
