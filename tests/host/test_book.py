#!/usr/bin/env python3
"""The tutorial's website, checked in a real browser: builds it with scripts/book.sh,
serves build/book/ on 127.0.0.1 (a free port) and drives headless Chromium through every
page. On each page: nothing is logged to the console as an error (SEVERE), every image
is displayed (naturalWidth > 0), every table has the rows its Markdown has, every code
block of the Markdown is there and a code excerpt is highlighted, and no Markdown is
left unrendered (a "](", a "|---", a "<!--", or a line starting a list inside a
paragraph). Across the pages: every link within the site leads to a page or file that
exists and every #anchor to an element id on that page; the previous/next links at the
foot of the pages walk the chapters in the README's reading order, then the reference;
the search box, given a stage's name ("tagged"), lists chapter 14. Screenshots of the
front page, chapter 03 and chapter 14 are saved in BUILD_DIR/book-screenshots/.

It needs Chromium, its driver and Selenium (Debian: chromium, chromium-driver,
python3-selenium; .ci/run installs them) and fails, saying so, where they are missing:
a check that cannot run is not a pass. Selenium is taken from the python3 running this
script, else from Debian's /usr/bin/python3. Nothing is downloaded but what
scripts/book.sh installs (mkdocs-material, from PyPI).

usage: SOURCE_DIR=... [BUILD_DIR=...] python3 -m pytest tests/host/test_book.py
   or: test_book.py SOURCE_DIR [BUILD_DIR]     (BUILD_DIR: default SOURCE_DIR/build)
The site is built, served and visited once (the module's `site` fixture); each test
then checks one side of it.
"""
from __future__ import annotations

import base64
import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

import pytest

from conftest import run_as_script

SOURCE = Path(os.path.abspath(os.environ.get("SOURCE_DIR") or Path(__file__).resolve().parents[2]))
BUILD = Path(os.path.abspath(os.environ["BUILD_DIR"])) if os.environ.get("BUILD_DIR") else SOURCE / "build"
SITE = SOURCE / "build" / "book"
STAGED = SOURCE / "build" / "book-src"
SHOTS = BUILD / "book-screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
INSTALL = "sudo apt-get install chromium chromium-driver python3-selenium"



def import_selenium():
    """Selenium from the python3 running this, else from Debian's /usr/bin/python3 (its
    package folder put at the end of the path); None where neither has it."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        system = "/usr/bin/python3"
        if os.path.realpath(sys.executable) == os.path.realpath(system) or not os.path.exists(system):
            return None
        p = subprocess.run([system, "-c", "import os, selenium; print(os.path.dirname(os.path.dirname(selenium.__file__)))"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            return None
        sys.path.append(p.stdout.strip())
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    return webdriver, Service, By, Keys


SELENIUM = import_selenium()
webdriver, Service, By, Keys = SELENIUM or (None, None, None, None)


# ---- what the Markdown says each page holds -----------------------------------------

FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*(\w*)", re.M)


def markdown_facts(md: str) -> dict:
    """Code blocks (fenced, and indented ones outside lists; how many name a language)
    and each table's row count."""
    blocks, languages, tables = 0, 0, []
    fence = None
    rows = None
    previous, in_list, indented = "", False, False
    for line in md.split("\n") + [""]:
        m = FENCE.match(line)
        if fence is None and not m and line.strip():
            if re.match(r"\s*([-*+]|\d+\.)\s", line):
                in_list = True
            elif not line.startswith(" "):
                in_list = False
            starts = line.startswith("    ") and not previous.strip() and not in_list
            blocks += starts and not indented
            indented = line.startswith("    ") and (indented or starts)
        previous = line
        if fence is None and m:
            fence = m.group(1)
            blocks += 1
            languages += bool(m.group(2)) and m.group(2) != "text"
        elif fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not m.group(2):
                fence = None
        elif line.startswith("|"):
            if rows is None:
                rows = -1  # the header; the separator line follows
            elif re.fullmatch(r"\|(\s*:?-+:?\s*\|)+\s*", line):
                continue
            rows += 1
            continue
        if rows is not None:
            tables.append(rows)
            rows = None
    return {"blocks": blocks, "languages": languages, "tables": tables}


# ---- the site, built and served ------------------------------------------------------


def tools_missing():
    """Why the browser test cannot run here, or None."""
    if webdriver is None:
        return (f"the book test needs Selenium ({sys.executable} and /usr/bin/python3 have none); install it, with "
                f"Chromium and its driver, by '{INSTALL}' (CI's .ci/run does).")
    for tool, path in (("Chromium", CHROMIUM), ("chromedriver", DRIVER)):
        if not os.access(path, os.X_OK):
            return f"the book test needs {tool} ({path} is missing); install it by '{INSTALL}' (CI's .ci/run does)."
    return None


