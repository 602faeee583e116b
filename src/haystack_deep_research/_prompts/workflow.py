"""What the research workflow and the iterative research agent read."""

from haystack_deep_research._prompts._base import DATA_RULE, ChatTemplate, Template

# The research workflow: execute (a tool loop), causal inference and a replan's focused task (the summary is written
# by the report writer, in parts).
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
# The iterative research agent: the analysis model's decision and what a search round found (the report is written
# by the report writer, in parts), and the "what changed" section of an update.
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
ANALYSIS_RETRY = ANALYSIS.asked_again(
    problem="was not a valid decision", errors="Errors", again="Reply again with the JSON object only."
)
TOPIC_NO_RESULTS = "The search returned no results."
TOPIC_SEARCH_FAILED = Template("topic_search_failed", "The search failed: {{ error }}")
TOPIC_NOTHING_READ = "None of the results could be read, so nothing here may be cited."
WHAT_CHANGED = Template(
    "what_changed",
    "## {{ labels.changed }} ({{ since }})\n\n"
    "{% if new_topics %}- {{ labels.new_topics }}: {{ new_topics | join('; ') }}\n{% endif %}"
    "{% if rechecked %}- {{ labels.rechecked }}: {{ rechecked | join('; ') }}\n{% endif %}"
    "{% if kept %}- {{ labels.kept }}: {{ kept | join('; ') }}\n{% endif %}"
    "{% for url in changed %}- {{ labels.changed_source }}: <{{ url }}>\n{% endfor %}"
    "{% for url in added %}- {{ labels.new_source }}: <{{ url }}>\n{% endfor %}"
    "{% for claim in changed_claims %}- {{ labels.changed_claim }}: {{ claim.previous_figure }} → {{ claim.figure }}, "
    "{{ claim.claim }} ({{ claim.previous_sources | join(', ') }} → {{ claim.sources | join(', ') }})\n{% endfor %}"
    "{% for claim in new_claims %}- {{ labels.new_claim }}: {{ claim.claim }} ({{ claim.sources | join(', ') }})\n"
    "{% endfor %}"
    "{% for claim in dropped_claims %}- {{ labels.dropped_claim }}: {{ claim.claim }} "
    "({{ claim.sources | join(', ') }})\n{% endfor %}"
    "{% if not (new_topics or changed or added or changed_claims or new_claims or dropped_claims) %}"
    "- {{ labels.nothing_new }}\n{% endif %}",
)
"""The section an update of an iterative run puts after the report's title, written from data (no model): the claims
and sources in it come escaped (claims) and as autolinks to sources the run read, or escaped text."""
