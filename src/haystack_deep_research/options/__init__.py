"""
The one option set of every surface (the command line, the MCP server, the Hayhooks wrapper): each command's parser
(:mod:`.parsers`), their defaults from config files and the environment (:mod:`.config`), what they become
(:mod:`.arguments`), the exit status (:mod:`.exit_codes`), where a run stands (:mod:`.progress`) and ``check``.
"""
