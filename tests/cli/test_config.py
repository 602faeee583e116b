"""The config file and the ``DEEP_RESEARCH_*`` variables: flag > environment > file > default, for every command."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pytest

from haystack_deep_research import cli
from haystack_deep_research.cli import config, options, research
from haystack_deep_research.errors import ConfigFileError
from haystack_deep_research.testing import LoopbackChatServer

REPORT = "# Tides\n\nSpring tides follow the moon [the almanac](https://tides.example/almanac).\n"
CITED = "https://tides.example/almanac"
ROLES = ("scope", "orchestrator", "researcher", "summarizer", "writer")


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder with a report citing one URL, a record that read it and one that did not."""
    (tmp_path / "report.md").write_text(REPORT, encoding="utf-8")
    (tmp_path / "read.json").write_text(json.dumps([CITED]), encoding="utf-8")
    (tmp_path / "other.json").write_text(json.dumps(["https://elsewhere.example/"]), encoding="utf-8")
    for name in os.environ:
        if name.startswith("DEEP_RESEARCH_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _check(capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, str]:
    code = cli.main(["check", "report.md", *flags])
    return code, capsys.readouterr().out.splitlines()[0]


def test_flag_beats_environment_beats_file_beats_default(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _check(capsys) == (0, "report.md: 1 cited URL(s) in 1 citation(s); " + _UNVERIFIABLE)

    (folder / "deep-research.toml").write_text('[check]\nsources = "other.json"\n', encoding="utf-8")
    assert _check(capsys) == (1, f"report.md: 1 cited URL(s), 0 verified, 1 unverified; {_PRECISION}0.00")

    monkeypatch.setenv("DEEP_RESEARCH_SOURCES", "read.json")
    assert _check(capsys) == (0, f"report.md: 1 cited URL(s), 1 verified, 0 unverified; {_PRECISION}1.00")

    assert _check(capsys, "--sources", "other.json")[0] == 1


_UNVERIFIABLE = (
    "no --sources given, so every citation is unverifiable. Pass --sources with the evidence ledger (`deep-research "
    "--sources` writes it) or a JSON list of the URLs that were read."
)
_PRECISION = "citation precision "


def test_a_switch_reads_true_false_and_yes_no(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = folder / "mine.toml"
    mine.write_text('sources = "read.json"\n[check]\njudge = "yes"\n', encoding="utf-8")

    assert cli.main(["check", "report.md", "--config", str(mine)]) == 2
    assert capsys.readouterr().err.splitlines() == [  # a file named by --config is read without a notice
        "deep-research check: error: --judge needs OPENAI_API_KEY in the environment (for example: export "
        "OPENAI_API_KEY=...), or --base-url for an OpenAI-compatible server."
    ]

    monkeypatch.setenv("DEEP_RESEARCH_JUDGE", "0")  # the variable wins over the file
    assert cli.main(["check", "report.md", f"--config={mine}"]) == 0


def test_the_file_is_named_by_its_variable_or_found_in_the_user_config(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "deep-research" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('sources = "other.json"\n', encoding="utf-8")
    assert cli.main(["check", "report.md"]) == 1

    (folder / "named.toml").write_text('sources = "read.json"\n', encoding="utf-8")
    monkeypatch.setenv("DEEP_RESEARCH_CONFIG", "named.toml")
    assert cli.main(["check", "report.md"]) == 0
    capsys.readouterr()


def _usage_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert cli.main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.splitlines()) == 1, err
    return err.rstrip("\n")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[check]\nsorces = 'read.json'\n", "[check] unknown key 'sorces'; the keys are api, base_url,"),
        ("[chek]\nsources = 'read.json'\n", "unknown table [chek]; the tables are [research], [scan], [mcp], [check]"),
        ("tone_of_voice = 'dry'\n", "unknown key 'tone_of_voice'; the top-level keys are the options of any command"),
        ("[check]\njudge = 'maybe'\n", "[check] judge: expected true or false (also 1/0, yes/no); got 'maybe'"),
        ("[check]\nsources = ['a.json']\n", "[check] sources: expected a value of --sources SOURCES; got ['a.json']"),
        ("[check\n", "not valid TOML: "),
    ],
)
def test_a_bad_file_is_one_usage_line_naming_the_file_and_key(
    text: str, expected: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "deep-research.toml").write_text(text, encoding="utf-8")

    line = _usage_line(["check", "report.md"], capsys)

    assert line.startswith("deep-research check: error: config file deep-research.toml: ")
    assert expected in line
    assert line.endswith("(see deep-research check --help)")


def test_bad_values_use_the_options_own_checks(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "deep-research.toml").write_text("[mcp]\nport = 0\n", encoding="utf-8")
    assert _usage_line(["mcp"], capsys) == (
        "deep-research mcp: error: config file deep-research.toml: [mcp] port: must be an integer from 1 to 65535; "
        "got '0' (see deep-research mcp --help)"
    )

    monkeypatch.setenv("DEEP_RESEARCH_PORT", "8000")  # the variable wins: the file's value is not used
    monkeypatch.setenv("DEEP_RESEARCH_TRANSPORT", "carrier-pigeon")
    assert _usage_line(["mcp"], capsys) == (
        "deep-research mcp: error: environment variable DEEP_RESEARCH_TRANSPORT: expected one of stdio, http; got "
        "'carrier-pigeon' (see deep-research mcp --help)"
    )


def test_a_config_that_is_not_a_small_regular_file_is_refused(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "folder.toml").mkdir()
    big = folder / "big.toml"
    big.write_text("# " + "x" * config.MAX_CONFIG_BYTES + "\n", encoding="utf-8")
    for path, why in [(folder / "folder.toml", "not a regular file"), (big, "over 1024 KiB")]:
        with pytest.raises(ConfigFileError, match=why):
            config.load_config(path)
        assert why in _usage_line(["check", "report.md", "--config", str(path)], capsys)
    assert "cannot be read" in _usage_line(["check", "report.md", "--config", "absent.toml"], capsys)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_as_config_is_refused_without_blocking(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    os.mkfifo(folder / "pipe.toml")
    (folder / "deep-research.toml").symlink_to(folder / "pipe.toml")

    line = _usage_line(["check", "report.md"], capsys)

    assert line.startswith("deep-research check: error: config file deep-research.toml: not a regular file")


def test_a_research_run_takes_every_kind_of_option_from_the_file(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = folder / "notes"
    notes.mkdir()
    (notes / "tides.md").write_text("# Tides\n\nSpring tides come with the new and the full moon.\n", encoding="utf-8")
    roles = ", ".join(f'"{role}={role}"' for role in ROLES)
    with LoopbackChatServer() as server:
        (folder / "deep-research.toml").write_text(
            f'base_url = "{server.openai_base_url}"\n'  # a top-level key: every command with --base-url
            f"[research]\nrole-model = [{roles}]\ndocs = ['missing']\nno_web = true\njson = true\n"
            'progress = "none"\nmax_subtopics = 2\n',
            encoding="utf-8",
        )
        code = cli.main(["What do my notes say about tides?", "--docs", "notes"])  # the flag replaces the list

    out, err = capsys.readouterr()
    assert code == 0, err
    answer = json.loads(out)
    assert answer["exit_reason"] == "subtopics_done"  # both sub-topics the file allows were researched
    assert answer["citations"]["verified_urls"]


def test_a_required_option_may_come_from_the_file(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "items.txt").write_text("How fast is solar growing?\n", encoding="utf-8")
    (folder / "deep-research.toml").write_text("[scan]\nout = 'rows.jsonl'\nconcurrency = 'many'\n", encoding="utf-8")
    assert "[scan] concurrency: expected a value of --concurrency CONCURRENCY; got 'many'" in _usage_line(
        ["scan", "items.txt"], capsys
    )

    (folder / "deep-research.toml").write_text("[scan]\nout = 'rows.jsonl'\n", encoding="utf-8")
    assert cli.main(["scan", "items.txt"]) == 2
    notice, line = capsys.readouterr().err.splitlines()
    assert notice == "deep-research scan: reading options from ./deep-research.toml of the working folder"
    assert "--out" not in line
    assert "OPENAI_API_KEY" in line  # past the arguments: the scan stops at the missing key


@pytest.mark.parametrize("command", ["", *sorted(research.SUBCOMMANDS)])
def test_every_command_answers_help_even_with_a_broken_config(
    command: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "deep-research.toml").write_text("not toml at all [", encoding="utf-8")

    assert cli.main([*([command] if command else []), "--help"]) == 0

    out = capsys.readouterr().out
    assert out.startswith(f"usage: deep-research{' ' + command if command else ''} ")
    if command in ("", *config.config_parsers()):
        assert "--config FILE" in out
    if not command:
        assert cli.main(["--version"]) == 0


def test_an_option_added_later_is_configurable_without_change(folder: Path) -> None:
    parser = options.CommandParser(prog="deep-research")
    parser.add_argument("--search-url", metavar="URL")
    parser.add_argument("--price", action="append", default=[], metavar="MODEL=IN,OUT")
    parser.add_argument("--ports", nargs="+", type=options.bounded_int(1, 65535))
    parser.add_argument("--colour", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--no-cache", dest="use_cache", action="store_false")
    parser.add_argument("--level", choices=("low", "high"), default="low")
    (folder / "deep-research.toml").write_text(
        "search_url = 'http://127.0.0.1:9/top'\nlevel = 'high'\n"
        "[research]\nsearch-url = 'http://127.0.0.1:9/own'\nprice = ['a=1,2']\nports = [80, 443]\ncolour = false\n"
        "use_cache = false\n",
        encoding="utf-8",
    )

    environ = {"DEEP_RESEARCH_LEVEL": "low"}
    args = config.parse_configured(parser, ["--price", "b=3,4"], command="research", environ=environ)

    assert args.search_url == "http://127.0.0.1:9/own"  # the command's table wins over the top-level key
    assert args.price == ["b=3,4"]  # given again, a repeatable option replaces the file's list
    assert args.ports == [80, 443]
    assert (args.colour, args.use_cache, args.level) == (False, False, "low")  # the variable wins over the file


def test_a_repeatable_option_in_a_variable_is_split_at_semicolons_so_values_keep_their_commas(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from haystack_deep_research.cli.research import research_parser

    monkeypatch.setenv("DEEP_RESEARCH_PRICES", "qwen3:8b=0,0; llama3=0.5,1.5")
    args = config.parse_configured(research_parser(), ["q"], command="research")

    assert [(p[0], p[1].input_per_mtok, p[1].output_per_mtok) for p in args.prices] == [
        ("qwen3:8b", 0.0, 0.0),
        ("llama3", 0.5, 1.5),
    ]


def test_a_key_may_be_the_options_own_name_where_its_dest_differs(folder: Path) -> None:
    from haystack_deep_research.cli.research import research_parser

    mine = folder / "mine.toml"
    mine.write_text('price = ["qwen3:8b=0,0"]\n[research]\nprice = ["llama3=1,2"]\n', encoding="utf-8")

    args = config.parse_configured(research_parser(), ["q", "--config", str(mine)], command="research")

    assert [name for name, _ in args.prices] == ["llama3"]  # the command's own table wins, as for every key
