"""What the scope model, the orchestrator, the researchers and the summarizer read; their tool results and notes."""

from haystack_deep_research import state
from haystack_deep_research._prompts._base import (
    DATA_RULE,
    READ_URL,
    RESEARCH_SUBTOPIC,
    THINK,
    WEB_SEARCH,
    ChatTemplate,
    Template,
)

_SCOPE_SYSTEM = (
    "Turn the research question into a brief for a research team, written in the question's language: the "
    "objective, the sub-questions that matter, the scope (time frame, regions, preferred sources) and what the "
    "final report must contain. Do not answer the question. "
)
_SCOPE_USER = "Today's date: {{ today }}\n\nResearch question:\n{{ question }}"
SCOPE = ChatTemplate("scope", system=_SCOPE_SYSTEM + "Reply with the brief only.", user=_SCOPE_USER)
SCOPE_CLARIFY = ChatTemplate(
    "scope_clarify",
    system=_SCOPE_SYSTEM
    + (
        "If the question is so ambiguous or broad that one answer from the user would change the research "
        "substantially, ask that one clarifying question instead of writing the brief. Reply with JSON only, no prose "
        'and no Markdown fences: {"clarification": "your one question"} to ask, or {"brief": "the brief"} to go '
        "ahead. Ask only when it matters; otherwise write the brief."
    ),
    user=_SCOPE_USER,
)
"""The scope prompt with ``clarify=True``: a brief, or one clarifying question, as JSON."""
SCOPE_CLARIFIED = ChatTemplate(
    "scope_clarified",
    system=SCOPE.system,
    user=_SCOPE_USER
    + (
        "{% for turn in clarifications %}\n\nClarifying question asked: {{ turn.question }}\n"
        "The user's answer: {{ turn.answer }}{% endfor %}\n\nWrite the brief from the question and the answers."
    ),
)
"""The scope prompt of a conversation in which clarifying questions were answered: the brief from all of it."""
CLARIFIED_QUESTION = Template(
    "clarified_question",
    "{{ question }}{% for turn in clarifications %}\n\n{{ turn.question }}\n{{ turn.answer }}{% endfor %}",
)
"""The brief when the scope model fails: the question, with any clarifying questions and their answers."""
MAX_CLARIFICATION_CHARS = 1_000
"""The longest clarifying question a run returns; a longer one is cut."""

ORCHESTRATOR_SYSTEM = (
    "You lead a research team; the user message is the research brief. Split it into focused sub-topics and "
    f"delegate each with {RESEARCH_SUBTOPIC}: at most {{{{ max_subtopics }}}} sub-topics in the whole run. A "
    "researcher sees only the sub-topic text, so make it complete. Delegate independent sub-topics in one turn: they "
    f"run in parallel. Use {THINK} to check coverage before delegating more. When the brief is covered or the budget "
    "is spent, reply with one short sentence saying research is complete; a writer turns the findings into the "
    "report. " + DATA_RULE
)