@pytest.fixture(scope="module")
def site():
    """The site built by scripts/book.sh, served and walked in headless Chromium: what
    each check found (`problems` per side of the site: pages, links, next, search,
    screenshots)."""
    missing = tools_missing()
    if missing:
        pytest.fail(missing, pytrace=False)
    problems = {"pages": [], "links": [], "next": [], "search": [], "screenshots": []}
    side = ["pages"]

    def expect(cond, what):
        if not cond:
            problems[side[0]].append(what)


    start = time.monotonic()
    build = subprocess.run(["bash", str(SOURCE / "scripts" / "book.sh")], capture_output=True, text=True)
    if build.returncode != 0:
        pytest.fail(build.stdout[-3000:] + build.stderr[-3000:] +
                    f"\nscripts/book.sh exited {build.returncode}: the site was not built (see above).", pytrace=False)
    print(f"site built in {time.monotonic() - start:.1f} s")


    # Material's search builds its index in the browser on every page load, which would take
    # most of the test's time over some 230 pages; so while the test walks the pages the
    # server answers the index with its settings and no documents (every page's script still
    # runs), and the search is tried afterwards with the real index.
    INDEX = SITE / "search" / "search_index.json"
    EMPTY_INDEX = json.dumps({**json.loads(INDEX.read_text(encoding="utf-8")), "docs": []}).encode()
    serve_empty_index = True


    class Quiet(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):
            if serve_empty_index and self.path.split("?")[0] == "/search/search_index.json":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(EMPTY_INDEX)))
                self.end_headers()
                self.wfile.write(EMPTY_INDEX)
            else:
                super().do_GET()

        def log_message(self, *args):
            pass


    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(SITE)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    BASE = f"http://127.0.0.1:{server.server_address[1]}/"

    pages = sorted(p.relative_to(SITE).as_posix() for p in SITE.rglob("*.html") if p.name != "404.html")
    expect(len(pages) > 30, f"the site has its pages: {len(pages)}")

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1000",
                "--disable-extensions", "--no-first-run"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
    driver.set_page_load_timeout(30)

    PAGE_FACTS = r"""
    const article = document.querySelector("article.md-content__inner") || document.body;
    const images = [...document.querySelectorAll("article img")].map(i => [i.getAttribute("src"), i.complete,
                                                                          i.naturalWidth]);
    const links = [...document.querySelectorAll("a[href]")].map(a => a.href);
    const ids = [...document.querySelectorAll("[id]")].map(e => e.id);
    const tables = [...article.querySelectorAll("table")].map(t => t.querySelectorAll("tbody tr").length);
    const blocks = [...article.querySelectorAll("pre > code")].length;
    const highlighted = [...article.querySelectorAll("div.highlight pre code")].filter(
        c => c.querySelector("span[class]")).length;
    const raw = [...article.querySelectorAll("p, li, td, th, h1, h2, h3, h4")].map(e => {
        const c = e.cloneNode(true);
        c.querySelectorAll("code, pre").forEach(x => x.remove());
        return c.textContent;
    }).filter(t => t.includes("](") || /\|\s*:?---/.test(t) || t.includes("<!--") || /\n\s*([-*+]|1\.) \S/.test(t));
    const next = document.querySelector("a.md-footer__link--next");
    return {images, links, ids, tables, blocks, highlighted, raw, title: document.title,
            next: next ? next.href : null, height: document.documentElement.scrollHeight};
    """

    facts = {}
    visit_start = time.monotonic()
    for page in pages:
        try:
            driver.get(BASE + page)
        except Exception as e:  # a page that does not load is a failure, and the next is tried
            expect(False, f"{page}: did not load ({e.__class__.__name__})")
            continue
        f = driver.execute_script(PAGE_FACTS)
        facts[page] = f
        errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        expect(errors == [], f"{page}: the console shows errors: {errors[:3]}")
        for src, complete, width in f["images"]:
            expect(complete and width > 0, f"{page}: image {src} is not displayed (naturalWidth {width})")
        expect(f["raw"] == [], f"{page}: Markdown left unrendered: {[t[:80] for t in f['raw'][:3]]}")
        md_name = page[:-len(".html")] + ".md"
        md_path = STAGED / md_name
        if not md_path.exists() and page.endswith("index.html"):
            md_path = STAGED / (page[:-len("index.html")] + "README.md")
        if md_path.exists():
            want = markdown_facts(md_path.read_text(encoding="utf-8"))
            expect(f["tables"] == want["tables"],
                  f"{page}: tables with {f['tables']} rows; its Markdown has tables of {want['tables']} rows")
            expect(f["blocks"] == want["blocks"], f"{page}: {f['blocks']} code blocks; its Markdown has {want['blocks']}")
            expect(f["highlighted"] >= min(1, want["languages"]),
                  f"{page}: its code names a language but none of its {f['blocks']} blocks is highlighted")
        else:
            expect(False, f"{page}: no staged Markdown ({md_name}) to compare it with")
        expect(all(t > 0 for t in f["tables"]), f"{page}: a table without rows: {f['tables']}")
    visit_time = time.monotonic() - visit_start
    print(f"{len(facts)} pages visited in {visit_time:.1f} s")

    # Every link within the site: a page or file that exists, and the anchor on it.
    side[0] = "links"
    bad = {}
    for page, f in facts.items():
        for href in f["links"]:
            if not href.startswith(BASE):
                continue
            url = urllib.parse.urlsplit(href)
            path = urllib.parse.unquote(url.path)[1:]
            if path == "" or path.endswith("/"):
                path += "index.html"
            if path.endswith(".html"):
                if path not in facts:
                    bad.setdefault(page, []).append(f"{href[len(BASE):]} (no such page)")
                elif url.fragment and urllib.parse.unquote(url.fragment) not in facts[path]["ids"]:
                    bad.setdefault(page, []).append(f"{href[len(BASE):]} (no element with that id)")
            elif not (SITE / path).is_file():
                bad.setdefault(page, []).append(f"{href[len(BASE):]} (no such file)")
    links = sum(1 for f in facts.values() for h in f["links"] if h.startswith(BASE))
    expect(links > 1000, f"the pages hold links within the site: {links}")
    for page, targets in sorted(bad.items()):
        expect(False, f"{page}: links that lead nowhere: {targets[:5]}" + (f" and {len(targets) - 5} more" if len(targets) > 5
                                                                   else ""))

    # The footer's next links walk the reading order (README's list of chapters), then the
    # reference.
    side[0] = "next"
    readme = (SOURCE / "README.md").read_text(encoding="utf-8")
    order = ["index.html"] + [c[:-3] + ".html" for c in dict.fromkeys(re.findall(
        r"^- \[[^\]]*\]\((chapters/[^)#]+\.md)\)", readme.split("## The chapters", 1)[1].split("\n## ", 1)[0], re.M))]
    order.append("REFERENCE.html")
    walk, page = [], "index.html"
    while page and page not in walk and page in facts:
        walk.append(page)
        nxt = facts[page]["next"]
        page = nxt[len(BASE):] if nxt else None
    expect(len(order) >= 26 and walk == order, f"the next links walk {walk}, not the reading order {order}")

    # The search, with the real index: a stage's name finds its chapter.
    side[0] = "search"
    serve_empty_index = False
    driver.get(BASE + "index.html")
    box = driver.find_element(By.CSS_SELECTOR, "input.md-search__input")
    box.click()
    box.send_keys("tagged")
    found = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not any("chapters/14_tagged_slots.html" in h for h in found):
        time.sleep(0.25)
        found = [a.get_attribute("href") for a in driver.find_elements(By.CSS_SELECTOR, ".md-search-result__list a")]
    expect(any("chapters/14_tagged_slots.html" in h for h in found),
          f"the search for 'tagged' lists chapter 14: {[h[len(BASE):] for h in found[:8]]}")
    box.send_keys(Keys.ESCAPE)
    errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    expect(errors == [], f"the search shows console errors: {errors[:3]}")

    # Screenshots, whole pages, for a reader of the test's results to look at.
    side[0] = "screenshots"
    SHOTS.mkdir(parents=True, exist_ok=True)
    for name, page in (("front_page", "index.html"), ("chapter_03", "chapters/03_divergence_and_addressing.html"),
                       ("chapter_14", "chapters/14_tagged_slots.html")):
        driver.get(BASE + page)
        size = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
        shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 16000), "scale": 1}})
        (SHOTS / f"{name}.png").write_bytes(base64.b64decode(shot["data"]))
        expect((SHOTS / f"{name}.png").stat().st_size > 10000, f"the screenshot of {page} was saved in {SHOTS}")
    driver.quit()
    server.shutdown()
    print(f"screenshots in {SHOTS}; {time.monotonic() - start:.1f} s in all")
    return problems


def test_pages(site):
    """Each page: loads, no console error, its images shown, no Markdown left, its tables
    and code blocks as its Markdown has them, some code highlighted."""
    assert not site["pages"], "\n".join(site["pages"])


def test_links(site):
    """Every link within the site leads to a page or file, and every anchor to an id."""
    assert not site["links"], "\n".join(site["links"])


def test_next_links_follow_the_reading_order(site):
    assert not site["next"], "\n".join(site["next"])


def test_search_finds_a_stage(site):
    assert not site["search"], "\n".join(site["search"])


def test_screenshots(site):
    assert not site["screenshots"], "\n".join(site["screenshots"])


if __name__ == "__main__":
    env = {"SOURCE_DIR": sys.argv[1]} if len(sys.argv) > 1 else {}
    if len(sys.argv) > 2:
        env["BUILD_DIR"] = sys.argv[2]
    sys.exit(run_as_script(__file__, env))
