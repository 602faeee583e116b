"""
The HTML report in a real headless Chromium: it renders, every citation opens its passage, and nothing from a source
or the report runs or styles the page. Skipped where no chromium and chromedriver are installed (.ci/run installs
them: apt-get install chromium chromium-driver).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from haystack_deep_research import ResearchRun
from haystack_deep_research.report import citation_findings, export_html, verify_report

CHROMIUM = next((found for name in ("chromium", "chromium-browser") if (found := shutil.which(name))), None)
DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None or DRIVER is None,
    reason="needs chromium and chromedriver (Debian: apt-get install chromium chromium-driver)",
)

HOSTILE = (
    "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">"
    "<style>body { display: none }</style></span></span><svg onload=\"document.title='pwned'\">"
)
TIDES = "https://tides.example/report"
STORMS = "https://storms.example/surge"


def _result() -> dict[str, Any]:
    run = ResearchRun(question="How high were the tides?")
    filler = " ".join(f"Line {n} says nothing about the sea." for n in range(60))
    run.ledger.record_page(
        url=TIDES,
        title=f"Harbour tides {HOSTILE}",
        text=f"{filler}\n\nThe harbour gauge recorded spring tides of 4.2 metres in March 2024. {HOSTILE}\n\n{filler}",
    )
    run.ledger.record_page(url=STORMS, title="Storm surge", text="A storm surge added half a metre on 3 March.")
    report = (
        "# Tides of 2024\n\n"
        f"Spring tides reached 4.2 metres at the harbour gauge [Harbour]({TIDES}). "
        f"<script>document.title='pwned'</script> A storm surge added half a metre [Storms]({STORMS}).\n\n"
        f"- <img src=x onerror=\"document.title='pwned'\"> [click](javascript:document.title='pwned')\n"
    )
    check = verify_report(run, report, [TIDES, STORMS])
    return {"report": check.report, "citations": citation_findings(check)}


@pytest.fixture
def browser() -> Iterator[Any]:
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1000,900"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path=str(DRIVER)), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def test_the_page_renders_and_every_citation_opens_its_passage_and_nothing_hostile_runs(
    browser: Any, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    result = _result()
    page = tmp_path / "report.html"
    page.write_text(export_html(result), encoding="utf-8")

    browser.get(page.as_uri())

    assert browser.title == "Tides of 2024"  # no hostile script set it
    body = browser.find_element(By.TAG_NAME, "body")
    assert body.is_displayed()  # no hostile style hid it
    assert "Spring tides reached 4.2 metres at the harbour gauge" in body.text
    assert browser.find_elements(By.TAG_NAME, "script") == []
    assert len(browser.find_elements(By.TAG_NAME, "style")) == 1  # the page's own
    assert browser.find_elements(By.CSS_SELECTOR, "img, svg, iframe, object") == []
    assert browser.find_elements(By.CSS_SELECTOR, "[onerror], [onload], a[href^='javascript']") == []
    buttons = browser.find_elements(By.CSS_SELECTOR, "main button.cite")
    passages = {p["url"]: p for p in result["citations"]["passages"]}
    assert len(buttons) >= len(passages) == 2
    for button in buttons:
        note = browser.find_element(By.ID, button.get_attribute("popovertarget"))
        assert not note.is_displayed()
        button.click()
        assert note.is_displayed()
        url = note.find_element(By.CSS_SELECTOR, "a.url").get_attribute("href")
        shown = note.find_element(By.CSS_SELECTOR, ".passage").text
        assert " ".join(passages[url]["passage"].split()) == " ".join(shown.split())
        read = datetime.fromisoformat(passages[url]["read_at"]).astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
        assert note.find_element(By.CSS_SELECTOR, ".read").text == f"read {read}"  # as people read a time
        note.find_element(By.CSS_SELECTOR, "button.close").click()
        assert not note.is_displayed()
    tides = browser.find_element(By.CSS_SELECTOR, "main button.cite[data-cite='1']")
    tides.click()
    note = browser.find_element(By.ID, "note-1")
    assert "The harbour gauge recorded spring tides of 4.2 metres" in note.text
    assert "<script>document.title='pwned'</script>" in note.text  # shown as text, never run
    browser.save_screenshot(str(tmp_path / "report.png"))
    assert browser.title == "Tides of 2024"
