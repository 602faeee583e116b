"""
What the research workflow and the iterative research agent read.
"""

from __future__ import annotations

from haystack_deep_research.prompts._base import DATA_RULE, ChatTemplate, Template

__all__ = [
    "ANALYSIS",
    "ANALYSIS_RETRY",
    "CAUSAL",
    "EXECUTE_SYSTEM",
    "EXECUTE_TASK",
    "ITERATIVE_REPORT",
    "REPLAN_NOTE_TITLE",
    "REPLAN_TASK",
    "SUMMARY",
    "SUMMARY_REWRITE",
    "TOPIC_NOTHING_READ",
    "TOPIC_NO_RESULTS",
    "TOPIC_SEARCH_FAILED",
    "WHAT_CHANGED",
]

# The research workflow: execute (a tool loop), causal inference, summary, rewrite, and a replan's focused task.
EXECUTE_SYSTEM = (
    "You gather the evidence that answers a research question, with the tools you are given. Use them until the "
    "evidence is solid; you have at most {{ max_steps }} steps. Final reply: the findings as concrete facts, figures "
    "and dates, each followed by the exact URL it came from as a Markdown link, then a 'Sources:' list. Cite only "
    "sources your tools returned; never invent a URL. " + DATA_RULE
)
EXECUTE_TASK = Template("execute_task", "Today's date: {{ today }}\n\nResearch question:\n{{ question }}")
REPLAN_TASK = Template(
    "replan_task",
    "Today's date: {{ today }}\n\nResearch question:\n{{ question }}\n\n"
    "A fact-checker found these claims of the draft summary unsupported by the evidence gathered so far:\n"
    "<untrusted_claims>\n{% for claim in claims %}- {{ claim }}\n{% endfor %}</untrusted_claims>\n"
    "Gather evidence on exactly these claims: find what reliable sources say about each (it may be wrong, outdated "
    "or imprecise).",
)
REPLAN_NOTE_TITLE = Template(
    "replan_note_title", "Evidence on claims checked again (round {{ round }}): {{ claims | join('; ') }}"
)
_FINDINGS = (
    "Research question:\n{{ question }}\n\n"
    '{% for note in findings %}<untrusted_findings index="{{ loop.index }}">\n{{ note }}\n</untrusted_findings>\n\n'
    "{% endfor %}"
)
CAUSAL = ChatTemplate(
    "causal",
    system=(
        "From the findings, build the causal chain behind the answer to the research question: a numbered list of "
        "steps 'cause -> effect' (causes, mechanisms, effects), each citing the URL of the finding it rests on as a "
        "Markdown link. Mark a link the findings only suggest with (uncertain). Add nothing the findings do not "
        "state. " + DATA_RULE
    ),
    user=_FINDINGS,
)
_SUMMARY_USER = (
    _FINDINGS
    + "{% if causal_chain %}Causal chain built from the findings:\n<untrusted_causal_chain>\n{{ causal_chain }}\n"
    "</untrusted_causal_chain>\n\n{% endif %}"
    "Allowed source URLs:\n{% for url in urls %}- {{ url }}\n{% else %}(none)\n{% endfor %}"
)
SUMMARY = ChatTemplate(
    "summary",
    system=(
        "Distil the findings into a summary that answers the research question, in the question's language, in "
        "Markdown: the answer in a few sentences, then the key findings, one per line. Back every factual claim with "
        "an inline citation [short title](url), citing only URLs from the allowed list, exactly as written there. "
        "When a causal chain is given, explain the answer along it. Say where the evidence is missing or "
        "conflicting. " + DATA_RULE
    ),
    user=_SUMMARY_USER,
)
SUMMARY_REWRITE = ChatTemplate(
    "summary_rewrite",
    system=SUMMARY.system,
    user=_SUMMARY_USER
    + (
        "\n\nYour previous draft:\n<untrusted_draft>\n{{ previous }}\n</untrusted_draft>\n"
        "A fact-checker compared it with the stored text of the sources it cites. These claims are not supported "
        "by the sources they cite:\n<untrusted_claims>\n{% for claim in unsupported %}- {{ claim }}\n{% endfor %}"
        "</untrusted_claims>\nWrite the whole summary again from the findings. State each of these claims only as "
        "far as a finding supports it, citing the source that finding gives for it; otherwise leave the claim out."
    ),
)

