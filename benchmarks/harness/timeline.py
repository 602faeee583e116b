"""A timeline picture of runs: one row per agent, bars for LLM calls, tool phases and HTTP requests."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from benchmarks.harness.metrics import normalize
from benchmarks.harness.spec import LIBRARY_NAMES

COLORS = {
    "scope": "#6a3d9a",
    "orchestrator": "#1f78b4",
    "researcher": "#33a02c",
    "summarizer": "#b2df8a",
    "writer": "#ff7f00",
    "tool": "#d9d9d9",
    "http": "#222222",
    "429": "#e31a1c",
}


def _rows(record: dict[str, Any]) -> list[str]:
    threads = [c["thread"] for c in record["llm"] if c["role"] == "researcher"]
    researchers = list(dict.fromkeys(threads))
    return ["scope", "orchestrator", *researchers, "writer"]


def _label(row: str, index: int) -> str:
    if row in ("scope", "orchestrator", "writer"):
        return row
    return f"researcher {index}: {row.rsplit(':', maxsplit=1)[-1].strip()[:24]}"


def _fetch_threads(record: dict[str, Any]) -> dict[str, str]:
    owner: dict[str, str] = {}
    for call in record["llm"]:
        for tool_call in call["tool_calls"] if call["role"] == "researcher" else []:
            urls = tool_call["arguments"].get("urls", tool_call["arguments"].get("url", []))
            for url in [urls] if isinstance(urls, str) else urls:
                owner.setdefault(normalize(str(url)), call["thread"])
    return owner


def _lanes(calls: list[dict[str, Any]]) -> dict[int, tuple[int, int]]:
    """Give calls that overlap in time a lane each: ``{id(call): (lane, lanes in its group)}``."""
    placed: dict[int, tuple[int, int]] = {}
    group: list[tuple[dict[str, Any], int]] = []
    reach = float("-inf")

    def close() -> None:
        count = 1 + max((lane for _, lane in group), default=0)
        placed.update({id(call): (lane, count) for call, lane in group})

    ends: list[float] = []
    for call in sorted(calls, key=lambda c: c["start"]):
        if group and call["start"] >= reach:
            close()
            group, ends = [], []
        lane = next((i for i, end in enumerate(ends) if end <= call["start"]), len(ends))
        if lane == len(ends):
            ends.append(call["end"])
        else:
            ends[lane] = call["end"]
        group.append((call, lane))
        reach = max(reach, call["end"]) if len(group) > 1 else call["end"]
    if group:
        close()
    return placed


def draw_run(ax: Any, record: dict[str, Any], title: str) -> None:
    """Draw one run on ``ax``: times are seconds from the start of ``run``."""
    t0 = record["result"]["start"]
    rows = _rows(record)
    y = {row: i for i, row in enumerate(rows)}
    calls = sorted(record["llm"], key=lambda c: c["start"])
    for row in rows:
        own = [c for c in calls if c["thread"] == row and c["role"] != "summarizer" and c["status"] == 200]
        for before, after in itertools.pairwise(own):
            if before["tool_calls"]:
                ax.barh(
                    y[row],
                    after["start"] - before["end"],
                    left=before["end"] - t0,
                    height=0.8,
                    color=COLORS["tool"],
                    hatch="//",
                    edgecolor="#aaaaaa",
                    linewidth=0,
                )
    lanes = _lanes([c for c in calls if c["role"] == "writer" and c["status"] != 429])
    for call in calls:
        row = str(call["thread"]) if call["thread"] in y else ("writer" if call["role"] == "writer" else "")
        if not row:
            continue
        if call["status"] == 429:
            ax.plot([call["start"] - t0] * 2, [y[row] - 0.45, y[row] + 0.45], color=COLORS["429"], linewidth=1)
            continue
        height, offset = (0.4, 0.2) if call["role"] == "summarizer" else (0.8, 0.0)
        if call["role"] == "writer" and id(call) in lanes:  # calls side by side: one thin lane each
            lane, count = lanes[id(call)]
            height = 0.8 / count
            offset = -0.4 + height * (lane + 0.5)
        ax.barh(
            y[row] + offset,
            max(call["end"] - call["start"], 0.002),
            left=call["start"] - t0,
            height=height,
            color=COLORS[call["role"]],
            edgecolor="none",
        )
    owner = _fetch_threads(record)
    http = [(s["query"], s) for s in record["search"]] + [
        (owner.get(normalize(w["url"]), ""), w) for w in record["web"]
    ]
    for thread, request in http:
        if thread in y:
            ax.barh(
                y[thread] - 0.32,
                max(request["end"] - request["start"], 0.002),
                left=request["start"] - t0,
                height=0.16,
                color=COLORS["http"],
                edgecolor="none",
            )
    ax.set_yticks(range(len(rows)), [_label(r, i) for i, r in enumerate(rows, start=-1)])
    ax.invert_yaxis()
    ax.set_xlim(left=0)
    ax.set_title(title, fontsize=10, loc="left")
    ax.grid(axis="x", alpha=0.3)


def draw(records: list[dict[str, Any]], path: Path, caption: str) -> None:
    """
    Write a PNG with one panel per run record (one per library), sharing the time axis.

    :param records: Run records of one scenario.
    :param path: Where to write the PNG.
    :param caption: The figure title.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    heights = [len(_rows(r)) for r in records]
    fig, axes = plt.subplots(
        len(records),
        1,
        figsize=(12, 1.6 + 0.42 * sum(heights)),
        sharex=True,
        layout="constrained",
        gridspec_kw={"height_ratios": heights},
        squeeze=False,
    )
    for ax, record in zip(axes[:, 0], records, strict=True):
        wall = record["result"]["end"] - record["result"]["start"]
        draw_run(ax, record, f"{LIBRARY_NAMES[record['library']]} — wall {wall:.2f} s")
    longest = max(record["result"]["end"] - record["result"]["start"] for record in records)
    axes[-1, 0].set_xlim(0, 1.02 * longest)  # the shared axis spans the longest run, not the first one drawn
    axes[-1, 0].set_xlabel("seconds since run() was called")
    roles = ("scope", "orchestrator", "researcher", "summarizer", "writer")
    legend = [Patch(color=COLORS[k], label=f"LLM: {k}") for k in roles]
    legend += [
        Patch(facecolor=COLORS["tool"], hatch="//", edgecolor="#aaaaaa", label="tool phase (between turns)"),
        Patch(color=COLORS["http"], label="HTTP: search / page fetch"),
        Patch(color=COLORS["429"], label="429 answer"),
    ]
    fig.legend(handles=legend, loc="outside upper center", ncol=4, fontsize=8, title=caption, title_fontsize=10)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
