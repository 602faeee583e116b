"""``deep-research check``: citation precision and grounding for any Markdown report."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from haystack.components.agents import Agent
from haystack.components.generators.chat import OpenAIResponsesChatGenerator
from tests.support import without_blocking_on

from haystack_deep_research import EvidenceLedger, cli
from haystack_deep_research.evidence.citations import extract_citations
from haystack_deep_research.options import check
from haystack_deep_research.report.assessment import cited_claims
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
    ledger.record_search_result(url=OUTLOOK, title="Industry outlook", snippet="")  # a bare result: never read
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


def test_bad_arguments_are_one_line_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["check"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "deep-research check: error: the following arguments are required: report (see deep-research check --help)"
    ]


def test_judge_gives_a_verdict_per_claim(
    report: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    models: list[str] = []
    monkeypatch.setattr(
        check, "default_judge", lambda model, *_: models.append(model) or ScriptedChatGenerator(role="judge")
    )

    status = cli.main(["check", str(report), "--sources", str(_ledger(tmp_path, PAGES)), "--judge"])

    out = capsys.readouterr().out
    assert status == 1
    assert models == ["gpt-5.4"]
    summary = "score 0.33 over 3 of 3 claim(s); 3 judged, 0 not judged; 1 supported, 2 unsupported\n"
    assert f"grounding (judge gpt-5.4): {summary}" in out
    assert "  - supported (line 3): Heat pump sales fell by 5 percent in 2024 [1]." in out
    assert (
        "  - unsupported (line 4): Subsidies matter too, see the [policy brief](https://policy.example/brief)." in out
    )
    # a sentence whose only citation was never read cites nothing: judged against the passages that were read
    assert "  - unsupported (line 3): Installers expect a rebound next year [2].\n      evidence:read-passages" in out


def test_a_claim_citing_a_search_results_snippet_is_verified_and_judged_against_the_snippet(
    report: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setattr(check, "default_judge", lambda *_: ScriptedChatGenerator(role="judge"))
    ledger = EvidenceLedger()
    ledger.record_search_result(url=OUTLOOK, title="Industry outlook", snippet="Installateure erwarten 2025 Erholung.")
    for url, text in PAGES.items():
        ledger.record_page(url=url, title="", text=text)
    sources = tmp_path / "sources.json"
    sources.write_text(ledger.to_json(), encoding="utf-8")

    status = cli.main(["check", str(report), "--sources", str(sources), "--judge"])

    out = capsys.readouterr().out
    assert status == 1  # the snippet does not say what the sentence claims
    assert f"{report}: 3 cited URL(s), 3 verified, 0 unverified; citation precision 1.00" in out
    assert f"  - unsupported (line 3): Installers expect a rebound next year [2].\n      {OUTLOOK}:" in out


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(
    "judge",
    [
        lambda model, *_: ScriptedChatGenerator(role="judge", fail=True),
        lambda model, *_: OpenAIResponsesChatGenerator(
            model=model, api_base_url=f"http://127.0.0.1:{_closed_port()}/v1", max_retries=0, timeout=5
        ),
    ],
    ids=["failing", "unreachable"],
)
def test_a_judge_that_judges_nothing_gives_no_score_and_exits_partial(
    judge: Callable[[str], Any],
    report: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setattr(check, "default_judge", judge)
    urls = tmp_path / "all.json"
    ledger = EvidenceLedger.from_list(json.loads(_ledger(tmp_path, PAGES).read_text(encoding="utf-8")))
    ledger.record_page(url=OUTLOOK, title="Industry outlook", text="Installers expect a rebound next year.")
    urls.write_text(ledger.to_json(), encoding="utf-8")

    status = cli.main(["check", str(report), "--sources", str(urls), "--judge"])

    captured = capsys.readouterr()
    assert status == check.NOT_JUDGED == 5
    assert "score" not in captured.out.replace("no score", "")
    assert "grounding (judge gpt-5.4): no score; none of the 3 claim(s) could be judged" in captured.out
    assert (
        f"  - not judged (line 3): Heat pump sales fell by 5 percent in 2024 [1].\n      {SALES}: the judge call failed"
        in (captured.out)
    )
    assert "the judge could not judge any of the 3 claim(s) (see why above); 0 judged, 3 not judged" in (captured.err)


def test_claims_whose_source_has_no_stored_text_are_listed_and_not_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setattr(check, "default_judge", lambda model, *_: ScriptedChatGenerator(role="judge"))
    path = tmp_path / "report.md"
    path.write_text(f"Heat pump sales fell by 5 percent in 2024 [s]({SALES}). Policy changed [p]({POLICY}).\n")
    ledger = EvidenceLedger()
    ledger.record_page(url=SALES, title="", text=PAGES[SALES])
    ledger.record_page(url=POLICY, title="", text="")
    (tmp_path / "sources.json").write_text(ledger.to_json(), encoding="utf-8")

    status = cli.main(["check", str(path), "--sources", str(tmp_path / "sources.json"), "--judge"])

    captured = capsys.readouterr()
    out = captured.out
    assert status == check.NOT_JUDGED == 5  # a claim not judged is not a claim supported
    assert "score 1.00 over 1 of 2 claim(s); 1 judged, 1 not judged; 1 supported, 0 unsupported" in out
    assert "could not judge 1 of the 2 claim(s) (see why above); 1 judged, 1 not judged" in captured.err
    assert f"  - not judged (line 1): Policy changed [p]({POLICY}).\n      {POLICY}: no stored text" in out


def test_judging_against_a_plain_url_list_is_a_usage_error(
    report: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setattr(check, "default_judge", lambda model, *_: ScriptedChatGenerator(role="judge"))
    urls = tmp_path / "urls.json"
    urls.write_text(json.dumps([SALES, OUTLOOK, POLICY]), encoding="utf-8")

    assert cli.main(["check", str(report), "--sources", str(urls), "--judge"]) == 2

    captured = capsys.readouterr()
    assert "score" not in captured.out
    assert captured.err.startswith("deep-research check: error: --judge needs the stored texts")
    assert "`deep-research --sources`" in captured.err


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


# --- reports written elsewhere: numbered markers and a reference list under a title in their own language ----------

FOREIGN_REPORTS = Path(__file__).parent / "data" / "foreign_reports"
# For each report: how many marker citations its body holds, and the URL each label stands for.
FOREIGN_MARKERS: dict[str, tuple[int, dict[str, str]]] = {
    "de_quellen_fett.md": (
        8,
        {
            "1": "https://www.waermepumpe.de/presse/zahlen-daten/",
            "2": "https://www.bmwk.de/Redaktion/DE/Artikel/Energie/geg.html",
            "3": "https://www.kfw.de/inlandsfoerderung/Privatpersonen/Bestehende-Immobilie/Förderprodukte/Heizungsförderung-für-Privatpersonen-Wohngebäude-(458)/",
            "4": "https://ec.europa.eu/eurostat/statistics-explained/index.php?title=Electricity_price_statistics",
        },
    ),
    "en_perplexity_sources_colon.md": (
        11,
        {
            "1": "https://www.iea.org/reports/batteries-and-secure-energy-transitions",
            "2": "https://about.bnef.com/blog/lithium-ion-battery-pack-prices-hit-record-low-of-139-kwh/",
            "3": "https://en.wikipedia.org/wiki/Battery_storage_power_station_(grid)",
            "4": "https://www.eia.gov/todayinenergy/detail.php?id=61202",
            "5": "https://emp.lbl.gov/queues",
        },
    ),
    "es_referencias_lista.md": (
        7,
        {
            "1": "https://www.meteo.cat/wpweb/climatologia/el-clima-ara/balanc-climatic-2023/",
            "2": "https://aca.gencat.cat/es/laigua/estat-del-medi-hidric/recursos-disponibles/estat-de-les-reserves-daigua-als-embassaments/",
            "3": "https://www.uniopagesos.cat/es/noticias/perdidas-regadio",
            "4": "https://www.boe.es/buscar/act.php?id=BOE-A-2023-10497",
            "5": "https://www.ipcc.ch/report/ar6/wg1/chapter/chapter-11/",
            "6": "https://es.wikipedia.org/wiki/Desalaci%C3%B3n",
        },
    ),
    "fr_references_definitions.md": (
        6,
        {
            "1": "https://www.edf.fr/groupe-edf/espaces-dedies/journalistes/tous-les-communiques-de-presse/production-nucleaire-2024",
            "2": "https://www.asn.fr/l-asn-informe/actualites/corrosion-sous-contrainte",
            "3": "https://www.cours-des-comptes.fr/publications/la-filiere-epr",
            "4": "https://fr.wikipedia.org/wiki/EPR2",
        },
    ),
    "it_fonti_link.md": (
        4,
        {
            "1": "https://www.istat.it/comunicato-stampa/movimento-turistico-in-italia-anno-2024/",
            "2": "https://www.bancaditalia.it/statistiche/tematiche/rapporti-estero/turismo-internazionale/",
            "3": "https://www.comune.venezia.it/it/content/contributo-accesso",
            "4": "https://en.wikipedia.org/wiki/Overtourism_(disambiguation)",
        },
    ),
    "ja_shutten.md": (
        5,
        {
            "1": "https://www.meti.go.jp/policy/mono_info_service/joho/conference/semicon_digital.html",
            "2": "https://www.nikkei.com/article/DGXZQOUC242W20U4A220C2000000/",
            "3": "https://www.rapidus.inc/news_topics/",
            "4": "https://www.meti.go.jp/press/2024/semiconductor-talent.html",
        },
    ),
    "ko_untitled_list.md": (
        6,
        {
            "1": "https://kostat.go.kr/board.es?mid=a10301010000&bid=204&act=view&list_no=428430",
            "2": "https://www.yna.co.kr/view/AKR20240228069200002",
            "3": "https://www.betterfuture.go.kr/front/policySpace/basicPlan.do",
            "4": "https://www.oecd.org/en/publications/society-at-a-glance-2024_918d8db3-en.html",
        },
    ),
    "pt_notas_rodape.md": (
        5,
        {
            "^1": "https://www.gov.br/inpe/pt-br/assuntos/ultimas-noticias/prodes-2023",
            "^2": "https://www.gov.br/ibama/pt-br/assuntos/noticias/2024/balanco-fiscalizacao",
            "^3": "https://alerta.mapbiomas.org/relatorio",
            "^4": "https://www.nature.com/articles/d41586-024-03001-0",
        },
    ),
    "ru_istochniki_skobki.md": (
        5,
        {
            "1": "https://mcx.gov.ru/press-service/news/eksport-pshenitsy-2024/",
            "2": "https://www.reuters.com/markets/commodities/russias-wheat-exports-2024-06-28/",
            "3": "https://ru.wikipedia.org/wiki/Экспорт_зерна_из_России",
        },
    ),
    "zh_cankao_wenxian.md": (
        6,
        {
            "1": "http://www.caam.org.cn/chn/4/cate_39/con_5236374.html",
            "2": "http://www.customs.gov.cn/customs/302249/zfxxgk/2799825/302274/index.html",
            "3": "https://www.reuters.com/business/autos-transportation/byd-global-expansion-2024/",
            "4": "https://ec.europa.eu/commission/presscorner/detail/en/ip_24_3630",
            "5": "https://zh.wikipedia.org/wiki/中欧电动汽车贸易争端",
        },
    ),
}


@pytest.mark.parametrize("name", sorted(FOREIGN_MARKERS))
def test_the_markers_of_reports_written_elsewhere_are_linked_to_their_sources(name: str) -> None:
    report = (FOREIGN_REPORTS / name).read_text(encoding="utf-8")
    count, labels = FOREIGN_MARKERS[name]

    body = extract_citations(report, sources_section=False)

    assert len(body) == count
    assert {(c.kind, c.text, c.url) for c in body} == {("reference", label, url) for label, url in labels.items()}
    claims = cited_claims(report, labels.values())
    assert {claim.line for claim in claims} == {c.line for c in body}  # no entry of the reference list is a claim
    assert all("http" not in claim.text and "[" not in claim.text for claim in claims)


@pytest.mark.parametrize("name", sorted(FOREIGN_MARKERS))
def test_check_verifies_the_markers_of_reports_written_elsewhere(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = FOREIGN_REPORTS / name
    citations = extract_citations(report.read_text(encoding="utf-8"))
    labels = FOREIGN_MARKERS[name][1]
    missing = sorted(labels)[1]
    cited = list(dict.fromkeys(c.url for c in citations))
    urls = tmp_path / "urls.json"
    urls.write_text(json.dumps([url for url in cited if url != labels[missing]]), encoding="utf-8")

    status = cli.main(["check", str(report), "--sources", str(urls)])

    out = capsys.readouterr().out
    assert status == 1
    assert f"{len(cited)} cited URL(s), {len(cited) - 1} verified, 1 unverified" in out
    flagged = [c for c in citations if c.url == labels[missing]]
    listed = out.split("unverified citations:\n", 1)[1].splitlines()
    assert listed == [f"  - {c.url} (line {c.line}): {c.sentence}" for c in flagged]
    assert any(c.text == missing for c in flagged)  # a marker, not only the entry of the list


def test_a_report_whose_fence_hides_its_references_fails_with_the_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = Path(__file__).parents[1] / "evidence" / "data" / "fence_closed_with_marker.md"
    urls = tmp_path / "urls.json"
    urls.write_text(json.dumps(["https://wien.example/pilot/final-report", "https://energy.example/sizing"]))

    for argv in (["check", str(report)], ["check", str(report), "--sources", str(urls)]):
        status = cli.main(argv)

        captured = capsys.readouterr()
        assert status == check.UNREADABLE == 4
        assert f"{report}: 3 problem(s) hide citations from a reader:" in captured.out
        assert "  - line 11: the code fence ``` opened here never closes, so lines 12-24 read as code" in captured.out
        assert "marker(s) such as [1], [2], [3] on line(s) 3, 4, 5, 9 point to no reference" in captured.out
        assert "reference(s) on line(s) 18, 20, 21, 22, 23, 24 stand inside code" in captured.out
        assert "does not read as its author meant" in captured.err
    assert "0 cited URL(s), 0 verified, 0 unverified; citation precision 1.00" in captured.out


def test_a_fifo_or_a_too_deep_ledger_is_refused_as_usage_without_blocking(
    report: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The report and ``--sources`` are read through the local-file door and the bounded JSON parser."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 10_000 + "]" * 10_000, encoding="utf-8")
    for argv in (
        ["check", str(fifo)],
        ["check", str(report), "--sources", str(fifo)],
        ["check", str(report), "--sources", str(deep)],
    ):
        blocked, status = without_blocking_on(fifo, lambda argv=argv: cli.main(argv))
        assert not blocked, argv
        assert status == 2, argv
        error = capsys.readouterr().err
        assert "deep-research check: error: cannot read" in error
        assert argv[-1] in error  # the file it could not read
