"""Every surface reads the shared options the same way: the command line, the servers and the scans."""

from __future__ import annotations

import argparse

import pytest

from haystack_deep_research import ConfigurationError
from haystack_deep_research.options.arguments import factory_arguments
from haystack_deep_research.options.config import environment_options
from haystack_deep_research.options.parsers import mcp_parser, parse_price, scan_parser

SEARCH = "http://127.0.0.1:8001"


@pytest.mark.parametrize("parser", [scan_parser, mcp_parser], ids=["scan", "mcp"])
def test_search_url_and_allow_host_reach_the_factory_of_every_command(parser: argparse.ArgumentParser) -> None:
    extra = ["items.txt", "--out", "rows.jsonl"] if parser is scan_parser else []
    args = parser().parse_args([*extra, "--search-url", SEARCH, "--allow-host", "127.0.0.1"])

    arguments = factory_arguments(args, {})

    assert arguments["sources"].search.to_dict()["data"]["api_base_url"] == SEARCH
    assert arguments["sources"].url_policy.allow_hosts == ("127.0.0.1",)


def test_a_server_reads_every_option_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "DEEP_RESEARCH_NO_WEB": "1",
        "DEEP_RESEARCH_DOCS": "",
        "DEEP_RESEARCH_ALLOW_HOST": "127.0.0.1",
        "DEEP_RESEARCH_ROLE_MODEL": "writer=big",
        "DEEP_RESEARCH_NO_TOOL_CHOICE": "on",
    }.items():
        monkeypatch.setenv(name, value)

    settings = environment_options()

    assert settings.no_web is True
    assert settings.allow_host == ["127.0.0.1"]
    assert settings.role_model == ["writer=big"]
    assert settings.no_tool_choice is True  # "on" means the same to a server as to the command


def test_a_bad_setting_in_a_servers_environment_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEP_RESEARCH_API", "telnet")
    with pytest.raises(ConfigurationError, match="refuse"):
        environment_options()


@pytest.mark.parametrize("text", ["qwen3:8b=0,0 llama3=1,2", "a=b=1,2", "=1,2", "m=1"])
def test_a_price_names_one_model_without_spaces_or_equals(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="MODEL=INPUT,OUTPUT"):
        parse_price(text)
