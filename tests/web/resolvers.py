"""Name resolution for the fetch tests: a fixed table, so no test ever asks a real resolver."""

from __future__ import annotations

import socket
from collections.abc import Callable

PUBLIC_IP = "93.184.216.34"  # only ever "reached" through httpx.MockTransport, never connected to


def fixed_resolver(answers: dict[str, list[str]]) -> Callable[[str, int], list[str]]:
    """A resolver answering from ``answers``; an unknown name fails as a real lookup would."""

    def resolve(host: str, port: int) -> list[str]:
        if host not in answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return answers[host]

    return resolve
