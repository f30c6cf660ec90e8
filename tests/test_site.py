"""The results site (``results/index.html``): a verdict table per paper, every figure and table with its caption
and the ledger rows it decides (linked both ways), provenance per notebook, the ledger with filters,
self-contained; opened in headless Chromium, where it must log no console error, show every image, enlarge a
figure on a click and fit a 420 px wide screen. Screenshots at 1280 and 420 px go to ``$TIERINGLAB_SCREENSHOTS``
when it is set.

The browser test needs Debian's ``chromium`` and ``chromium-driver`` (``.ci/run`` installs them): it
fails when they are missing under ``CI=true`` and is skipped elsewhere.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
import pytest

from tieringlab import report, site
from tieringlab.claims import registry
from tieringlab.results import MANIFEST, Outputs

REPO = Path(__file__).resolve().parent.parent
CLAIM = "vfrm.obs2.reaccess_within_5min.cloudphysics"  # a claim of notebook 00_quickstart ("Sec. 3.3 Obs. 2, Table 1")
FIG4 = "eafc.fig4a.avg_partition_10ms"  # a claim of notebook 07_eafc ("Sec. V.A, Fig. 4a": 39 GB +- 3)


def plot(title: str | None = None, size: tuple[float, float] = (3, 2)):
    fig, ax = plt.subplots(figsize=size)
    ax.plot([1, 2, 4], [0.2, 0.5, 0.7])
    ax.set_xlabel("cache size (MiB)")
    ax.set_ylabel("hit ratio")
    if title:
        ax.set_title(title)
    return fig


def make_results(root: Path) -> Path:
    """A results folder as the pipeline leaves it: two notebooks saved through Outputs (captions in their
    manifests, claim values, an executed notebook) and one with files but no manifest (older results)."""
    out = Outputs("00_quickstart", root)
    out.figure(plot(), "lru_hit_ratio", caption="LRU hit ratio against cache size.", reproduces="vFRM Fig. 6")
    out.figure(plot("arrivals over time"), "arrivals")  # no caption: its title stands in
    out.table(pd.DataFrame({"trace": ["a", "b"], "hit_ratio": [0.5, 0.25]}), "summary",
              caption="Table-1-style statistics.", reproduces="vFRM Table 1")
    out.table(pd.DataFrame({"x": range(site.MAX_TABLE_ROWS + 5)}), "long")
    out.metric("n_requests", 3000)
    out.claim(CLAIM, 95.0)
    plt.close("all")
    nb_dir = root / "notebooks"
    nb_dir.mkdir()
    shutil.copy(REPO / "notebooks/00_quickstart.ipynb", nb_dir / "00_quickstart.ipynb")
    legacy = root / "figures" / "99_legacy"
    legacy.mkdir(parents=True)
    shutil.copy(root / "figures/00_quickstart/arrivals.png", legacy / "fig6_mds_0.png")
    eafc = Outputs("07_eafc", root)  # a figure that decides rows of the ledger: EAFC's Figs. 4a-4d
    eafc.figure(plot(size=(9, 2.5)), "fig4", caption="Partition and latency per controller window.",  # 1350 px wide
                reproduces="EAFC Fig. 4a-d")
    eafc.claim(FIG4, 50.0, readings={"whole_run_average": 39.0})  # differs; holds under a reading: reading-dependent
    plt.close("all")
    return root


@pytest.fixture()
def results(tmp_path) -> Path:
    """:func:`make_results` for a test that changes it."""
    return make_results(tmp_path / "results")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """:func:`make_results` with its site written, shared by the tests that only read them."""
    root = make_results(tmp_path_factory.mktemp("site") / "results")
    site.write(root)
    return root


@pytest.fixture(scope="module")
def ledger(built) -> pd.DataFrame:
    """The ledger of :func:`built` (:func:`tieringlab.report.build`)."""
    return report.build(built)


def test_references_name_paper_figures_and_tables():
    # hand-read from the strings: a paper named before a reference owns it, else the claim's paper, else the
    # first paper the string names, else none (any paper); panel None is the whole figure
    ref = site.references
    assert ref("vFRM Fig. 6 (thesis Fig. 20)") == {("vfrm", "fig", 6, None), ("thesis", "fig", 20, None)}
    assert ref("OTF-AST Figs. 7-9") == {("otf-ast", "fig", n, None) for n in (7, 8, 9)}
    assert ref("AutoTiering Table IV") == {("autotiering", "table", 4, None)}
    assert ref("EAFC Fig. 4a-d") == {("eafc", "fig", 4, p) for p in "abcd"}
    assert ref("Sec. V.A, Fig. 4a/4c", "EAFC") == {("eafc", "fig", 4, "a"), ("eafc", "fig", 4, "c")}
    assert ref("Fig. 6(g)-(i)", "EAFC") == {("eafc", "fig", 6, p) for p in "ghi"}
    assert ref("Fig. 8 (a), (b)", "vFRM") == {("vfrm", "fig", 8, "a"), ("vfrm", "fig", 8, "b")}
    assert ref("Table 2 (N = 16, D = 1 s, 50 %)", "Tai thesis (ARA)") == {("thesis", "table", 2, None)}
    assert ref("vFRM Table 1 (thesis Tables 9 and 12)") == {
        ("vfrm", "table", 1, None), ("thesis", "table", 9, None), ("thesis", "table", 12, None)}
    assert ref("thesis Table 1, Fig. 8 (orderings)") == {("thesis", "table", 1, None), ("thesis", "fig", 8, None)}
    assert ref("Sec. 5.3, Fig. 8(a); thesis Fig. 24(a)", "vFRM") == {
        ("vfrm", "fig", 8, "a"), ("thesis", "fig", 24, "a")}
    assert ref("Fig. 15 (= Table 7(b) 50 %)", "Tai thesis (LMST)") == {
        ("thesis", "fig", 15, None), ("thesis", "table", 7, "b")}
    assert ref("Table 5 NMST, App1-2", "Tai thesis (LMST)") == {("thesis", "table", 5, None)}
    assert ref("Sec. 3.3 Obs. 2") == set() and ref(None) == set()
    assert ref("Fig. 6") == {(None, "fig", 6, None)}
    # a figure decides a claim that names one of its paper figures (of the same paper or of one left unnamed;
    # the same panel where both name one)
    fig = ref("vFRM Fig. 8 (thesis Fig. 24)")
    assert site.decides(fig, ref("Sec. 4.3.4, Fig. 24", "Tai thesis (G-vFRM)"))
    assert site.decides(fig, ref("Sec. 5.3.1, Fig. 8(b)(c)", "vFRM"))
    assert not site.decides(fig, ref("Fig. 8", "Tai thesis (ARA)"))  # the thesis's Fig. 8 is another figure
    assert not site.decides(fig, ref("Table 8", "vFRM"))  # a table is no figure
    assert site.decides(ref("Fig. 6"), ref("Fig. 6(b)", "AutoTiering"))
    panel_c = ref("thesis Fig. 3, Fig. 6 (c)")
    assert site.decides(panel_c, ref("Fig. 6 (c)", "Tai thesis (ARA)"))
    assert not site.decides(panel_c, ref("Fig. 6 (a)", "Tai thesis (ARA)"))


def test_outputs_record_captions_in_order(tmp_path):
    out = Outputs("99_demo", tmp_path)
    out.figure(plot("first title"), "b")
    out.figure(plot(), "a", caption="A.", reproduces="Fig. 2")
    out.figure(plot(), "b", caption="B again.")  # saved again: replaced where it was
    with pytest.raises(TypeError, match="caption must be a string"):
        out.figure(plot(), "c", caption=3)
    plt.close("all")
    manifest = json.loads((tmp_path / "figures/99_demo" / MANIFEST).read_text())
    assert [(e["name"], e["caption"], e["reproduces"]) for e in manifest["figures"]] == [
        ("b", "B again.", None), ("a", "A.", "Fig. 2")]
    assert not (tmp_path / "figures/99_demo/c.png").exists()
    out.figure(plot("only a title"), "d")
    fig, axes = plt.subplots(1, 2)
    axes[0].set_title("left panel")
    axes[1].set_title("right panel")
    out.figure(fig, "e")  # the titles of several panels are no caption
    fig.suptitle("a suptitle")
    out.figure(fig, "f")
    plt.close("all")
    manifest = json.loads((tmp_path / "figures/99_demo" / MANIFEST).read_text())
    assert [e["caption"] for e in manifest["figures"][-3:]] == ["only a title", None, "a suptitle"]


def test_site_lists_every_figure_and_table_with_caption(built, ledger):
    results = built
    page = (built / "index.html").read_text()
    for name in ("lru_hit_ratio", "arrivals", "fig6_mds_0", "fig4"):
        assert f'alt="{name}"' in page
    assert page.count("<img ") == 4
    assert "LRU hit ratio against cache size." in page and "reproduces vFRM Fig. 6" in page
    assert "arrivals over time" in page  # the title as caption
    assert "Table-1-style statistics." in page and "reproduces vFRM Table 1" in page
    assert "reproduces Fig. 6</span> <span class=\"inferred\">(inferred from the name)" in page
    assert page.index('alt="lru_hit_ratio"') < page.index('alt="arrivals"')  # the order they were saved in
    assert "5 more rows in the CSV." in page
    assert 'href="tables/00_quickstart/long.csv" download>' in page  # every table's CSV to download
    assert 'href="notebooks/00_quickstart.ipynb"' in page
    assert (page.index('id="verdicts"') < page.index('id="nb-00_quickstart"') < page.index('id="nb-07_eafc"')
            < page.index('id="nb-99_legacy"') < page.index('id="ledger"'))
    assert page.count('<tr data-paper="') == len(ledger) == len(registry())
    assert f'id="claim-{CLAIM}"' in page and ">holds<" in page
    # the ledger: claims by paper then verdict, not reproduced yet last; the other kinds in a table of their own
    claims_table = page[page.index('class="data ledger claims"'):page.index('class="data ledger others"')]
    rows = re.findall(r'<tr data-paper="([^"]*)" data-verdict="([^"]*)" data-kind="([^"]*)"', claims_table)
    assert {k for _, _, k in rows} == {"claim"} and len(rows) == int((ledger["kind"] == "claim").sum())
    assert [v for _, v, _ in rows[:3]] == ["holds", "differs", "not reproduced yet"]  # 00's, 07's, then the rest
    missing = [v == "not reproduced yet" for _, v, _ in rows]
    assert missing == sorted(missing)
    # provenance per notebook: its status (scale), commit and date, and the parameters it ran with
    prov = report.notebook_provenance(results)["00_quickstart"]
    section = page[page.index('id="nb-00_quickstart"'):page.index('id="nb-07_eafc"')]
    assert prov["status"] in section
    if prov.get("commit"):
        assert f"<code>{prov['commit']}</code>" in section and prov["commit_date"] in section
    source = json.loads((REPO / "notebooks/00_quickstart.ipynb").read_text())
    first = next("".join(c["source"]) for c in source["cells"] if "parameters" in c["metadata"].get("tags", []))
    assert '<details class="params">' in section and html.escape(first.strip()) in section


def test_site_is_self_contained_and_deterministic(built):
    results = built
    page = (built / "index.html").read_text()
    assert not re.search(r'(src|href)="(https?:)?//', page), "the page must fetch nothing from a network"
    assert "<script src" not in page and 'rel="stylesheet"' not in page
    assert all(src.startswith("data:image/png;base64,") for src in re.findall(r'<img src="([^"]+)"', page))
    assert site.write(results).read_bytes() == page.encode()  # built again: the same bytes


def test_executed_notebooks_are_rendered_to_html_pages_the_site_links(results):
    # a browser shows the linked .ipynb as raw JSON: the site links a rendered page instead
    page = site.build(results)
    assert f'href="{site.NOTEBOOKS_HTML}/00_quickstart.html">executed notebook</a>' in page
    site.write(results)
    html_page = results / site.NOTEBOOKS_HTML / "00_quickstart.html"
    text = html_page.read_text()
    source = json.loads((results / "notebooks" / "00_quickstart.ipynb").read_text())
    first_code = next("".join(c["source"]) for c in source["cells"] if c["cell_type"] == "code")
    line = next(x for x in first_code.splitlines() if x.strip() and not x.startswith("#"))
    assert re.match(r"\s*(\w+)", line).group(1) in text  # a parameter of the first code cell
    assert "<script" not in text and not re.search(r'(src|href)="(https?:)?//', text), "nothing from a network"
    before = html_page.read_bytes()
    site.write(results)
    assert html_page.read_bytes() == before  # the same notebook gives the same bytes
    # a page whose notebook is gone is removed; a corrupt executed notebook is named
    (results / "notebooks" / "00_quickstart.ipynb").unlink()
    site.write(results)
    assert not html_page.exists()
    (results / "notebooks" / "00_quickstart.ipynb").write_text("{not json")
    with pytest.raises(report.ReportError, match=r"00_quickstart.ipynb: not a readable executed notebook"):
        site.write(results)


def test_report_stage_writes_the_site(built, capsys):
    results = built
    assert report.main(["--results", str(results)]) == 0
    assert (results / "index.html").is_file() and (results / "REPORT.md").is_file()
    assert "results site ->" in capsys.readouterr().out


def test_cli_report_writes_the_site_too(built, capsys):
    results = built
    # the README's `tieringlab report` must build what `python -m tieringlab.report` (the DVC stage) builds
    from tieringlab.cli import main as cli

    assert cli(["report", "--results", str(results)]) == 0
    assert (results / "index.html").read_bytes() == site.build(results).encode()
    assert (results / "REPORT.md").is_file()
    assert "results site ->" in capsys.readouterr().out


# ---------------------------------------------------------------- headless Chromium


def chromium():
    """A headless Debian Chromium driven by chromedriver through Selenium (no download of a browser)."""
    binary, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (binary and driver):
        message = "Debian's chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must not look for drivers online
    from selenium import webdriver

    opts = webdriver.ChromeOptions()
    opts.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--window-size=1280,900"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=opts, service=webdriver.ChromeService(executable_path=driver))


BROKEN_IMAGES = ("return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0))"
                 ".map(i => i.getAttribute('alt') || i.getAttribute('src'));")


def problems(driver, path: Path) -> tuple[list[str], list[str]]:
    """Open ``path`` from the file system; return (console errors, images that did not load)."""
    driver.get(path.as_uri())
    driver.execute_script("return document.readyState")
    errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    return errors, driver.execute_script(BROKEN_IMAGES)


def shoot(driver, name: str, tmp_path: Path) -> Path:
    """A screenshot of the viewport, under ``$TIERINGLAB_SCREENSHOTS`` when it is set (else in ``tmp_path``)."""
    folder = Path(os.environ.get("TIERINGLAB_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(folder / f"{name}.png"))
    return folder / f"{name}.png"


def width(driver, px: int) -> None:
    """Lay the page out ``px`` CSS pixels wide (a phone's width need not fit a desktop window's minimum)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": px, "height": 900, "deviceScaleFactor": 1, "mobile": False})


