"""What the parent hands a run's subprocess, and what the subprocess hands back."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

LIBRARIES = ("ours", "peer", "gptr")
LIBRARY_NAMES = {"ours": "haystack-deep-research", "peer": "agent-pack-haystack", "gptr": "GPT Researcher"}


@dataclass(frozen=True)
class RunSpec:
    """One library, one question, pointed at one world's servers."""

    library: str
    question: str
    llm_url: str
    search_url: str
    result_path: str
    max_subtopics: int = 5
    max_concurrent: int = 5
    max_results: int = 5
    api: str = "responses"
    llm_timeout_s: float | None = 60.0
    llm_max_retries: int | None = 5
    warmup_runs: int = 0
    ours_options: dict[str, Any] = field(default_factory=dict)
    """Extra keyword arguments for this library's factory (``--ours-option``), to measure one lever at a time."""

    def save(self, path: Path) -> None:
        """Write the spec as JSON."""
        path.write_text(json.dumps(asdict(self), indent=1))

    @classmethod
    def load(cls, path: Path) -> RunSpec:
        """Read a spec written by :meth:`save`."""
        return cls(**json.loads(path.read_text()))


@dataclass
class Outcome:
    """What a driver extracts from a library's result."""

    report: str = ""
    notes: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    exit_reason: str = ""
    token_usage: Any = None


@dataclass
class RunResult:
    """What the subprocess measured. Times are ``time.monotonic()`` seconds, shared with the servers' logs."""

    library: str
    ok: bool = False
    error: str = ""
    import_s: float = 0.0
    build_s: float = 0.0
    start: float = 0.0
    end: float = 0.0
    cpu_s: float = 0.0
    peak_rss_mb: float = 0.0
    outcome: Outcome = field(default_factory=Outcome)

    @property
    def wall_s(self) -> float:
        """Seconds from ``run`` called to ``run`` returned."""
        return self.end - self.start

    def save(self, path: Path) -> None:
        """Write the result as JSON (values JSON cannot hold become strings)."""
        path.write_text(json.dumps(asdict(self), indent=1, default=str))

    @classmethod
    def load(cls, path: Path) -> RunResult:
        """Read a result written by :meth:`save`."""
        data = json.loads(path.read_text())
        data["outcome"] = Outcome(**data.get("outcome") or {})
        return cls(**data)
