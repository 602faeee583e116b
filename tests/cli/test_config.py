"""
The config files and the environment: flag > environment (``DEEP_RESEARCH_*``, then the SDK's own names) > named or
user file > the working folder's file > default, for every command; the folder's file is not trusted.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pytest

from haystack_deep_research import cli
from haystack_deep_research.cli import research
from haystack_deep_research.errors import ConfigFileError, ConfigurationError
from haystack_deep_research.options import config, parsers
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


def test_flag_beats_environment_beats_user_file_beats_folder_file_beats_default(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    trust = "--trust-folder-config"
    assert _check(capsys, trust) == (0, "report.md: 1 cited URL(s) in 1 citation(s); " + _UNVERIFIABLE)

    (folder / "deep-research.toml").write_text('[check]\nsources = "other.json"\n', encoding="utf-8")
    assert _check(capsys, trust) == (1, f"report.md: 1 cited URL(s), 0 verified, 1 unverified; {_PRECISION}0.00")

    user = Path(os.environ["XDG_CONFIG_HOME"]) / "deep-research" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('sources = "read.json"\n', encoding="utf-8")  # the user's own file wins over the folder's
    assert _check(capsys, trust) == (0, f"report.md: 1 cited URL(s), 1 verified, 0 unverified; {_PRECISION}1.00")

    monkeypatch.setenv("DEEP_RESEARCH_SOURCES", "other.json")
    assert _check(capsys, trust)[0] == 1

    assert _check(capsys, trust, "--sources", "read.json")[0] == 0


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
        ("[check]\njudge-model = ['a']\n", "[check] judge-model: expected a value of --judge-model JUDGE_MODEL; got"),
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
        argv = ["What do my notes say about tides?", "--docs", "notes", "--trust-folder-config"]
        code = cli.main(argv)  # the flag replaces the list

    out, err = capsys.readouterr()
    assert code == 0, err
    answer = json.loads(out)
    assert answer["exit_reason"] == "subtopics_done"  # both sub-topics the file allows were researched
    assert answer["citations"]["verified_urls"]


def test_a_required_option_may_come_from_the_file(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "items.txt").write_text("How fast is solar growing?\n", encoding="utf-8")
    (folder / "deep-research.toml").write_text("[scan]\nout = 'rows.jsonl'\nconcurrency = 'many'\n", encoding="utf-8")
    assert "[scan] concurrency: expected a value of --concurrency CONCURRENCY; got 'many'" in _usage_line(
        ["scan", "items.txt", "--trust-folder-config"], capsys
    )

    (folder / "deep-research.toml").write_text("[scan]\nout = 'rows.jsonl'\nattempts = 2\n", encoding="utf-8")
    assert cli.main(["scan", "items.txt", "--trust-folder-config"]) == 2
    notice, line = capsys.readouterr().err.splitlines()
    assert notice == (
        "deep-research scan: reading options from ./deep-research.toml of the working folder: --out, --attempts "
        "(--show-config shows where each option comes from)"
    )
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
    parser = parsers.CommandParser(prog="deep-research")
    parser.add_argument("--search-url", metavar="URL")
    parser.add_argument("--price", action="append", default=[], metavar="MODEL=IN,OUT")
    parser.add_argument("--ports", nargs="+", type=parsers.bounded_int(1, 65535))
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
    argv = ["--price", "b=3,4", "--trust-folder-config"]  # the file sets --search-url
    args = config.parse_configured(parser, argv, command="research", environ=environ)

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


SECRET = "sk-the-users-own-key"
FOLDER_ERROR = (
    "the working folder's config file may not set a server, a host, a path or code; read it, then give "
    "--trust-folder-config, or name it with --config deep-research.toml or DEEP_RESEARCH_CONFIG"
)


@pytest.mark.parametrize("trusted", [False, True], ids=["refused", "trusted"])
def test_a_folder_file_naming_a_server_never_receives_the_users_key(
    trusted: bool, folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    (folder / "notes").mkdir()
    (folder / "notes" / "gezeiten.md").write_text("# Gezeiten\n\nSpringflut folgt dem Neumond.\n", encoding="utf-8")
    roles = ", ".join(f'"{role}={role}"' for role in ROLES)
    with LoopbackChatServer() as server:
        (folder / "deep-research.toml").write_text(
            f'base-url = "{server.openai_base_url}"\nallow-host = ["0.0.0.0/0", "::/0"]\n'
            f'[research]\nrole-model = [{roles}]\ndocs = ["notes"]\nno-web = true\njson = true\nprogress = "none"\n'
            "max-subtopics = 1\n",
            encoding="utf-8",
        )
        code = cli.main(["Wann kommt die Springflut?", *(["--trust-folder-config"] if trusted else [])])
        requests = [r for r in server.requests.snapshot() if r.json_body]  # not the server check, which sends no key

    out, err = capsys.readouterr()
    keyed = [r for r in requests if SECRET in {k.lower(): v for k, v in r.headers.items()}.get("authorization", "")]
    if trusted:  # what such a file's server receives once the user trusts it
        assert code == 0, err
        assert requests
        assert len(keyed) == len(requests)
        assert json.loads(out)["exit_reason"] == "subtopics_done"
    else:
        assert (code, out, requests) == (2, "", [])
        assert err == (
            "deep-research: error: config file deep-research.toml: base-url, allow-host, [research] docs: "
            f"{FOLDER_ERROR} "
            "(see deep-research --help)\n"
        )


TRUSTED_ONLY = {
    "research": (
        "output",
        "sources",
        "run-dir",
        "outline",
        "instructions",
        "base-url",
        "cache",
        "record",
        "search-url",
        "allow-host",
        "docs",
        "index-dir",
    ),
    "scan": ("out", "schema", "ray", "csv", "base-url", "search-url", "allow-host", "docs", "index-dir"),
    "mcp": ("transport", "host", "runs-root", "base-url", "search-url", "allow-host", "docs", "index-dir"),
    "check": ("sources", "base-url"),
}


def test_the_options_a_folder_file_may_not_set_are_those_naming_a_server_a_host_a_path_or_code() -> None:
    found = {
        command: tuple(
            a.option_strings[-1][2:] for a in build()._actions if a.option_strings and config.trusted_only(a)
        )
        for command, build in config.config_parsers().items()
    }
    assert found == TRUSTED_ONLY


@pytest.mark.parametrize(("command", "key"), [(command, key) for command, keys in TRUSTED_ONLY.items() for key in keys])
def test_the_folder_file_setting_a_server_a_host_a_path_or_code_is_a_usage_error(
    command: str, key: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "deep-research.toml").write_text(f"[{command}]\n{key} = 'x'\n", encoding="utf-8")
    parser = config.config_parsers()[command]()

    with pytest.raises(SystemExit) as stop:
        config.parse_configured(parser, ["argument"], command=command, environ={})

    assert stop.value.code == 2
    assert f"config file deep-research.toml: [{command}] {key}: {FOLDER_ERROR}" in capsys.readouterr().err


def _recording(folder: Path) -> str:
    (folder / "recorded").mkdir()
    manifest = {"question": "Gezeiten?", "web": False, "models": {"analysis_llm": "a", "writer_llm": "w"}}
    (folder / "recorded" / "recording.json").write_text(json.dumps(manifest), encoding="utf-8")
    (folder / "recorded" / "exchanges.jsonl").write_text("", encoding="utf-8")
    return "recorded"


def _run_dir(folder: Path) -> str:
    (folder / "run").mkdir()
    (folder / "run" / "journal.jsonl").write_text('{"type": "start", "question": "Gezeiten?"}\n', encoding="utf-8")
    return "run"


SURFACES = {
    "research": lambda folder: ["Gezeiten?"],
    "replay": lambda folder: ["replay", _recording(folder)],
    "update": lambda folder: ["update", _run_dir(folder)],
    "scan": lambda folder: ["scan", "report.md", "--out", "rows.jsonl"],
    "mcp": lambda folder: ["mcp"],
    "check": lambda folder: ["check", "report.md"],
}


@pytest.mark.parametrize("surface", [*SURFACES, "server"])
def test_every_command_and_server_reads_the_folder_file_by_the_same_rule(
    surface: str, folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "deep-research.toml").write_text('base-url = "http://127.0.0.1:9/v1"\n', encoding="utf-8")
    refused = f"config file deep-research.toml: base-url: {FOLDER_ERROR} (see deep-research"
    if surface == "server":  # the Hayhooks wrapper, the MCP server's runs and a scan's items read no command line
        with pytest.raises(ConfigurationError, match="refuse"):
            config.environment_options()
        assert refused in capsys.readouterr().err
        monkeypatch.setenv("DEEP_RESEARCH_CONFIG", "deep-research.toml")  # named, the file is the user's choice
        assert config.environment_options().base_url == "http://127.0.0.1:9/v1"
        return

    assert _usage_line(SURFACES[surface](folder), capsys).startswith(
        f"deep-research{'' if surface in ('research', 'replay', 'update') else ' ' + surface}: error: {refused}"
    )


def test_a_named_folder_file_is_trusted(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "deep-research.toml").write_text('[check]\nsources = "read.json"\n', encoding="utf-8")

    assert cli.main(["check", "report.md", "--config", "deep-research.toml"]) == 0
    assert cli.main(["check", "report.md", "--conf=deep-research.toml"]) == 0  # abbreviated, as argparse reads it
    assert "1 verified" in capsys.readouterr().out


def test_the_sdks_own_variable_wins_over_the_files_as_the_own_variable_does(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from haystack_deep_research.options.arguments import model_arguments

    user = Path(os.environ["XDG_CONFIG_HOME"]) / "deep-research" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('base-url = "http://127.0.0.1:1/file"\n', encoding="utf-8")

    def server(*argv: str) -> str:
        args = config.parse_configured(parsers.research_parser(), ["q", *argv], command="research")
        return model_arguments(args)["writer_llm"].api_base_url

    assert server() == "http://127.0.0.1:1/file"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:2/sdk")
    assert server() == "http://127.0.0.1:2/sdk"
    monkeypatch.setenv("DEEP_RESEARCH_BASE_URL", "http://127.0.0.1:3/own")
    assert server() == "http://127.0.0.1:3/own"
    assert server("--base-url", "http://127.0.0.1:4/flag") == "http://127.0.0.1:4/flag"


def test_show_config_says_where_each_option_comes_from(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "deep-research" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('tone = "sachlich \\u001b]0;owned\\u0007"\n[research]\ndepth = 5\n', encoding="utf-8")
    (folder / "deep-research.toml").write_text("[research]\nmax-subtopics = 2\ndepth = 4\n", encoding="utf-8")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:2/v1")

    assert cli.main(["--show-config", "--report-type", "outline"]) == 0  # no question needed: nothing runs

    out, err = capsys.readouterr()
    assert (err, "\x1b" in out) == ("", False)
    assert out.splitlines() == [
        f"config files: deep-research.toml (working folder), {user}",
        "--max-subtopics = 2  (config file deep-research.toml: [research] max-subtopics)",
        "--report-type = 'outline'  (command line)",
        f"--tone = 'sachlich \\x1b]0;owned\\x07'  (config file {user}: tone)",
        "--base-url = 'http://127.0.0.1:2/v1'  (environment variable OPENAI_BASE_URL)",
        f"--depth = 5  (config file {user}: [research] depth)",
    ]
    assert cli.main(["scan", "--show-config"]) == 0  # a required option need not be given either
    assert capsys.readouterr().out.splitlines()[1:] == [  # the research table and --tone are not the scan's
        "--base-url = 'http://127.0.0.1:2/v1'  (environment variable OPENAI_BASE_URL)"
    ]


def test_a_caller_without_parsed_options_reads_the_environment_by_the_same_rule() -> None:
    from haystack_deep_research.options.arguments import model_arguments

    sdk, own = {"OPENAI_BASE_URL": "http://127.0.0.1:2/sdk"}, {"DEEP_RESEARCH_BASE_URL": "http://127.0.0.1:3/own"}
    switch = {"DEEP_RESEARCH_NO_TOOL_CHOICE": "on"}  # "on", as a command reads it

    writer = model_arguments(argparse.Namespace(), {**sdk, **switch})["writer_llm"]
    assert (writer.api_base_url, writer.tool_choice) == ("http://127.0.0.1:2/sdk", None)
    assert model_arguments(argparse.Namespace(), {**sdk, **own})["writer_llm"].api_base_url == "http://127.0.0.1:3/own"
    with pytest.raises(ConfigFileError, match="environment variable DEEP_RESEARCH_NO_TOOL_CHOICE: expected true or"):
        model_arguments(argparse.Namespace(), {**sdk, "DEEP_RESEARCH_NO_TOOL_CHOICE": "vielleicht"})


@pytest.mark.parametrize(
    "text", ["trust-folder-config = true\n", "[research]\nshow_config = true\n", "config = 'a.toml'\n"]
)
def test_a_file_cannot_trust_itself_or_choose_the_configuration(
    text: str, folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "deep-research.toml").write_text(text + 'base-url = "http://127.0.0.1:9/v1"\n', encoding="utf-8")
    assert "unknown key" in _usage_line(["check", "report.md"], capsys)

    (folder / "deep-research.toml").write_text('base-url = "http://127.0.0.1:9/v1"\n', encoding="utf-8")
    monkeypatch.setenv("DEEP_RESEARCH_TRUST_FOLDER_CONFIG", "1")  # only the flag trusts the folder's file
    assert FOLDER_ERROR in _usage_line(["check", "report.md"], capsys)


def test_a_config_error_reaches_the_terminal_without_the_escape_sequences_the_file_holds(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "deep-research.toml").write_text('["\\u001b]0;PWNED\\u0007x"]\na = 1\n', encoding="utf-8")

    line = _usage_line(["check", "report.md"], capsys)

    assert "deep-research.toml" in line
    assert "\x1b" not in line
    assert "\x07" not in line
