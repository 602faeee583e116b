"""
The one option set of every surface: the command line, the MCP server and the Hayhooks wrapper read their options
here, below all three.

- :mod:`.parsers`: every command's options (the shared model and source options, the main command's groups, the
  parsers of ``check``, ``mcp`` and ``scan``);
- :mod:`.config`: their defaults from TOML files and ``DEEP_RESEARCH_<OPTION>`` variables, and a server's options
  read from the environment alone;
- :mod:`.arguments`: what the options become (factory arguments: models, budgets, sources);
- :mod:`.exit_codes`: the exit status of every command, and each surface's words for the library's settings;
- :mod:`.check`: checking a report's citations (``deep-research check``, and the MCP server's ``check_report``).
"""