# The iterative research agent: the analysis model's decision, what a search round found, the final report.
_ANALYSIS_SYSTEM = (
    "You steer an iterative web research. You get the research question, the topics already searched and what the "
    "searches found. Decide whether another search would add what the findings still lack, and what to search next. "
    "Reply with JSON only, no prose and no Markdown fences: "
    '{"nextSearchTopic": {% if max_topics > 1 %}"a query" or ["query 1", "query 2"]{% else %}"a query"{% endif %}, '
    '"shouldContinue": true}. nextSearchTopic is '
    "{% if max_topics > 1 %}one search query, or a list of up to {{ max_topics }} independent queries searched at "
    "once{% else %}one search query{% endif %}, in the question's language, each different from every topic already "
    'searched. When the findings answer the question, reply {"nextSearchTopic": null, "shouldContinue": false}. '
    + DATA_RULE
)
_ANALYSIS_USER = (
    "{% if since %}This updates research last done on {{ since }}: look for what is new or changed since then.\n\n"
    "{% endif %}Research question:\n{{ question }}\n\nSearch round {{ round }} of {{ depth }}.\n\n"
    "Topics already searched:\n<untrusted_topics>\n{% for topic in topics %}- {{ topic }}\n{% else %}(none)\n"
    "{% endfor %}</untrusted_topics>\n\n"
    '{% for note in findings %}<untrusted_findings index="{{ loop.index }}">\n{{ note }}\n</untrusted_findings>\n\n'
    "{% endfor %}"
    "{% if refused %}You proposed topics that repeat topics already searched, so they were refused:\n"
    "<untrusted_refused>\n{% for topic in refused %}- {{ topic }}\n{% endfor %}</untrusted_refused>\n"
    "Propose different topics, or stop.{% endif %}"
)
ANALYSIS = ChatTemplate("analysis", system=_ANALYSIS_SYSTEM, user=_ANALYSIS_USER)
ANALYSIS_RETRY = ChatTemplate(
    "analysis_retry",
    system=_ANALYSIS_SYSTEM,
    user=_ANALYSIS_USER
    + (
        "\n\nYour previous reply was not a valid decision.\nPrevious reply:\n<untrusted_previous_reply>\n"
        "{{ previous }}\n</untrusted_previous_reply>\nErrors:\n{{ errors }}\n\nReply again with the JSON object only."
    ),
)
TOPIC_NO_RESULTS = "The search returned no results."
TOPIC_SEARCH_FAILED = Template("topic_search_failed", "The search failed: {{ error }}")
TOPIC_NOTHING_READ = "None of the results could be read, so nothing here may be cited."
ITERATIVE_REPORT = ChatTemplate(
    "iterative_report",
    system=(
        "Write a comprehensive research report in Markdown from the findings of several rounds of web research, in "
        "the language of the research question: a '# ' title, then these sections in this order: "
        "'## {{ sections.summary }}' (executive summary), '## {{ sections.findings }}' (the main findings grouped by "
        "theme, one '### ' heading per theme), '## {{ sections.conclusions }}' (conclusions and recommendations), "
        "'## {{ sections.uncertainties }}' (remaining uncertainties and disagreements), '## {{ sections.future }}' "
        "(future research directions), '## {{ sections.sources }}' listing each cited URL once."
        "{% if translate %} Translate these headings into the question's language.{% endif %} Use only what the "
        "findings state; add nothing. Back every factual claim with an inline citation [short title](url), citing "
        "only URLs from the allowed list, exactly as written there; never invent or alter a URL. " + DATA_RULE
    ),
    user=(
        "Research question:\n{{ question }}\n\nTopics searched:\n<untrusted_topics>\n"
        "{% for topic in topics %}- {{ topic }}\n{% endfor %}</untrusted_topics>\n\n"
        '{% for note in findings %}<untrusted_findings index="{{ loop.index }}">\n{{ note }}\n</untrusted_findings>'
        "\n\n{% endfor %}"
        "Allowed source URLs:\n{% for url in urls %}- {{ url }}\n{% else %}(none)\n{% endfor %}"
    ),
)
WHAT_CHANGED = Template(
    "what_changed",
    "## {{ labels.changed }} ({{ since }})\n\n"
    "{% if new_topics %}- {{ labels.new_topics }}: {{ new_topics | join('; ') }}\n{% endif %}"
    "{% if rechecked %}- {{ labels.rechecked }}: {{ rechecked | join('; ') }}\n{% endif %}"
    "{% if kept %}- {{ labels.kept }}: {{ kept | join('; ') }}\n{% endif %}"
    "{% for url in changed %}- {{ labels.changed_source }}: <{{ url }}>\n{% endfor %}"
    "{% for url in added %}- {{ labels.new_source }}: <{{ url }}>\n{% endfor %}"
    "{% if not (new_topics or changed or added) %}- {{ labels.nothing_new }}\n{% endif %}",
)
"""The section an update of an iterative run puts after the report's title, written from data (no model)."""