RESEARCHER_SYSTEM = (
    f"You research one sub-topic on the web: find sources with {WEB_SEARCH}, read the most promising with {READ_URL} "
    f"(several URLs per call), reflect with {THINK}. You have at most {{{{ max_steps }}}} steps; stop once the "
    "findings are solid. Final reply: a compressed summary of concrete facts, figures and dates, each followed by "
    "the exact URL it came from as a Markdown link, then a 'Sources:' list. Cite the URLs you read with "
    f"{READ_URL}; a page it could not read may be cited only for what its search snippet states. " + DATA_RULE
)
RESEARCHER_SYSTEM_DOCUMENTS = (
    "You research one sub-topic in private document stores: search them with their search tools (several queries "
    f"and stores if needed), reflect with {THINK}. You have at most {{{{ max_steps }}}} steps; stop once the findings "
    "are solid. Final reply: a compressed summary of concrete facts, figures and dates, each followed by the exact "
    "Source of the document it came from as a Markdown link, then a 'Sources:' list. Cite only documents the store "
    "searches returned, by their Source exactly as given. " + DATA_RULE
)
"""The researcher's system prompt when it has no web tools (``Sources(web=False)``): document stores only."""
DATASTORE_ROUTING = Template(
    "datastore_routing",
    "Private document stores{% if web %} (besides the web){% endif %}: search the store whose description fits "
    "what you need, one query per call:\n"
    "{% for store in stores %}- {{ store.tool }}: {{ store.description }}\n{% endfor %}"
    "A document a store search returns counts as read: cite it by its Source, exactly as given.",
)
"""The routing block added to a researcher's system prompt, built from the datastores' descriptions."""
RESEARCHER_TASK = Template("researcher_task", "Today's date: {{ today }}\n\nSub-topic to research:\n{{ subtopic }}")
_FINAL_SUMMARY_REQUEST = (
    "Do not call any tools. Write your final summary now from what you have found so far: concrete findings, each "
    "with the exact URL it came from as a Markdown link, then a 'Sources:' list. Say plainly which parts of the "
    "sub-topic remain unanswered."
)
RESEARCHER_FINAL = Template("researcher_final", "You have reached your step limit. " + _FINAL_SUMMARY_REQUEST)
RESEARCHER_STOPPED = Template("researcher_stopped", "Your research was stopped: {{ why }}. " + _FINAL_SUMMARY_REQUEST)
STOPPED_BY_LOOP = "you kept repeating the same tool call with the same arguments"
STOPPED_BY_TOKEN_BUDGET = "the run's token budget is spent"  # noqa: S105 - prompt text, not a secret
STOPPED_BY_TIME_BUDGET = "the run's time budget is spent"
STOPPED_BY_COST_BUDGET = "the run's cost budget is spent"

LOOP_WARNING = Template(
    "loop_warning",
    "Not run: you called {{ tool }} with the same arguments {{ count }} times in a row, and it would only return the "
    "same result again. Change course: call a tool with different arguments, use another tool, or write your final "
    "summary now.",
)
LOOP_STOPPED = Template(
    "loop_stopped",
    "Not run: you kept calling {{ tool }} with the same arguments after being told to change course, so your work "
    "on this task is stopped.",
)

RESUMED_SUBTOPICS = Template(
    "resumed_subtopics",
    "This run was resumed. These sub-topics were already researched and their findings are kept for the report:\n"
    "{% for subtopic in subtopics %}- {{ subtopic }}\n{% endfor %}"
    "Delegate only what is still missing; delegating one of them again returns its saved findings.",
)

SUMMARIZER = ChatTemplate(
    "summarizer",
    system=(
        "Summarize the document toward the research question: keep the facts, figures, dates, names and quotations "
        "that bear on it, drop the rest, never invent. If it does not address the question, say so in one sentence. "
        + DATA_RULE
    ),
    user=(
        "Research question: {{ question }}\n\n"
        '<untrusted_document url="{{ url }}" title="{{ title }}">\n{{ content }}\n</untrusted_document>'
    ),
)
SUMMARIZER_PASSAGES = ChatTemplate(
    "summarizer_passages",
    system=SUMMARIZER.system,
    user=(
        "Research question: {{ question }}\n\n"
        "The document's {{ kept }} passages (of {{ total }}) most relevant to the question; [...] marks text left "
        "out.\n"
        '<untrusted_document url="{{ url }}" title="{{ title }}">\n{{ content }}\n</untrusted_document>'
    ),
)
"""The summarizer's prompt when it reads only a page's most relevant passages."""
OMITTED = "[...]"
"""Stands where passages of a document were left out of what the summarizer reads."""


