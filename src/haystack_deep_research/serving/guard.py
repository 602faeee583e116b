"""
Who may call a server: same-origin callers only, and, when one is set, only with the bearer token.

:class:`RequestGuard` is the rule (``Origin``, ``Host`` on a loopback server, ``Authorization``);
:class:`RequestGuardMiddleware` applies it to every HTTP request and WebSocket of an ASGI app before the app sees it,
and every HTTP server of the library is built behind it. docs/safety.md ("Serving surfaces") has the whole rule.
"""

from __future__ import annotations

import hmac
import json
import os
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from haystack_deep_research.errors import InvalidQuestionError, RequestRefusedError

__all__ = [
    "ALLOWED_HOSTS_ENV",
    "ALLOWED_ORIGINS_ENV",
    "TOKEN_ENV",
    "RequestGuard",
    "RequestGuardMiddleware",
    "http_status",
]

ALLOWED_ORIGINS_ENV = "DEEP_RESEARCH_ALLOWED_ORIGINS"  # the web origins allowed to call the server, comma-separated
ALLOWED_HOSTS_ENV = "DEEP_RESEARCH_ALLOWED_HOSTS"  # the host names requests may be addressed to, comma-separated
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
"""The names of a loopback server: the ``Host`` a request to it carries, without its port."""
TOKEN_ENV = "DEEP_RESEARCH_TOKEN"  # noqa: S105 - the name of the variable holding the bearer token, not a secret

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass(frozen=True)
class RequestGuard:
    """
    The server's rule for who may start a run (see the module docstring).

    :param allowed_origins: Web origins (``scheme://host[:port]``) allowed to call the server; none by default.
    :param token: The bearer token every request must carry, or ``None`` for none.
    :param allowed_hosts: The host names (without port) a request may be addressed to, or ``None`` to take any.
    """

    allowed_origins: frozenset[str] = field(default_factory=frozenset)
    token: str | None = field(default=None, repr=False)
    allowed_hosts: frozenset[str] | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *, listen_host: str | None = None) -> RequestGuard:
        """
        :param environ: The environment to read; ``os.environ`` by default.
        :param listen_host: The address the server listens on: a loopback one admits only loopback ``Host`` names
            (and those listed); ``None`` or another address checks ``Host`` only when hosts are listed.
        :returns: The guard of ``DEEP_RESEARCH_ALLOWED_ORIGINS``, ``DEEP_RESEARCH_ALLOWED_HOSTS`` and
            ``DEEP_RESEARCH_TOKEN``.
        """
        env = os.environ if environ is None else environ
        origins = frozenset(o.strip().rstrip("/") for o in env.get(ALLOWED_ORIGINS_ENV, "").split(",") if o.strip())
        listed = frozenset(
            h.strip().lower().strip("[]") for h in env.get(ALLOWED_HOSTS_ENV, "").split(",") if h.strip()
        )
        loopback = listen_host is not None and listen_host.strip("[]").lower() in LOOPBACK_HOSTS
        hosts = (listed | LOOPBACK_HOSTS) if loopback else (listed or None)
        token = env.get(TOKEN_ENV, "").strip() or None
        return cls(allowed_origins=origins, token=token, allowed_hosts=hosts)

    def check(self, headers: Mapping[str, str] | None, *, preflight: bool = False) -> None:
        """
        :param headers: The request's HTTP headers (names in any case), or ``None`` for a call without HTTP.
        :param preflight: Whether the request is a browser's CORS preflight: then an allowed origin needs no token.
        :raises RequestRefusedError: If the request may not start a run; its ``status_code`` is 403 or 401.
        """
        given = {str(name).lower(): str(value) for name, value in (headers or {}).items()}
        if self.allowed_hosts is not None and headers is not None:
            host = _host_name(given.get("host", ""))
            if host not in self.allowed_hosts:
                raise RequestRefusedError(
                    f"requests addressed to the host {given.get('host', '')!r} are refused; to serve that name, "
                    f"add it to {ALLOWED_HOSTS_ENV} (comma-separated).",
                    status_code=403,
                )
        origin = given.get("origin")
        if origin is not None and origin.rstrip("/") not in self.allowed_origins:
            raise RequestRefusedError(
                f"requests from the web page origin {origin!r} are refused; to let a page of that origin call this "
                f"server, add it to {ALLOWED_ORIGINS_ENV} (comma-separated).",
                status_code=403,
            )
        if self.token is None or (preflight and origin is not None):
            return
        scheme, _, presented = given.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(presented.strip().encode(), self.token.encode()):
            raise RequestRefusedError(
                f"this server requires a bearer token ({TOKEN_ENV}): send the header 'Authorization: Bearer <token>'.",
                status_code=401,
            )


class RequestGuardMiddleware:
    """
    ASGI middleware: the guard's rule on every HTTP request and WebSocket of an app (see the module docstring).

    :param app: The ASGI app to guard.
    :param guard: The rule; ``None`` reads it from the environment (:meth:`RequestGuard.from_env`).
    """

    def __init__(self, app: ASGIApp, guard: RequestGuard | None = None) -> None:
        self.app = app
        self.guard = RequestGuard.from_env() if guard is None else guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):  # the lifespan: no caller
            await self.app(scope, receive, send)
            return
        headers = {bytes(name).decode("latin-1"): bytes(value).decode("latin-1") for name, value in scope["headers"]}
        announced = "access-control-request-method" in {name.lower() for name in headers}
        preflight = scope["type"] == "http" and scope["method"] == "OPTIONS" and announced
        try:
            self.guard.check(headers, preflight=preflight)
        except RequestRefusedError as error:
            await _refuse(scope, receive, send, error)
            return
        await self.app(scope, receive, send)


def _host_name(host: str) -> str:
    """
    The name of a ``Host`` header without its port: ``[::1]:8000`` is ``::1``, ``Localhost.`` is ``localhost``; a
    header whose port is not a number names no host (``""``).
    """
    host = host.strip().lower()
    name, port = (host[1:].partition("]")[::2]) if host.startswith("[") else (host.partition(":")[::2])
    if port.startswith(":"):
        port = port[1:]
    if port and not port.isdigit():
        return ""
    return name.rstrip(".")


async def _refuse(scope: Scope, receive: Receive, send: Send, error: RequestRefusedError) -> None:
    if scope["type"] == "websocket":
        await receive()  # websocket.connect; closing before accepting refuses the handshake
        reason = "bearer token required" if error.status_code == 401 else "origin or host not allowed"
        await send({"type": "websocket.close", "code": 1008, "reason": reason})
        return
    body = json.dumps({"detail": str(error)}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if error.status_code == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": error.status_code, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def http_status(error: InvalidQuestionError | RequestRefusedError) -> int:
    """
    :param error: Why a request was refused.
    :returns: The HTTP status to answer: the refusal's own (401, 403), or 422 for a bad question.
    """
    return error.status_code if isinstance(error, RequestRefusedError) else 422