def test_site_in_headless_chromium(built, ledger, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    results, page = built, built / "index.html"
    planted = tmp_path / "planted.html"  # the checks can fail: a missing image and a script error
    planted.write_text('<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head><body>'
                       '<img src="missing.png" alt="gone"><script>no_such_function();</script></body></html>')
    driver = chromium()
    try:
        errors, broken = problems(driver, planted)
        assert broken == ["gone"] and any("no_such_function" in e for e in errors), (errors, broken)

        width(driver, 1280)
        errors, broken = problems(driver, page)
        assert errors == [], errors
        assert broken == []
        assert len(driver.find_elements(By.CSS_SELECTOR, "img")) == 4
        shots = [shoot(driver, "site-1280", tmp_path)]

        # one verdict table per paper with claims, its counts the ledger's (by verdict and by diagnosis)
        claims = ledger[ledger["kind"] == "claim"].assign(category=report.category(ledger))
        tables = driver.execute_script(  # one round trip: {paper: [[by, label, shown number], ...]}
            "const out = {}; document.querySelectorAll('#verdicts table.verdicts').forEach(t => { "
            "out[t.dataset.paper] = Array.from(t.querySelectorAll('td[data-count]'), "
            "td => [td.dataset.by, td.dataset.count, td.textContent]); }); return out;")
        assert sorted(tables) == sorted(set(claims["paper"]))
        verdict_of = {"hold": "holds", "differ": "differs", "untestable": "untestable",
                      "not reproduced yet": "not reproduced yet"}
        for paper, cells in tables.items():
            mine = claims[claims["paper"] == paper]
            expected = {("verdict", "claims"): len(mine), ("diagnosis", "claims"): len(mine)}
            expected.update({("verdict", k): int((mine["verdict"] == v).sum()) for k, v in verdict_of.items()})
            expected.update({("diagnosis", k): int((mine["category"] == v).sum()) for k, v in
                             {**verdict_of, "reading-dependent": "reading-dependent"}.items()})
            assert {(by, label): int(n) for by, label, n in cells} == expected, paper
        assert ["diagnosis", "reading-dependent", "1"] in tables["EAFC"]  # FIG4: differs, holds under a reading

        # the figure that reproduces EAFC Fig. 4a-d lists the rows of notebook 07 naming Fig. 4x, linked both ways
        figure = driver.find_element(By.ID, "fig-07_eafc-fig4")
        chips = figure.find_elements(By.CSS_SELECTOR, ".decides a")
        expected = [cid for cid, c in registry().items() if c.source == "07_eafc" and "Fig. 4" in c.where]
        assert sorted(a.get_attribute("hash") for a in chips) == sorted(f"#claim-{cid}" for cid in expected)
        back = driver.execute_script("return arguments[0].map(id => Array.from("
                                     "document.getElementById(id).querySelectorAll('td a'), a => a.hash));",
                                     [f"claim-{cid}" for cid in expected])
        assert all("#fig-07_eafc-fig4" in b for b in back), back
        # a row no figure decides links to its notebook's section; the quickstart's Table 1 row to its table
        assert driver.find_element(By.ID, f"claim-{CLAIM}").find_element(
            By.CSS_SELECTOR, "td a").get_attribute("hash") == "#tab-00_quickstart-summary"
        undecided = next(cid for cid, c in registry().items() if c.source == "07_eafc" and "Fig." not in c.where)
        assert driver.find_element(By.ID, f"claim-{undecided}").find_element(
            By.CSS_SELECTOR, "td a").get_attribute("hash") == "#nb-07_eafc"
        anchors = driver.execute_script(
            "return Array.from(document.querySelectorAll('a[href^=\"#\"]')).map(a => a.getAttribute('href'))"
            ".filter(h => !document.getElementById(decodeURIComponent(h.slice(1))));")
        assert anchors == [], anchors  # every in-page link resolves

        # the ledger's filters; a link to a row that a filter hides clears the filter
        def shown_rows() -> list[list[str]]:  # [id, paper] of the ledger rows on screen, in one round trip
            return driver.execute_script("return Array.from(document.querySelectorAll('#ledger tbody tr'))"
                                         ".filter(r => r.getClientRects().length).map(r => [r.id, r.dataset.paper]);")

        n = len(ledger)
        count = driver.find_element(By.ID, "ledger-count")
        assert count.text == f"{n} of {n} rows" and len(shown_rows()) == n
        Select(driver.find_element(By.NAME, "verdict")).select_by_value("holds")
        assert [r[0] for r in shown_rows()] == [f"claim-{CLAIM}"]
        assert count.text == f"1 of {n} rows"
        Select(driver.find_element(By.NAME, "verdict")).select_by_value("")
        Select(driver.find_element(By.NAME, "category")).select_by_value("holds")  # the diagnosis filter
        assert [r[0] for r in shown_rows()] == [f"claim-{CLAIM}"]
        driver.execute_script("arguments[0].click()", chips[0])
        assert chips[0].get_attribute("hash") in {f"#{r[0]}" for r in shown_rows()} and count.text == f"{n} of {n} rows"
        paper = registry()[CLAIM].paper
        Select(driver.find_element(By.NAME, "paper")).select_by_value(paper)
        shown = shown_rows()
        assert shown and all(r[1] == paper for r in shown)
        assert len(shown) == sum(c.paper == paper for c in registry().values())
        Select(driver.find_element(By.NAME, "paper")).select_by_value("")

        # a long table is collapsed (its CSV to download beside it), a short one shown
        long_table = driver.find_element(By.ID, "tab-00_quickstart-long")
        assert long_table.find_element(By.TAG_NAME, "details").get_attribute("open") is None
        assert not long_table.find_element(By.TAG_NAME, "table").is_displayed()
        assert long_table.find_element(By.CSS_SELECTOR, "a[download]").get_attribute("href").endswith("long.csv")
        assert driver.find_element(By.ID, "tab-00_quickstart-summary").find_element(By.TAG_NAME, "table").is_displayed()

        # a click on a figure enlarges it; Escape closes the enlarged view
        img = figure.find_element(By.TAG_NAME, "img")
        assert img.size["width"] > 900  # full width: no longer capped at 900 px
        driver.execute_script("arguments[0].scrollIntoView()", img)
        img.click()
        big = driver.find_element(By.CSS_SELECTOR, "#lightbox img")
        assert big.is_displayed() and big.get_attribute("src") == img.get_attribute("src")
        assert big.size["width"] > img.size["width"]  # larger than on the page
        shots.append(shoot(driver, "site-1280-enlarged", tmp_path))
        driver.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
        assert driver.find_elements(By.ID, "lightbox") == []

        link = driver.find_element(By.LINK_TEXT, "executed notebook")
        assert link.get_attribute("href").endswith(f"{site.NOTEBOOKS_HTML}/00_quickstart.html")
        errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == [], errors  # nor after the clicks
        errors, broken = problems(driver, results / site.NOTEBOOKS_HTML / "00_quickstart.html")
        assert errors == [] and broken == [], (errors, broken)
        assert "quickstart" in driver.page_source.lower()

        # a phone's width: nothing wider than the screen (wide tables scroll in their own box)
        width(driver, 420)
        driver.get(page.as_uri())
        assert driver.execute_script("return document.documentElement.clientWidth") <= 420
        overflow = driver.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"{overflow} px of horizontal overflow at 420 px"
        shots.append(shoot(driver, "site-420", tmp_path))
    finally:
        driver.quit()
    for shot in shots:
        pixels = plt.imread(shot)
        assert pixels.shape[0] >= 800 and pixels.std() > 0.05, f"{shot}: the screenshot shows a page, not a blank"
