"""``deep-research check``: citation precision and grounding for any Markdown report."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from haystack.components.agents import Agent

from haystack_deep_research import EvidenceLedger, cli
from haystack_deep_research.cli import check
from haystack_deep_research.testing import LoopbackWebServer, ScriptedChatGenerator

# A report this library did not write: numbered markers, a References list, one inline link.
FOREIGN = """# Heat pumps in Europe

Heat pump sales fell by 5 percent in 2024 [1]. Installers expect a rebound next year [2].
Subsidies matter too, see the [policy brief](https://policy.example/brief).

## References

1. Sales statistics 2024 — https://data.example/sales
2. [Industry outlook](https://industry.example/outlook)
"""
SALES = "https://data.example/sales"
OUTLOOK = "https://industry.example/outlook"
POLICY = "https://policy.example/brief"


@pytest.fixture
def report(tmp_path: Path) -> Path:
    path = tmp_path / "report.md"
    path.write_text(FOREIGN, encoding="utf-8")
    return path


def _ledger(tmp_path: Path, pages: dict[str, str]) -> Path:
    ledger = EvidenceLedger()
    ledger.record_search_result(url=OUTLOOK, title="Industry outlook", snippet="A search result, never read.")
    for url, text in pages.items():
        ledger.record_page(url=url, title="", text=text)
    path = tmp_path / "sources.json"
    path.write_text(ledger.to_json(), encoding="utf-8")
    return path


PAGES = {
    SALES: "Heat pump sales in Europe fell by 5 percent in 2024 after two record years.",
    POLICY: "Subsidies for heat pumps were cut in several countries.",
}


def test_a_foreign_report_with_a_numbered_reference_list(
    report: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = cli.main(["check", str(report), "--sources", str(_ledger(tmp_path, PAGES))])

    out = capsys.readouterr().out
    assert status == 1
    assert f"{report}: 3 cited URL(s), 2 verified, 1 unverified; citation precision 0.67" in out
    unverified = out.split("unverified citations:\n", 1)[1].splitlines()
    assert unverified == [
        f"  - {OUTLOOK} (line 3): Installers expect a rebound next year [2].",
        f"  - {OUTLOOK} (line 9): [Industry outlook]({OUTLOOK})",
    ]


def test_every_citation_verified_exits_0(report: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    urls = tmp_path / "urls.json"
    urls.write_text(json.dumps([SALES, OUTLOOK, POLICY]), encoding="utf-8")  # the plain URL-list form

    assert cli.main(["check", str(report), "--sources", str(urls)]) == 0
    out = capsys.readouterr().out
    assert "3 cited URL(s), 3 verified, 0 unverified; citation precision 1.00" in out
    assert "unverified citations" not in out


def test_without_sources_every_citation_is_unverifiable_and_the_status_is_0(
    report: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["check", str(report)]) == 0

    out = capsys.readouterr().out
    assert "3 cited URL(s) in 5 citation(s); no --sources given, so every citation is unverifiable" in out
    assert f"  - {SALES} (line 3): Heat pump sales fell by 5 percent in 2024 [1]." in out


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["missing.md"], "cannot read the report missing.md"),
        (["{report}", "--sources", "missing.json"], "cannot read the sources file missing.json"),
        (["{report}", "--sources", "{report}"], "cannot read the sources file"),
        (["{report}", "--sources", "{object}"], "must hold a JSON array"),
        (["{report}", "--sources", "{bad_entry}"], "is not an evidence ledger"),
        (["{report}", "--judge"], "--judge needs --sources"),
        (["{report}", "--judge", "--sources", "{object}"], "--judge needs OPENAI_API_KEY"),
    ],
)
def test_usage_errors_exit_2_with_one_line(
    arguments: list[str], message: str, report: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "object.json").write_text('{"url": "https://a.example"}', encoding="utf-8")
    (tmp_path / "bad.json").write_text('[{"url": "https://a.example"}]', encoding="utf-8")
    paths = {"report": str(report), "object": str(tmp_path / "object.json"), "bad_entry": str(tmp_path / "bad.json")}

    assert cli.main(["check", *(a.format(**paths) for a in arguments)]) == 2

    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("deep-research check: error: ")
    assert message in err[0]


def test_bad_arguments_are_argparse_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        cli.main(["check"])
    assert caught.value.code == 2
    assert "the following arguments are required: report" in capsys.readouterr().err


def test_judge_gives_a_verdict_per_claim(
    report: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    models: list[str] = []
    monkeypatch.setattr(
        check, "default_judge", lambda model: models.append(model) or ScriptedChatGenerator(role="judge")
    )

    status = cli.main(["check", str(report), "--sources", str(_ledger(tmp_path, PAGES)), "--judge"])

    out = capsys.readouterr().out
    assert status == 1
    assert models == ["gpt-5.4"]
    assert "grounding (judge gpt-5.4): score 0.50; 1 supported, 1 unsupported, 0 unknown" in out
    assert "  - supported (line 3): Heat pump sales fell by 5 percent in 2024 [1]." in out
    assert (
        "  - unsupported (line 4): Subsidies matter too, see the [policy brief](https://policy.example/brief)." in out
    )


def test_a_report_the_library_wrote_checks_clean_against_its_own_ledger(
    make_agent: Callable[..., Agent], web: LoopbackWebServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from haystack.dataclasses import ChatMessage

    result = make_agent().run(messages=[ChatMessage.from_user("How fast is solar growing?")])
    (tmp_path / "report.md").write_text(result["report"], encoding="utf-8")
    (tmp_path / "sources.json").write_text(json.dumps(result["sources"]), encoding="utf-8")

    status = cli.main(["check", str(tmp_path / "report.md"), "--sources", str(tmp_path / "sources.json")])

    assert status == 0
    assert "2 cited URL(s), 2 verified, 0 unverified; citation precision 1.00" in capsys.readouterr().out


def test_the_installed_command_dispatches_check(report: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "haystack_deep_research.cli", "check", str(report)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "every citation is unverifiable" in completed.stdout


def test_a_question_that_starts_with_check_is_still_researched(
    monkeypatch: pytest.MonkeyPatch, make_agent: Callable[..., Agent], capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-x")
    monkeypatch.setattr("haystack_deep_research.cli.research.create_deep_research_agent", make_agent)

    assert cli.main(["check the latest solar capacity numbers", "-q"]) == 0
    assert cli.main(["-q", "--", "check"]) == 0

    assert capsys.readouterr().out.count("# Research report") == 2
