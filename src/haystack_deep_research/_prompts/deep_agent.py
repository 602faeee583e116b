"""What the deep agent reads: its rules, reflexion, conversation summaries, scratch files, todos and subagents."""

from haystack_deep_research._prompts._base import DATA_RULE, ChatTemplate, Template

# The deep agent: its loop, reflexion, conversation summaries, memory files and capability layers.
WRITE_FILE, READ_FILE, LS, EDIT_FILE, GLOB, GREP = "write_file", "read_file", "ls", "edit_file", "glob", "grep"
WRITE_TODOS, READ_TODOS = "write_todos", "read_todos"
TASK = "task"

DEEP_AGENT_RULES = Template(
    "deep_agent_rules",
    "{{ system_prompt }}"
    "{% if submit %}\n\nYour work ends only when you call {{ submit }} and it succeeds"
    "{% if min_confidence > 0 %}, with a confidence of at least {{ min_confidence }}{% endif %}.{% endif %}",
)
MEMORY_FILES = Template(
    "memory_files",
    '{% for file in files %}<memory_file path="{{ file.path }}">\n{{ file.text }}\n</memory_file>\n\n{% endfor %}'
    "{{ system_prompt }}",
)
SUBMIT_REMINDER = Template(
    "submit_reminder",
    "You replied without calling {{ tool }}. Your work ends only when {{ tool }} succeeds: keep working, then "
    "submit your result with {{ tool }}.",
)
LOW_CONFIDENCE = Template(
    "low_confidence",
    "Your submission was received, but its confidence {{ confidence }} is below the {{ minimum }} required. Find "
    "more evidence for the weak points, then call {{ tool }} again.",
)
SUBMISSION_INVALID = Template(
    "submission_invalid",
    "Not run: the arguments of {{ tool }} do not match the required schema {{ schema }}. Errors:\n{{ errors }}\n"
    "Call {{ tool }} again with corrected arguments.",
)
NOT_RUN_WITH_INVALID_SUBMISSION = Template(
    "not_run_with_invalid_submission",
    "Not run: it came in the same step as an invalid call of {{ tool }}. Call it again if you still need it.",
)
GROUNDING_SEND_BACK = Template(
    "grounding_send_back",
    "A fact-checker compared your answer with the evidence your tool calls returned (grounding score "
    "{{ score }}, {{ threshold }} required). These claims are not supported by that evidence:\n<untrusted_claims>\n"
    "{% for claim in claims %}- {{ claim }}\n{% endfor %}</untrusted_claims>\n"
    "Research them again with your tools, then answer again, stating each only as far as the evidence supports it.",
)
REFLECT = ChatTemplate(
    "reflect",
    system=(
        "You review the last step of an agent working on a task: the tool calls it made and what they returned. "
        "Decide whether the step moved the task forward. If it did not (a wrong tool, wrong arguments, a result "
        "misread, a dead end), say what went wrong and rewrite the plan. Reply with JSON only, no prose and no "
        'Markdown fences: {"step_ok": true, "critique": "one or two sentences", "plan": "the plan, as short '
        'numbered steps"}. ' + DATA_RULE
    ),
    user=(
        "Task:\n{{ task }}\n\nCurrent plan:\n{{ plan or '(none yet)' }}\n\nLast step:\n<untrusted_step>\n"
        "{% for call in calls %}- called {{ call.tool }} with {{ call.arguments }}\n  returned"
        "{% if call.error %} an error{% endif %}: {{ call.result }}\n{% endfor %}</untrusted_step>"
    ),
)
REFLECTION = Template(
    "reflection",
    "Reflection on your last step: {{ critique }}\nRevised plan:\n{{ plan }}\nFollow the revised plan.",
)
CONDENSE = ChatTemplate(
    "condense",
    system=(
        "Condense the earlier part of an agent's conversation so the agent can keep working with less context. Keep "
        "the task, the decisions made, every fact and figure the tool results established with its source (exact "
        "URLs, file paths, identifiers), and what remains to be done. Drop repetition. Reply with the summary only, "
        "as terse bullets. " + DATA_RULE
    ),
    user=("<untrusted_conversation>\n{% for line in transcript %}{{ line }}\n{% endfor %}</untrusted_conversation>"),
)
CONDENSED = Template(
    "condensed",
    "<conversation_summary>\nSummary of the earlier conversation ({{ count }} messages):\n{{ summary }}\n"
    "</conversation_summary>{% if todos %}\nYour todo list:\n{{ todos }}{% endif %}",
)

