"""The tools' and their parameters' descriptions, and the errors a model reads when it called a tool wrongly."""

from haystack_deep_research import errors
from haystack_deep_research._prompts._base import MAX_URLS_PER_READ, READ_URL, RESEARCH_SUBTOPIC, WEB_SEARCH, Template

# Tool descriptions and the descriptions of their parameters.
RESEARCH_SUBTOPIC_DESCRIPTION = (
    "Delegate one self-contained sub-topic to a researcher who searches and reads the web; returns a summary of the "
    "findings with exact source URLs. Calls in one turn run in parallel."
)
SUBTOPIC_PARAMETER = "The sub-topic with all the context a researcher needs; it sees nothing else."
WEB_SEARCH_DESCRIPTION = Template(
    "web_search_description",
    "Search the web: up to {{ max_results }} results, each with title, exact URL and snippet. "
    f"Read the pages with {READ_URL}: a snippet backs only what it states itself.",
)
QUERY_PARAMETER = "A focused search query."
DATASTORE_SEARCH_DESCRIPTION = Template(
    "datastore_search_description",
    "Search the private document store '{{ name }}'{% if description %}: {{ description }}{% endif %}. Returns up "
    "to {{ top_k }} passages, each with its Source and text; they count as read and may be cited by that Source.",
)
TOP_K_PARAMETER = "How many passages to return (optional)."
READ_URL_DESCRIPTION = (
    f"Read up to {MAX_URLS_PER_READ} web pages or PDFs; get a summary of each toward your question. "
    "Pages read here may be cited; for a page that cannot be read, its search result's snippet is given instead."
)
URLS_PARAMETER = "Exact URLs from search results."
QUESTION_PARAMETER = "What to learn from the pages."
THINK_DESCRIPTION = (
    "Reflect before acting: what the findings establish, what is missing, what to do next. Changes nothing."
)
REFLECTION_PARAMETER = "Your reflection."
THINK_ACKNOWLEDGEMENT = "Reflection recorded."

# What a model reads when it called a tool wrongly (the library raises ToolArgumentsError with these texts).
SUBTOPIC_MISSING = Template(
    "subtopic_missing",
    f"{RESEARCH_SUBTOPIC} needs 'subtopic': a non-empty string describing the sub-topic; got {{{{ got }}}}.",
)
SUBTOPIC_IS_ERROR = Template(
    "subtopic_is_error",
    f"Not run: that {RESEARCH_SUBTOPIC} 'subtopic' is an error message, not something to research. Delegate a "
    "question about the research brief, or reply that research is complete.",
)
QUERY_MISSING = Template("query_missing", f"{WEB_SEARCH} needs a non-empty string argument 'query'; got {{{{ got }}}}.")
STORE_QUERY_MISSING = Template(
    "store_query_missing", "{{ tool }} needs a non-empty string argument 'query'; got {{ got }}."
)
TOP_K_INVALID = Template(
    "top_k_invalid", "{{ tool }} takes 'top_k' as a whole number from 1 to {{ limit }}; got {{ got }}."
)
URLS_MISSING = f"{READ_URL} needs 'urls': a list of 1 to {MAX_URLS_PER_READ} URL strings."
TOO_MANY_URLS = Template(
    "too_many_urls", f"{READ_URL} reads at most {MAX_URLS_PER_READ} URLs per call; got {{{{ count }}}}."
)
QUESTION_MISSING = f"{READ_URL} needs 'question': a non-empty string saying what to learn from the pages."

TOOL_FAILED = Template("tool_failed", "{{ tool }} failed: {{ error }}{% if advice %} {{ advice }}{% endif %}")
"""The tool result a model reads when a tool failed."""

TOOL_ERROR_ADVICE: dict[type[Exception], str] = {
    errors.DelegationLimitError: "Work with the findings you have and finish.",
    errors.BudgetExceededError: "Do not delegate more; reply that research is complete.",
}
"""What a model is told to do after a tool failed with one of these errors."""
