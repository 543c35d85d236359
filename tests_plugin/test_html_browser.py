"""The HTML report in a real browser (headless Chromium through Selenium): recorded reports of the
CPU, the H200 and a homework run, and the machine matrix, each at 1280 px and 390 px. No console
errors, every claim section and plot mark rendered, nothing wider than the window, Korean drawn in
a CJK font. Screenshots go to test-artifacts/html/; with STACKCHECK_DOCS_SCREENSHOTS=1 the 1280 px
ones (and the 390 px CPU page) also replace docs/img/, which docs/report.md shows."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from stackcheck.claims.results import Report
from stackcheck.report import html, merge
from stackcheck.stacks.available import Missing

pytestmark = [pytest.mark.meta, pytest.mark.xdist_group("html-pages")]  # with test_html_report: pages drawn once

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts" / "html"
DOCS = ROOT / "docs" / "img"
INSTALL = "apt-get install chromium chromium-driver fonts-noto-cjk && pip install selenium"
WIDTHS = (1280, 390)
SHOWN = {"h200": "figure.plot[data-kind=counters]", "homework": "#homework"}  # what the screenshot shows
PLOTS = {  # the H200 page's plots docs/report.md shows (XPath), and what must be drawn on each
    "plot-timing": ("//*[@id='claim-s5-2-too-big']//figure[@data-kind='timing']", "[id^=judged-line-]"),
    "plot-verdict": ("//*[@id='claim-s5-2-too-big']//figure[@data-kind='verdict']", "[id^=judged-line-]"),
    "plot-counters": (
        "//*[@id='claim-mc04']//figure[@data-kind='counters']"
        "[contains(., 'instructions') and contains(., 'fp32-ieee')]",
        "[id^=mark-]",
    ),
}
REPORTS = {"cpu": "baselines/cpu.json", "h200": "baselines/h200.json", "homework": "fixtures/homework-report.json"}


@pytest.fixture(scope="module")
def browser(short_tmp):
    """Headless Chromium, its profile and temp files in a short folder (short_tmp's reason),
    removed afterwards: left to itself it leaves an org.chromium.Chromium.* folder in TMPDIR."""
    missing = [name for name in ("chromium", "chromedriver") if not shutil.which(name)]
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        missing.append("selenium")
    if missing:  # a skip, and a failure under --require chromium (CI's)
        raise Missing(f"needs {', '.join(missing)} ({INSTALL})", "chromium")
    options = Options()
    options.binary_location = shutil.which("chromium")
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    options.add_argument(f"--user-data-dir={short_tmp / 'profile'}")
    service = Service(shutil.which("chromedriver"), env={**os.environ, "TMPDIR": str(short_tmp)})
    driver = webdriver.Chrome(service=service, options=options)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def pages(tmp_path_factory, draw_page) -> dict[str, tuple[Path, dict | None]]:
    folder = tmp_path_factory.mktemp("pages")
    found = {}
    for name, path in REPORTS.items():
        report = json.loads((ROOT / path).read_text(encoding="utf-8"))
        target = folder / f"{name}.html"
        target.write_text(draw_page(ROOT / path), encoding="utf-8")
        found[name] = (target, report)
    found["matrix"] = (
        merge.write([str(ROOT / REPORTS["cpu"]), str(ROOT / REPORTS["h200"])], str(folder / "matrix.html"))[2],
        None,
    )
    failed = failed_report(found["cpu"][1])
    (folder / "failed.html").write_text(html.page(Report.from_json(failed)), encoding="utf-8")
    found["failed"] = (folder / "failed.html", failed)
    return found


def failed_report(cpu: dict) -> dict:
    """The CPU run with two verified claims made to fail, as a learner's broken forward would: each
    failing test with its message and where it was raised."""
    report = json.loads(json.dumps(cpu))
    for claim in [c for c in report["claims"] if c["status"] == "verified"][:2]:
        claim["status"] = "failed"
        test = next(t for t in claim["tests"] if t.get("counts", True))
        test |= {"outcome": "failed", "message": f"AssertionError: {claim['id']}: Y differs at [0, 1]"}
        test["location"] = test["nodeid"].partition("::")[0] + ":42"
    return report


def cjk_font() -> str | None:
    fc = shutil.which("fc-list")
    listed = subprocess.run([fc, ":lang=ko", "family"], capture_output=True, text=True).stdout if fc else ""
    return listed.splitlines()[0] if listed.strip() else None


def open_page(browser, path: Path, width: int) -> None:
    browser.set_window_size(width, 900)
    browser.get(path.as_uri())
    browser.get_log("browser")  # what loading the previous page logged


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", [*REPORTS, "matrix", "failed"])
def test_the_page_renders_in_chromium(browser, pages, name, width):
    path, report = pages[name]
    browser.set_window_size(width, 900)
    browser.get(path.as_uri())
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert not errors, errors
    inner = browser.execute_script("return window.innerWidth")
    wide = browser.execute_script("return document.documentElement.scrollWidth")
    assert wide <= inner + 1, f"{name} at {width} px is {wide} px wide: a reader must scroll sideways"
    if report is not None:
        shown = browser.execute_script(
            "return [...document.querySelectorAll('article.claim')]"
            ".filter(a => a.getBoundingClientRect().height > 0).length"
        )
        touched = [c for c in report["claims"] if c["tests"]]  # the claims the run selected; the rest are named
        assert shown == len(touched), f"{shown} of {len(touched)} claim sections rendered"
        figures = browser.execute_script(
            "return [...document.querySelectorAll('figure.plot svg')].map(s => "
            "[...s.querySelectorAll('[id^=mark-]')].filter(m => m.getBoundingClientRect().width > 0 || "
            "m.getBoundingClientRect().height > 0).length)"
        )
        assert all(n > 0 for n in figures), f"plots without a drawn mark: {figures}"
        if name == "h200":
            assert len(figures) >= 10, figures
            lines = browser.execute_script(  # every line a test judged by, drawn where it is shown
                "return [...document.querySelectorAll('[id^=judged-line-]')]"
                ".map(g => g.getBoundingClientRect().height > 0)"
            )
            assert lines and all(lines), f"{lines.count(False)} of {len(lines)} judged lines not drawn"
    if name in SHOWN:
        browser.execute_script(
            f"const e = document.querySelector('{SHOWN[name]}'); (e.closest('article') || e).scrollIntoView()"
        )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / f"{name}-{width}.png"
    browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000
    if os.environ.get("STACKCHECK_DOCS_SCREENSHOTS") == "1" and (width == 1280 or name == "cpu"):
        DOCS.mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, DOCS / shot.name)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_failed_run_answers_on_its_first_screen(browser, pages, width):
    """Issue 37: the verdict and the first failure, with where it was raised and its rerun line, are on
    the first screen (900 px tall) at 1280 and 390 px."""
    path, report = pages["failed"]
    open_page(browser, path, width)
    first = browser.execute_script(
        "const li = document.querySelector('#verdict li'); const r = li.getBoundingClientRect();"
        "return [r.top, r.bottom, li.textContent, window.innerHeight]"
    )
    top, bottom, text, height = first
    assert 0 <= top and bottom <= height, f"the first failure lies at {top:.0f}-{bottom:.0f} px of {height} px"
    failed = [c for c in report["claims"] if c["status"] == "failed"][0]
    assert failed["id"] in text and ":42" in text and "rerun:" in text, text


def test_plot_labels_are_at_least_9_px_on_a_phone(browser, pages):
    """Issue 37: tick labels were 6-7 px at 390 px. Each plot's text, as drawn, is 9 px or more."""
    path, _ = pages["h200"]
    open_page(browser, path, 390)
    sizes = browser.execute_script(
        "return [...document.querySelectorAll('figure.plot svg')].flatMap(svg => {"
        " const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;"
        " return [...svg.querySelectorAll('text')].map(t => scale * parseFloat(getComputedStyle(t).fontSize)); })"
    )
    assert sizes and min(sizes) >= 9, f"smallest plot text {min(sizes):.1f} px of {len(sizes)}"


def test_korean_is_drawn_in_a_cjk_font(browser, pages):
    if not cjk_font():
        raise Missing(f"no font covers Korean here (fc-list :lang=ko is empty): {INSTALL}", "chromium")
    path, _ = pages["cpu"]
    open_page(browser, path, 1280)
    drawn = browser.execute_script(
        "const p = document.querySelector('p.ko'); const r = p.getBoundingClientRect();"
        "return [p.textContent.length, r.width, r.height, getComputedStyle(p).fontFamily]"
    )
    assert drawn[0] > 0 and drawn[1] > 0 and drawn[2] > 0, drawn


@pytest.mark.parametrize("name", list(PLOTS))
def test_a_plot_draws_its_judgment_in_chromium(browser, pages, name):
    """Issue 37: on the H200 page, a judged ratio's timing plot and the plot of the numbers judged
    show their judged lines, drawn and visible; the counters plot its bars. The figure is saved
    (docs/img/plot-*.png with STACKCHECK_DOCS_SCREENSHOTS=1)."""
    path, _ = pages["h200"]
    open_page(browser, path, 1280)
    selector, drawn = PLOTS[name]
    figure = browser.find_element("xpath", selector)
    browser.execute_script("arguments[0].scrollIntoView()", figure)
    visible = browser.execute_script(
        f"return [...arguments[0].querySelectorAll('{drawn}')]"
        ".filter(g => g.getBoundingClientRect().height > 0).length",
        figure,
    )
    assert visible >= 1, (name, drawn)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / f"{name}.png"
    figure.screenshot(str(shot))
    assert shot.stat().st_size > 5_000
    if os.environ.get("STACKCHECK_DOCS_SCREENSHOTS") == "1":
        shutil.copy(shot, DOCS / shot.name)


def test_docs_show_a_screenshot_of_each_view():
    page = (ROOT / "docs" / "report.md").read_text(encoding="utf-8")
    for view in (*REPORTS, "matrix", "failed"):
        assert f"img/{view}-1280.png" in page and (DOCS / f"{view}-1280.png").is_file(), view
    assert "img/cpu-390.png" in page and (DOCS / "cpu-390.png").is_file()
    for plot in PLOTS:
        assert f"img/{plot}.png" in page and (DOCS / f"{plot}.png").is_file(), plot


OVERLAPS = """
const found = [];
const boxes = (svg, axis) => [...svg.querySelectorAll(`g[id^="${axis}tick_"] text`)]
    .map(t => t.getBoundingClientRect()).filter(r => r.width > 0 && r.height > 0);
const meet = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5
    && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
document.querySelectorAll('figure.plot svg').forEach((svg, i) => {
  for (const axis of ['x', 'y']) {
    const rects = boxes(svg, axis);
    for (let j = 0; j < rects.length; j++)
      for (let k = j + 1; k < rects.length; k++)
        if (meet(rects[j], rects[k])) found.push([i, svg.closest('figure').dataset.kind, axis, j, k]);
  }
});
return [document.querySelectorAll('figure.plot svg').length, found];
"""


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", ["cpu", "h200"])
def test_no_two_tick_labels_of_a_plot_overlap(browser, pages, name, width):
    """Issue 52 item 7: every plot's tick labels, as Chromium lays them out at 1280 and 390 px, stand
    apart on each axis (MC04's fp32 counters and the block sweep's shapes ran into each other)."""
    path, _ = pages[name]
    open_page(browser, path, width)
    figures, overlaps = browser.execute_script(OVERLAPS)
    assert figures > 0
    assert not overlaps, f"{len(overlaps)} overlapping tick label pairs (figure, kind, axis, i, j): {overlaps[:10]}"


@pytest.mark.parametrize("width", WIDTHS)
def test_a_homework_page_opens_with_the_score_and_the_first_thing_to_fix(browser, pages, width):
    """Issue 76 item 4: the graded page's first screen (900 px tall) holds the score and the first
    failing claim with its message and rerun line; each failing claim is said once on the page, and
    what is not attempted comes after what failed."""
    path, report = pages["homework"]
    open_page(browser, path, width)
    score, fix, height = browser.execute_script(
        "const s = document.querySelector('#homework .score').getBoundingClientRect();"
        "const f = document.querySelector('#homework .fix'); const r = f.getBoundingClientRect();"
        "return [s.bottom, [r.top, r.bottom, f.textContent], window.innerHeight]"
    )
    failed = [i for i in report["homework"]["claims"] if i["status"] == "failed"]
    assert 0 < score <= height, f"the score ends at {score:.0f} px of a {height} px first screen"
    top, bottom, text = fix
    assert top < height, f"the first thing to fix starts at {top:.0f} px, below the first screen"
    assert failed[0]["id"] in text and "rerun:" in text, text
    for item in failed:  # its fix in the score's section; no verdict list; its article links there
        said = browser.execute_script(
            "const [id, slug] = arguments; return [document.querySelectorAll('#fix-' + slug).length,"
            "[...document.querySelectorAll('#verdict li')].filter(li => li.textContent.includes(id)).length,"
            "document.querySelectorAll('#claim-' + slug + ' pre').length]",
            item["id"],
            html.slug(item["id"]),
        )
        assert said == [1, 0, 0], f"{item['id']}'s failure: [fixes, verdict entries, claim messages] = {said}"
    page = path.read_text(encoding="utf-8")
    untried = page.find("Not attempted yet")
    assert untried == -1 or untried > max(page.find(f'id="fix-{html.slug(i["id"])}"') for i in failed)
