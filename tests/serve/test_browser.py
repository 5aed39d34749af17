"""The search page in a real headless browser (slow): `graphtx serve` over a tiny index, Chromium driven by Selenium.

Loads the page, runs a claim-text query, sees hits with matched features and SVG graphs, pages on,
opens a document page, and loads /docs; the browser must log no error (a blocked external asset
would be a Content-Security-Policy error). Screenshots of each step go to ``tmp_path``, or to
``$GRAPHTX_SCREENSHOTS`` when set; ``GRAPHTX_BROWSER_INDEX=DIR`` and ``GRAPHTX_BROWSER_QUERY=FILE`` run
the same steps over another index (the README's screenshots: the demo grants, see benchmarks/README.md). Needs Debian's ``chromium`` and ``chromium-driver`` and ``pip install 'graphtx[browser]'``;
skipped with the reason otherwise.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.serve.live import serve_process

pytestmark = pytest.mark.slow

FILTERS = {"before", "cpc", "ipc", "country", "kind", "exclude_family", "group_by_family"}
# record the bodies the page sends (run through the driver, which the page's Content-Security-Policy does not restrict)
RECORD_BODIES = """
window.__bodies = [];
const send = window.fetch;
window.fetch = (url, options) => { if (options && options.body) window.__bodies.push(options.body); return send(url, options); };
"""
QUERY = "1. A zorblat3 device comprising a battery cell, a cooling plate and a charging circuit connected to the battery cell."


def _binary(*names: str) -> str | None:
    return next((p for p in (shutil.which(n) for n in names) if p), None)


@pytest.fixture(scope="module")
def browser():
    webdriver = pytest.importorskip(
        "selenium.webdriver", reason="the browser test needs selenium: pip install 'graphtx[browser]'"
    )
    chromium = _binary("chromium", "chromium-browser", "google-chrome")
    driver_path = _binary("chromedriver")
    if not chromium or not driver_path:
        pytest.skip("the browser test needs Chromium and its driver: apt-get install chromium chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1200,900",
        "--lang=en-US",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=driver_path))
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def _settled(driver) -> bool:
    """The hit list is shown and its explanations have come (the page redraws each hit when they do)."""
    from selenium.webdriver.common.by import By

    return bool(driver.find_elements(By.CSS_SELECTOR, "#results .hit")) and not driver.find_elements(
        By.CSS_SELECTOR, "#results .why.pending"
    )


def _errors(driver) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def _shots(tmp_path: Path) -> Path:
    out = Path(os.environ.get("GRAPHTX_SCREENSHOTS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    return out


@pytest.mark.timeout(240)
def test_search_page_in_chromium(browser, tiny_index, tmp_path):
    index, query = os.environ.get("GRAPHTX_BROWSER_INDEX"), os.environ.get("GRAPHTX_BROWSER_QUERY")
    tiny = not index
    index, query = index or str(tiny_index), Path(query).read_text(encoding="utf-8") if query else QUERY
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    shots = _shots(tmp_path)
    wait = WebDriverWait(browser, 60)
    args = ["--index", index, "--link-template", "https://patents.google.com/patent/{id_compact}", "--quiet"]
    with serve_process(args) as (_proc, port):
        base = f"http://127.0.0.1:{port}"
        browser.get(base + "/")
        wait.until(lambda d: "documents" in d.find_element(By.ID, "status").text)  # /healthz answered
        assert not tiny or "120 documents" in browser.find_element(By.ID, "status").text
        browser.execute_script("arguments[0].value = arguments[1]", browser.find_element(By.ID, "query"), query)
        browser.save_screenshot(str(shots / "web_1_query.png"))

        browser.execute_script(RECORD_BODIES)
        browser.find_element(By.ID, "search-button").click()  # 1. a query: hits with features and graphs
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#results .hit"))
        sent = json.loads(browser.execute_script("return window.__bodies[0]"))
        assert (
            sent["text"] == query.strip() and sent["offset"] == 0 and not sent.get("explain") and not sent.get("svg")
        )  # the hit list first
        assert not FILTERS & set(sent), sent  # filters are sent only when filled
        wait.until(
            lambda d: (
                d.find_elements(By.CSS_SELECTOR, "#results .hit table.chart")
                and not d.find_elements(By.CSS_SELECTOR, ".why.pending")
            )
        )
        explained = json.loads(
            browser.execute_script("return window.__bodies[1]")
        )  # then the page's explanations, in one request
        assert explained["text"] == query.strip() and explained["offset"] == 0 and explained["k"] == 10
        hits = browser.find_elements(By.CSS_SELECTOR, "#results .hit")
        assert len(hits) == 10 and "Hits 1–10" in browser.find_element(By.ID, "message").text
        first = hits[0]
        assert first.find_elements(By.CSS_SELECTOR, "table.chart tr.found") and first.find_elements(
            By.CSS_SELECTOR, "p.not-found, p.all-found"
        )
        assert not tiny or first.find_elements(
            By.CSS_SELECTOR, ".abstract mark, .claim mark"
        )  # matched features highlighted in the text
        assert (
            first.find_element(By.CSS_SELECTOR, "a.external")
            .get_attribute("href")
            .startswith("https://patents.google.com/patent/")
        )
        first.find_element(By.CSS_SELECTOR, "details.graphs summary").click()
        wait.until(lambda d: first.find_element(By.CSS_SELECTOR, "details.graphs svg.graph").is_displayed())
        assert len(first.find_elements(By.CSS_SELECTOR, "svg.graph")) == 2 and first.find_elements(
            By.CSS_SELECTOR, "svg.graph .node.matched"
        )
        assert "[object" not in browser.find_element(By.ID, "results").text  # every value rendered as text
        browser.execute_script("window.scrollTo(0, 0)")
        browser.save_screenshot(str(shots / "web_2_hits.png"))
        browser.execute_script(
            "arguments[0].scrollIntoView(); window.scrollBy(0, -40)", first.find_element(By.CSS_SELECTOR, ".why")
        )
        browser.save_screenshot(str(shots / "web_3_graphs.png"))

        browser.find_element(By.ID, "next").click()  # 2. the next page (offset 10)
        wait.until(lambda d: "Hits 11–20" in d.find_element(By.ID, "message").text and _settled(d))
        ranks = [h.get_attribute("value") for h in browser.find_elements(By.CSS_SELECTOR, "#results .hit")]
        assert ranks[0] == "11" and "offset=10" in browser.current_url

        schema = json.load(urllib.request.urlopen(f"{base}/openapi.json", timeout=30))["components"]["schemas"]
        if "before" in schema["SearchIn"]["properties"]:  # the service filters (issue 13, item 2): a filled one is sent
            browser.find_element(By.ID, "f-before").send_keys("2015-01-01")
            browser.execute_script("window.__bodies = []")
            browser.find_element(By.ID, "search-button").click()
            wait.until(
                lambda d: (
                    d.execute_script("return window.__bodies.length")
                    and "Hits 1–" in d.find_element(By.ID, "message").text
                    and _settled(d)
                )
            )
            sent = json.loads(browser.execute_script("return window.__bodies[0]"))
            assert sent["before"] == "2015-01-01" and not (FILTERS - {"before"}) & set(sent)
            dates = [
                e.text
                for e in browser.find_elements(
                    By.XPATH, "//ol[@id='results']//dt[.='published']/following-sibling::dd[1]"
                )
            ]
            assert dates and all(d < "2015-01-01" for d in dates), dates
            browser.find_element(By.ID, "f-before").clear()
            browser.find_element(By.ID, "search-button").click()
        else:
            browser.find_element(By.ID, "prev").click()
        wait.until(lambda d: "Hits 1–10" in d.find_element(By.ID, "message").text and _settled(d))
        wait.until(lambda d: d.find_element(By.ID, "exports").is_displayed())  # the page's hits and claim charts as CSV
        href = browser.find_element(By.CSS_SELECTOR, "#exports a.export").get_attribute("href")
        assert href.startswith("data:text/csv") and browser.find_element(
            By.CSS_SELECTOR, "#exports a.export"
        ).get_attribute("download")
        rows = list(csv.reader(io.StringIO(urllib.parse.unquote(href.split(",", 1)[1]).lstrip("\ufeff"))))
        assert rows[0][:3] == ["rank", "doc_id", "score"] and [r[0] for r in rows[1:]] == [str(i) for i in range(1, 11)]
        chart = browser.find_element(By.CSS_SELECTOR, "#results .hit a.export").get_attribute("href")
        chart_rows = list(csv.reader(io.StringIO(urllib.parse.unquote(chart.split(",", 1)[1]).lstrip("\ufeff"))))
        assert (
            chart_rows[0] == ["feature", "query_feature", "hit_feature", "similarity", "found", "confidence"]
            and len(chart_rows) > 1
        )
        link = browser.find_element(By.CSS_SELECTOR, "#results .hit a.doc-link")  # 3. a document page
        doc_id = browser.find_element(By.CSS_SELECTOR, "#results .hit code").text
        link.click()
        wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, "#document h2")))
        assert browser.current_url.endswith(f"/view/{doc_id}")
        assert doc_id in browser.find_element(By.CSS_SELECTOR, "#document .ids").text
        assert browser.find_elements(By.CSS_SELECTOR, "#document svg.graph .node")
        api = json.load(
            urllib.request.urlopen(f"{base}/documents/{urllib.parse.quote(doc_id)}?graph=false", timeout=30)
        )
        claims = browser.find_elements(
            By.CSS_SELECTOR, "#document ol.claims li"
        )  # every claim, the independent ones marked
        assert len(claims) == len(api["claims"]) >= 1, (len(claims), len(api["claims"]))
        assert len(browser.find_elements(By.CSS_SELECTOR, "#document ol.claims li.independent")) == sum(
            c["independent"] for c in api["claims"]
        )
        assert browser.find_elements(
            By.CSS_SELECTOR, "#document section.citations"
        )  # what it cites and what cites it (in the index)
        assert "[object" not in browser.find_element(By.ID, "document").text
        browser.save_screenshot(str(shots / "web_4_document.png"))
        assert not _errors(browser), _errors(browser)

        browser.find_element(By.ID, "similar").click()  # 4. documents like this one: an id query from the document page
        wait.until(lambda d: f"documents like {doc_id}" in d.find_element(By.ID, "message").text)
        assert (
            browser.find_elements(By.CSS_SELECTOR, "#results .hit")
            and browser.find_element(By.ID, "query").get_attribute("value") == doc_id
        )
        assert not _errors(browser), _errors(browser)

        # 5. how long a search takes, as the page sees it: request sent to hit list shown (explanations follow); recorded, not asserted
        times = []
        for _ in range(9):
            browser.execute_script("arguments[0].value = arguments[1]", browser.find_element(By.ID, "query"), query)
            browser.execute_script("document.getElementById('results').dataset.ms = ''")
            browser.find_element(By.ID, "search-button").click()
            wait.until(lambda d: d.find_element(By.ID, "results").get_attribute("data-ms") and _settled(d))
            times.append(int(browser.find_element(By.ID, "results").get_attribute("data-ms")))
        times.sort()
        latency = {
            "index": index,
            "searches": len(times),
            "median_ms": times[len(times) // 2],
            "slowest_ms": times[-1],
            "load": os.getloadavg()[0],
        }
        (shots / "page_latency.json").write_text(json.dumps(latency) + "\n")
        print(f"page search latency: {latency}")

        browser.get(base + "/docs")  # 6. the API page, from local assets only
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, ".swagger-ui .info .title"))
        assert "graphtx" in browser.find_element(By.CSS_SELECTOR, ".swagger-ui .info .title").text
        assert browser.find_elements(By.CSS_SELECTOR, ".opblock-summary-path")  # the endpoints are listed
        assert not _errors(browser), _errors(browser)


@pytest.mark.timeout(240)
def test_the_page_says_why_it_finds_nothing(browser, tiny_index):
    """A filter on a field the index lacks is explained, the pager hides when there is nothing to page (also after an
    error), an unknown id offers its closest ids once, and the ranker menu offers only what the index has."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 60)
    with serve_process(["--index", str(tiny_index), "--quiet"]) as (_proc, port):
        browser.get(f"http://127.0.0.1:{port}/")
        wait.until(lambda d: "documents" in d.find_element(By.ID, "status").text)
        offered = [o.get_attribute("value") for o in browser.find_elements(By.CSS_SELECTOR, "#f-ranker option")]
        assert offered == ["", "hybrid", "dense", "bm25"], offered  # no learned or convex ranker in this index

        def search(query: str, cpc: str = "") -> str:
            browser.execute_script("arguments[0].value = arguments[1]", browser.find_element(By.ID, "query"), query)
            browser.execute_script("arguments[0].value = arguments[1]", browser.find_element(By.ID, "f-cpc"), cpc)
            browser.execute_script("document.getElementById('message').textContent = ''")
            browser.find_element(By.ID, "search-button").click()
            wait.until(lambda d: d.find_element(By.ID, "message").text not in ("", "Searching…"))
            return browser.find_element(By.ID, "message").text

        message = search(QUERY, cpc="H01M 10/")  # the tiny index holds no CPC codes
        assert (
            "No hits" in message
            and "CPC H01M10/: 0 of 120 documents pass" in message
            and "no document of this index has CPC codes" in message
        )
        assert not browser.find_element(By.ID, "pager").is_displayed()

        message = search("qwerty zzzz")  # nonsense: warned about, and no query feature "found" in any hit
        assert (
            "warning: none of the query's words occurs in the indexed documents" in message
            and "1 invention feature" in message
        ), message
        wait.until(_settled)
        assert browser.find_elements(By.CSS_SELECTOR, "#results table.chart") and not browser.find_elements(
            By.CSS_SELECTOR, "#results table.chart tr.found"
        )

        message = search("T-0003")  # no such id: the closest ids as links, said once
        assert message.lower().count("did you mean") == 1, message
        assert (
            browser.find_elements(By.CSS_SELECTOR, "#message a")
            and not browser.find_element(By.ID, "pager").is_displayed()
        )
        assert not _errors(browser) or all("404" in e or "400" in e for e in _errors(browser)), _errors(browser)
