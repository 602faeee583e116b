"""haystack-deep-research: turn a question into a structured, cited Markdown research report."""
