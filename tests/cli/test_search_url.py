"""--search-url and --allow-host: web search on a Tavily-compatible server of one's own, pages on a named host."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from haystack_deep_research import cli
from haystack_deep_research.testing import LoopbackSearchServer, SearchDocument, kit_commands, serve_kit
from haystack_deep_research.testing._kit import SAMPLE_PAGES


def test_search_url_searches_that_server_with_no_tavily_key(capsys: pytest.CaptureFixture[str]) -> None:
    with serve_kit() as servers:
        code = cli.main([*kit_commands(servers)["deep"][1:], "-q"])
        searched = [request.json_body["query"] for request in servers.search.requests]
        page = servers.web.url("/solar-growth.html")

    out, err = capsys.readouterr()
    assert code == 0, err
    assert searched  # the researchers' searches went to the given server, with no TAVILY_API_KEY set
    assert f"]({page})" in out


def test_without_allow_host_the_loopback_pages_are_not_read(capsys: pytest.CaptureFixture[str]) -> None:
    with serve_kit() as servers:
        argv = kit_commands(servers)["deep"][1:]
        del argv[argv.index("--allow-host") : argv.index("--allow-host") + 2]
        cli.main([*argv, "-q"])
        pages_read = len(servers.web.requests)

    assert pages_read == 0
    assert "127.0.0.1" not in capsys.readouterr().out.split("## Sources")[0]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--search-url", "ftp://example.org"], "--search-url takes an http(s) URL"),
        (["--search-url", "http://127.0.0.1:9", "--search", "ddgs"], "drop --search ddgs"),
        (["--allow-host", "not a host"], "allow_hosts"),
    ],
)
def test_a_bad_search_endpoint_is_a_usage_error(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with LoopbackSearchServer([SearchDocument(url="https://example.org/a", title="a", content="a")]) as search:
        code = cli.main(["What is a?", "--base-url", "http://127.0.0.1:9/v1", *extra, "-q"])
        searched = len(search.requests)

    assert code == 2
    assert message in capsys.readouterr().err
    assert searched == 0


@pytest.mark.parametrize("mode", ["deep", "iterative"])
def test_chosen_domains_and_dates_reach_the_search_and_nothing_outside_them_is_read(
    mode: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with serve_kit() as servers:
        argv = kit_commands(servers)[mode][1:]
        code = cli.main([*argv, "--include-domain", "example.org", "--time-range", "week", "--json", "-q"])
        asked = [request.json_body for request in servers.search.requests]
        pages_read = len(servers.web.requests)

    out, _ = capsys.readouterr()
    assert asked
    assert all(body["include_domains"] == ["example.org"] and body["time_range"] == "week" for body in asked)
    assert pages_read == 0  # every result of the kit is on 127.0.0.1, outside the chosen domain
    result = json.loads(out)
    assert "127.0.0.1" not in result["report"]
    assert result["exit_reason"] == "no_evidence"  # nothing inside the chosen domain could be read, and it says so
    assert code == 6


def test_since_and_time_range_exclude_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["q", "--since", "2026-01-01", "--time-range", "week", "-q"])

    assert code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_a_run_against_the_kit_costs_nothing_and_says_no_cost_is_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    with serve_kit() as servers:
        code = cli.main([*kit_commands(servers)["deep"][1:], "--json", "-q"])

    result = json.loads(capsys.readouterr().out)
    assert code == 0
    assert result["cost"] == 0
    assert not [warning for warning in result["warnings"] if "cost is unknown" in warning]


@pytest.mark.parametrize("mode", ["deep", "iterative"])
def test_o_evidence_csv_writes_one_row_per_cited_claim(mode: str, tmp_path: Path) -> None:
    import csv

    table = tmp_path / "evidence.csv"
    with serve_kit() as servers:
        code = cli.main([*kit_commands(servers)[mode][1:], "-o", str(table), "-q"])
        pages = {servers.web.url(page.path) for page in SAMPLE_PAGES}

    header, *rows = list(csv.reader(table.open(encoding="utf-8")))
    assert code == 0
    assert header[:2] == ["claim", "source"]
    assert rows
    assert {row[1] for row in rows} <= pages  # every row is a page the run read
    assert all(row[4] for row in rows)  # each with its passage