WRITE_FILE_DESCRIPTION = "Write a file in your scratch space (creates or replaces it). Paths are relative."
READ_FILE_DESCRIPTION = "Read a file of your scratch space, with line numbers; 'offset' and 'limit' select lines."
LS_DESCRIPTION = "List the files and directories of your scratch space under a directory ('' for the top)."
EDIT_FILE_DESCRIPTION = (
    "Replace the text 'old' with 'new' in a file of your scratch space; 'old' must occur once unless 'replace_all'."
)
GLOB_DESCRIPTION = "Find files of your scratch space whose path matches a pattern such as 'notes/*.md'."
GREP_DESCRIPTION = "Find lines matching a regular expression in the files of your scratch space (optionally a glob)."
SCRATCH_WRITTEN = Template("scratch_written", "Wrote {{ path }} ({{ chars }} characters).")
SCRATCH_NO_MATCH = Template("scratch_no_match", "No {{ what }} found.")
SCRATCH_ABSOLUTE = Template("scratch_absolute", "Refused: '{{ path }}' is absolute; use a relative path.")
SCRATCH_ESCAPE = Template("scratch_escape", "Refused: '{{ path }}' leaves the scratch space ('..' is not allowed).")
SCRATCH_LINK = Template("scratch_link", "Refused: '{{ path }}' passes through a symbolic link.")
SCRATCH_NOT_FOUND = Template("scratch_not_found", "No file '{{ path }}' in the scratch space.")
SCRATCH_TOO_LARGE = Template(
    "scratch_too_large", "Refused: {{ path }} would hold {{ chars }} characters; the limit is {{ limit }}."
)
SCRATCH_TOO_MANY = Template("scratch_too_many", "Refused: the scratch space holds its limit of {{ limit }} files.")
SCRATCH_AMBIGUOUS_EDIT = Template(
    "scratch_ambiguous_edit",
    "Refused: the text occurs {{ count }} times in {{ path }}; give more context or set replace_all.",
)
SCRATCH_BAD_PATTERN = Template("scratch_bad_pattern", "Not a valid regular expression '{{ pattern }}': {{ error }}.")
SCRATCH_EMPTY = Template("scratch_empty", "'{{ name }}' must be a non-empty string; got {{ got }}.")
SCRATCH_HARD_LINK = Template(
    "scratch_hard_link",
    "Refused: '{{ path }}' is a hard link (the same file also lies elsewhere); write another path.",
)
SCRATCH_BINARY = Template(
    "scratch_binary", "Refused: '{{ path }}' is not a text file (not UTF-8, or it holds NUL bytes); it is left as is."
)
SCRATCH_UNREADABLE = Template("scratch_unreadable", "Refused: '{{ path }}' cannot be read: {{ why }}.")
SCRATCH_BIG_PATTERN = Template(
    "scratch_big_pattern",
    "Refused: the regular expression '{{ pattern }}' is {{ size }} items long once its counted repetitions are "
    "written out, past the {{ limit }} a search compiles. Use smaller counts ({n}) or fewer nested ones.",
)
SCRATCH_SLOW_PATTERN = Template(
    "scratch_slow_pattern",
    "Refused: the regular expression '{{ pattern }}' took longer than {{ seconds }} seconds to search; it nests "
    "repetitions that backtrack without end. Use a simpler pattern (no repeated groups of repetitions).",
)

WRITE_TODOS_DESCRIPTION = (
    "Replace your todo list: the whole list, each item with 'content' and 'status' (pending, in_progress, "
    "completed). Use it to plan multi-step work and mark progress."
)
READ_TODOS_DESCRIPTION = "Show your todo list."
TODO_LIST = Template(
    "todo_list",
    "{% for todo in todos %}- [{{ todo.status }}] {{ todo.content }}\n{% else %}The todo list is empty.{% endfor %}",
)
TODOS_INVALID = Template(
    "todos_invalid",
    "write_todos needs 'todos': a list of at most {{ limit }} items, each {'content': text, 'status': 'pending', "
    "'in_progress' or 'completed'}; got {{ got }}.",
)

TASK_DESCRIPTION = Template(
    "task_description",
    "Hand a self-contained task to a subagent; it sees only the task text and returns its final answer. "
    "Subagents:{% for name, description in subagents %}\n- {{ name }}: {{ description }}{% endfor %}",
)
TASK_INVALID = Template(
    "task_invalid",
    "task needs 'subagent_type', one of {{ names | join(', ') }}, and a non-empty 'task'; got {{ got }} and "
    "{{ task }}.",
)
SUBAGENT_EMPTY = Template("subagent_empty", "The subagent {{ name }} returned no answer.")
