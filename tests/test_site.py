"""The results site (``results/index.html``): every figure and table with its caption, the ledger with
filters, self-contained; opened in headless Chromium, where it must log no console error and show
every image.

The browser test needs Debian's ``chromium`` and ``chromium-driver`` (``.ci/run`` installs them): it
fails when they are missing under ``CI=true`` and is skipped elsewhere.
"""

from __future__ import annotations

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
CLAIM = "vfrm.obs2.reaccess_within_5min.cloudphysics"  # a claim of notebook 00_quickstart


def plot(title: str | None = None):
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([1, 2, 4], [0.2, 0.5, 0.7])
    ax.set_xlabel("cache size (MiB)")
    ax.set_ylabel("hit ratio")
    if title:
        ax.set_title(title)
    return fig


@pytest.fixture()
def results(tmp_path) -> Path:
    """A results folder as the pipeline leaves it: one notebook saved through Outputs (captions in its
    manifests, a claim value, an executed notebook) and one with files but no manifest (older results)."""
    root = tmp_path / "results"
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
    return root


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


def test_site_lists_every_figure_and_table_with_caption(results):
    page = site.build(results)
    for name in ("lru_hit_ratio", "arrivals", "fig6_mds_0"):
        assert f'alt="{name}"' in page
    assert page.count("<img ") == 3
    assert "LRU hit ratio against cache size." in page and "reproduces vFRM Fig. 6" in page
    assert "arrivals over time" in page  # the title as caption
    assert "Table-1-style statistics." in page and "reproduces vFRM Table 1" in page
    assert "reproduces Fig. 6</span> <span class=\"inferred\">(inferred from the name)" in page
    assert page.index('alt="lru_hit_ratio"') < page.index('alt="arrivals"')  # the order they were saved in
    assert "5 more rows in the CSV." in page
    assert 'href="notebooks/00_quickstart.ipynb"' in page
    assert page.index('id="nb-00_quickstart"') < page.index('id="nb-99_legacy"') < page.index('id="ledger"')
    ledger = report.build(results)
    assert page.count('<tr data-paper="') == len(ledger) == len(registry())
    assert f'id="claim-{CLAIM}"' in page and ">holds<" in page


def test_site_is_self_contained_and_deterministic(results):
    page = site.build(results)
    assert not re.search(r'(src|href)="(https?:)?//', page), "the page must fetch nothing from a network"
    assert "<script src" not in page and 'rel="stylesheet"' not in page
    assert all(src.startswith("data:image/png;base64,") for src in re.findall(r'<img src="([^"]+)"', page))
    assert site.write(results).read_bytes() == site.write(results).read_bytes()


def test_executed_notebooks_are_rendered_to_html_pages_the_site_links(results):
    # a browser shows the linked .ipynb as raw JSON: the site links a rendered page instead
    page = site.build(results)
    assert f'href="{site.NOTEBOOKS_HTML}/00_quickstart.html">executed notebook</a>' in page
    site.write(results)
    html_page = results / site.NOTEBOOKS_HTML / "00_quickstart.html"
    text = html_page.read_text()
    source = json.loads((results / "notebooks" / "00_quickstart.ipynb").read_text())
    first_code = next("".join(c["source"]) for c in source["cells"] if c["cell_type"] == "code")
    assert first_code.splitlines()[1].split("=")[0].strip() in text  # a parameter of the first code cell
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


def test_report_stage_writes_the_site(results, capsys):
    assert report.main(["--results", str(results)]) == 0
    assert (results / "index.html").is_file() and (results / "REPORT.md").is_file()
    assert "results site ->" in capsys.readouterr().out


def test_cli_report_writes_the_site_too(results, capsys):
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


def test_site_in_headless_chromium(results, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    page = site.write(results)
    planted = tmp_path / "planted.html"  # the checks can fail: a missing image and a script error
    planted.write_text('<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head><body>'
                       '<img src="missing.png" alt="gone"><script>no_such_function();</script></body></html>')
    driver = chromium()
    try:
        errors, broken = problems(driver, planted)
        assert broken == ["gone"] and any("no_such_function" in e for e in errors), (errors, broken)

        errors, broken = problems(driver, page)
        assert errors == [], errors
        assert broken == []
        assert len(driver.find_elements(By.CSS_SELECTOR, "img")) == 3

        rows = driver.find_elements(By.CSS_SELECTOR, "#ledger tbody tr")
        count = driver.find_element(By.ID, "ledger-count")
        assert count.text == f"{len(rows)} of {len(rows)} rows"
        Select(driver.find_element(By.NAME, "verdict")).select_by_value("holds")
        shown = [r for r in rows if r.is_displayed()]
        assert [r.get_attribute("id") for r in shown] == [f"claim-{CLAIM}"]
        assert count.text == f"1 of {len(rows)} rows"
        Select(driver.find_element(By.NAME, "verdict")).select_by_value("")
        Select(driver.find_element(By.NAME, "category")).select_by_value("holds")  # the diagnosis filter
        assert [r.get_attribute("id") for r in rows if r.is_displayed()] == [f"claim-{CLAIM}"]
        Select(driver.find_element(By.NAME, "category")).select_by_value("")
        paper = registry()[CLAIM].paper
        Select(driver.find_element(By.NAME, "paper")).select_by_value(paper)
        shown = [r for r in rows if r.is_displayed()]
        assert shown and all(r.get_attribute("data-paper") == paper for r in shown)
        assert len(shown) == sum(c.paper == paper for c in registry().values())

        link = driver.find_element(By.LINK_TEXT, "executed notebook")
        assert link.get_attribute("href").endswith(f"{site.NOTEBOOKS_HTML}/00_quickstart.html")
        errors, broken = problems(driver, results / site.NOTEBOOKS_HTML / "00_quickstart.html")
        assert errors == [] and broken == [], (errors, broken)
        assert "quickstart" in driver.page_source.lower()
        driver.get(page.as_uri())

        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(1280, min(height, 6000))
        shot = tmp_path / "site.png"
        driver.save_screenshot(str(shot))
    finally:
        driver.quit()
    pixels = plt.imread(shot)
    assert pixels.shape[0] > 800 and pixels.std() > 0.05, "the screenshot shows a page, not a blank"
