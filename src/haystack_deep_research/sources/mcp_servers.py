"""
MCP servers as sources: the tools of any MCP server (a wiki, a ticket system, a database) searched by the researchers.

A server is given as an :class:`MCPServer`: a name and either a command started over stdio or the URL of a
streamable-HTTP endpoint::

    mcp_servers=[
        MCPServer(name="tickets", command=["python", "ticket_server.py"], description="support tickets"),
        MCPServer(name="wiki", url="http://127.0.0.1:8000/mcp"),
    ]

Every factory takes them as ``sources=Sources(mcp_servers=...)``. Each run connects to each server once, on first
use, lists its tools and offers each as a tool named ``<server>_<tool>``; the connection closes when the run closes.
A server that does not start within ``connect_timeout`` is a warning of the run, which goes on with its other
sources.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from haystack_deep_research import _checks
from haystack_deep_research._serialization import FieldsSerialized
from haystack_deep_research.errors import ConfigurationError

__all__ = ["MCPServer", "mcp_servers_from"]

_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,29}[a-z0-9])?$")


@dataclass(frozen=True)
class MCPServer(FieldsSerialized):
    """
    One MCP server whose tools the researchers may call.

    :param name: A host name label (lower-case letters, digits and inner hyphens, at most 31 characters): the prefix
        of its tools' names and the host of the ``mcp://<name>/<tool>/<id>`` citations of what they return.
    :param command: The command that starts the server over stdio, as a list (``["python", "server.py"]``).
    :param url: The server's streamable-HTTP endpoint (``http://127.0.0.1:8000/mcp``), instead of a command.
    :param env: Environment variables for the command, on top of a minimal default environment.
    :param cwd: The command's working directory.
    :param description: What the server holds; shown to the researchers next to its tools.
    :param connect_timeout: Seconds to start the server and list its tools, more than 0 and up to 600.
    :param call_timeout: Seconds one tool call may take, more than 0 and up to 3600.
    :raises ConfigurationError: If a field is invalid, or both or neither of ``command`` and ``url`` are given.
    """

    name: str
    command: Sequence[str] | None = None
    url: str | None = None
    env: Mapping[str, str] | None = field(default=None, compare=False)
    cwd: str | None = None
    description: str = ""
    connect_timeout: float = 20.0
    call_timeout: float = 60.0

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ConfigurationError(
                "an MCP server name must be lower-case letters, digits and hyphens, starting and ending with a letter "
                "or digit, at most 31 characters (it prefixes its tools' names and is the host of its citations "
                f"mcp://<name>/...); got {self.name!r}."
            )
        if (self.command is None) == (self.url is None):
            raise ConfigurationError(
                f"MCPServer {self.name!r} needs exactly one of command=[...] (a server started over stdio) or "
                "url='http://host:port/mcp' (a streamable-HTTP server)."
            )
        if self.command is not None:
            if isinstance(self.command, str) or not self.command or not all(isinstance(p, str) for p in self.command):
                raise ConfigurationError(
                    f"MCPServer {self.name!r}: command must be a non-empty list of strings, for example "
                    f"['python', 'server.py']; got {self.command!r}."
                )
            object.__setattr__(self, "command", tuple(self.command))
        if self.url is not None and (
            not isinstance(self.url, str) or not self.url.lower().startswith(("http://", "https://"))
        ):
            raise ConfigurationError(f"MCPServer {self.name!r}: url must be an http(s) URL; got {self.url!r}.")
        if self.env is not None and (
            not isinstance(self.env, Mapping)
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in self.env.items())
        ):
            raise ConfigurationError(f"MCPServer {self.name!r}: env must map names to strings.")
        if self.cwd is not None and not isinstance(self.cwd, str):
            raise ConfigurationError(f"MCPServer {self.name!r}: cwd must be a string path.")
        if not isinstance(self.description, str):
            raise ConfigurationError(f"MCPServer {self.name!r}: description must be a string.")
        _checks.number_in_range(f"MCPServer({self.name!r}).connect_timeout", self.connect_timeout, 0, 600)
        _checks.number_in_range(f"MCPServer({self.name!r}).call_timeout", self.call_timeout, 0, 3600)


def mcp_servers_from(servers: Any) -> list[MCPServer]:
    """
    The ``mcp_servers`` of a :class:`~haystack_deep_research.Sources` (``None``, or a list of :class:`MCPServer` with
    distinct names), checked, in order; anything else raises ``ConfigurationError``.
    """
    if servers is None:
        return []
    if isinstance(servers, MCPServer):
        servers = [servers]
    if not isinstance(servers, list | tuple) or not all(isinstance(server, MCPServer) for server in servers):
        raise ConfigurationError(
            "mcp_servers must be a list of MCPServer, for example [MCPServer(name='wiki', command=['wiki-mcp'])]; "
            f"got {type(servers).__name__}."
        )
    names = [server.name for server in servers]
    if len(set(names)) != len(names):
        raise ConfigurationError(f"mcp_servers holds two servers of one name: {sorted(names)}.")
    return list(servers)
