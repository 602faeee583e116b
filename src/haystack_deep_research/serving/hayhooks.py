"""
Serve Hayhooks pipeline wrappers safely: Hayhooks' app without its deploy and undeploy routes (which import, and so
run, any posted wrapper), every route behind the request guard; docs/hayhooks.md ("Why not plain `hayhooks run`").

    python -m haystack_deep_research.serving.hayhooks --pipelines-dir examples/hayhooks [--host H] [--port P]

Needs the optional extra ``hayhooks``.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import Any

from haystack_deep_research._haystack_internals import telemetry_off_unless_asked
from haystack_deep_research.errors import MissingExtraError
from haystack_deep_research.serving.guard import RequestGuard, RequestGuardMiddleware

__all__ = ["create_app", "main"]

_ADMIN_PATHS = ("/deploy_files", "/deploy-yaml", "/undeploy/any")
"""Requests to Hayhooks' deploy and undeploy routes: a route that answers one of them is left out."""


def _admin(route: Any) -> bool:
    """Whether a route (or a router included whole) answers a deploy or undeploy request, whatever its method."""
    scopes = ({"type": "http", "method": "POST", "path": path, "root_path": "", "headers": []} for path in _ADMIN_PATHS)
    return any(route.matches(scope)[0].value != 0 for scope in scopes)  # not Match.NONE: it answers the path


def _settings() -> Any:
    try:
        from hayhooks.settings import settings
    except ImportError as error:
        raise MissingExtraError("Hayhooks servers", extra="hayhooks", module="hayhooks") from error
    return settings


def create_app(pipelines_dir: str | os.PathLike[str] | None = None, *, guard: RequestGuard | None = None) -> Any:
    """
    Build Hayhooks' app with no deploy or undeploy route and every route behind the request guard.

    :param pipelines_dir: The folder of pipeline wrappers to serve; ``HAYHOOKS_PIPELINES_DIR`` (Hayhooks' setting)
        by default.
    :param guard: Who may call the app; ``None`` reads it from the environment (:meth:`RequestGuard.from_env`, on
        Hayhooks' host setting).
    :returns: The FastAPI app; serve it with uvicorn (or :func:`main`). Its lifespan deploys the pipelines.
    :raises MissingExtraError: If Hayhooks is not installed.
    """
    telemetry_off_unless_asked()
    settings = _settings()
    from hayhooks.server.app import create_app as hayhooks_app

    if pipelines_dir is not None:
        settings.pipelines_dir = os.fspath(pipelines_dir)
    app = hayhooks_app()
    app.router.routes[:] = [route for route in app.router.routes if not _admin(route)]
    app.openapi_schema = None  # the schema is built again without them
    guard = RequestGuard.from_env(listen_host=settings.host) if guard is None else guard
    app.add_middleware(RequestGuardMiddleware, guard=guard)
    return app


def main(argv: Sequence[str] | None = None) -> int:
    """
    Serve the pipelines of a folder until stopped (Ctrl-C or SIGTERM).

    :param argv: ``--pipelines-dir DIR [--host HOST] [--port PORT]``; ``sys.argv[1:]`` by default.
    :returns: 0 once the server stopped.
    """
    parser = argparse.ArgumentParser(
        prog="python -m haystack_deep_research.serving.hayhooks",
        description="Serve Hayhooks pipeline wrappers with no deploy or undeploy route, every route guarded.",
    )
    parser.add_argument("--pipelines-dir", required=True, help="the folder of pipeline wrappers to serve")
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=1416, help="the port to listen on (default 1416)")
    args = parser.parse_args(argv)
    settings = _settings()
    settings.host, settings.port = args.host, args.port  # as `hayhooks run` sets them, before the app is built
    app = create_app(args.pipelines_dir)
    from hayhooks.server.app import run_app

    run_app(app, host=args.host, port=args.port)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