SNIPPET_LABEL = "Snippet: "
SEARCH_RESULTS_END = "</untrusted_search_results>"
SEARCH_RESULTS = Template(
    "search_results",
    '<untrusted_search_results query="{{ query }}">\n'
    "{% for r in results %}[{{ loop.index }}] {{ r.title }}\nURL: {{ r.url }}\n" + SNIPPET_LABEL + "{{ r.snippet }}\n\n"
    "{% else %}No results.\n{% endfor %}"
    + SEARCH_RESULTS_END
    + "{% if dropped %}\n({{ dropped }} result(s) outside the run's chosen domains or dates were left out.){% endif %}",
)
SCOPE_DROPPED = Template(
    "scope_dropped",
    "web search results outside the chosen domains or dates are dropped before anything reads or cites them "
    "(the first search that dropped any left out {{ dropped }})",
)
"""Said once per run, the first time a search scope drops a result."""
SNIPPETS_LEFT_OUT = "(The snippets of these results were left out once you had seen them; titles and URLs are kept.)"
"""Follows a researcher's search results whose snippets were dropped after the model had acted on them."""
PAGE_SUMMARY = Template(
    "page_summary",
    "Source: {{ url }}\nTitle: {{ title }}\n"
    "{% if partial %}(Only the first {{ limit }} characters were read.)\n{% endif %}"
    "{% if excerpt %}Passages:\n"
    '<untrusted_document url="{{ url }}">\n{{ excerpt }}\n</untrusted_document>'
    "{% else %}Summary:\n{{ summary }}{% endif %}",
)
"""A page read: the summarizer's summary, or the page's passages most relevant to the question as they are, with
``[...]`` where text was left out (fenced: untrusted)."""
DOCUMENT_SEPARATOR = "\n\n---\n\n"
"""Separates the documents of one datastore search result."""
DOCUMENT_RESULTS = Template(
    "document_results",
    '<untrusted_documents store="{{ store }}" query="{{ query }}">\n'
    "{% for d in documents %}[{{ loop.index }}] {{ d.title }}\nSource: {{ d.url }}\n{{ d.text }}"
    "{% if not loop.last %}" + DOCUMENT_SEPARATOR + "{% endif %}"
    "{% else %}No documents.{% endfor %}\n</untrusted_documents>",
)
PAGE_UNREADABLE = Template(
    "page_unreadable",
    "Could not read {{ url }}: {{ reason }}"
    "{% if snippet %}\nWhat its search result's snippet says (the search engine's words, not the page: cite {{ url }} "
    "only for what this snippet states):\n"
    '<untrusted_snippet url="{{ url }}">\n{{ snippet }}\n</untrusted_snippet>{% endif %}',
)
"""A page that could not be read, and the snippet its search result gave, if any (fenced: untrusted)."""
PAGE_DUPLICATE = Template(
    "page_duplicate",
    "(This page has the same text as {{ url }}, read earlier in this run; this is that page's summary.)\n{{ summary }}",
)
SUMMARIZER_EMPTY = "the summarizer returned no text."
SUMMARIZER_FAILED = Template("summarizer_failed", "the summarizer failed ({{ error }}).")

PARTIAL_REASONS = {
    state.EXIT_SUMMARY_FAILED: "the researcher could not write a summary; these are the raw results it gathered",
    "max_agent_steps": "the researcher reached its step limit; this summary covers only what it gathered",
    "length": "the researcher's reply hit the model's output limit and may be cut off",
    "content_filter": "the researcher's reply was stopped by a content filter and may be incomplete",
    state.EXIT_LOOP_DETECTED: "the researcher kept repeating the same tool call and was stopped; this summary covers "
    "only what it gathered",
    state.EXIT_TOKEN_BUDGET: "the run's token budget was spent; this summary covers only what the researcher gathered",
    state.EXIT_TIME_BUDGET: "the run's time budget was spent; this summary covers only what the researcher gathered",
    state.EXIT_COST_BUDGET: "the run's cost budget was spent; this summary covers only what the researcher gathered",
}
"""Why a researcher's note is partial, by the researcher's ``exit_reason``."""

NOTE = Template("note", "## {{ subtopic }}\n\n{{ summary }}{% if partial %}\n\n[Partial: {{ reason }}]{% endif %}")


ORCHESTRATOR_STAND_IN = Template(
    "orchestrator_stand_in", "Research stopped: the orchestrator model failed ({{ why }})."
)
