r"""The built web book, checked in a real browser.

A session fixture builds the book exactly as CI and readers do
(``scripts/build_book.sh``: ``jupyter-book build . -W -n --keep-going``), serves ``_build/html`` on a free
localhost port and opens every HTML page in headless Chromium through
Playwright. Each test then asserts one property over all pages and lists every
page that breaks it:

- every page loads (HTTP 200) with a non-empty title;
- every image has loaded and is drawn with a non-zero size;
- every internal link (same host) resolves to an existing file, and a link to
  an anchor on another page of the book finds that anchor;
- no request for the book's own assets fails. Other hosts (CDNs, launch
  services) do not resolve in the test's browser (``--host-resolver-rules``):
  their requests fail at once, so the test behaves the same offline and online.

A second crawl opens every page straight from disk (``file://``, as a reader
who downloaded ``_build/html`` would), records every request that is not for a
file (none may be made; other hosts do not resolve, as above), and checks that maths is typeset by the book's own MathJax: every maths element
holds MathJax output and no raw ``\(`` is left in the text. The built HTML is
also scanned: no page loads a script or stylesheet from another host.

``404.html`` is served by GitHub Pages for any missing address under
``/lanes/``, so its links are absolute from that prefix; it is checked on its
own (title, and every asset it names exists in the build) rather than crawled.

The offline crawl is on a 390 px phone screen: no page may scroll sideways, no
figure may be drawn wider than the screen, and no cell figure may be shrunk so far
that its 10-pt labels come out smaller than the page's code text. Every visit is
made once, in one Chromium, a few pages at a time (``CONCURRENT_PAGES`` tabs per
screen, each led from page to page: a new tab is a new renderer process), each
waiting for specific signals (load, MathJax's typesetting, fonts, images, its own
requests), never a fixed quiet time. No request is routed through Playwright (that
costs a round trip per request and turns the browser's cache off): listeners record them.

A screenshot of the first chapter is saved to ``artifacts/screenshots/``.

Playwright's own browser download does not work here, so the test drives
Debian's Chromium at ``/usr/bin/chromium`` (or ``$LANES_CHROMIUM``); when it
is missing the browser tests fail (they never skip) and say how to install it.

Set ``LANES_BOOK_BUILT=1`` to reuse an existing ``_build/html`` instead of
building again (for example right after ``scripts/build_book.sh``).
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import os
import pathlib
import re
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
HTML_DIR = ROOT / "_build" / "html"
SCREENSHOT_DIR = ROOT / "artifacts" / "screenshots"
SCREENSHOT_PAGE = "notebooks/01_slots_and_littles_law.html"


# Debian's chromium. LANES_CHROMIUM points elsewhere (another distribution's
# path, or a missing one to see the failure message).
CHROMIUM = pathlib.Path(os.environ.get("LANES_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Other hosts do not resolve: their requests fail at once, online or offline, and the
    # test does not depend on the network. (Routing every request through Playwright
    # instead costs a round trip per request and turns the browser's cache off.)
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]
INSTALL_HINT = (
    f"Chromium is missing at {CHROMIUM}. The browser test needs Debian's "
    "chromium package (Playwright's own browser download does not work here). "
    "Install it with: apt-get install -y chromium"
)

# Generated pages that are part of the site although not listed in _toc.yml.
GENERATED_PAGES = {"index.html", "genindex.html", "search.html", "404.html"}
#: Pages with absolute links for the web server, not crawled from the build.
SERVER_PAGES = {"404.html"}
#: The published address prefix (html.baseurl in _config.yml is this under github.io).
SITE_PREFIX = "/lanes/"
#: How long one step of a visit may take (a failure detector: a loaded machine is slow).
PAGE_TIMEOUT_MS = 120_000


# --------------------------------------------------------------------------
# Build and serve
# --------------------------------------------------------------------------


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - signature is http.server's
        pass


class _QuietServer(http.server.ThreadingHTTPServer):
    """Prints a handler's errors, but not a browser hanging up mid-file (a tab closed, a page left)."""

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)


@pytest.fixture(scope="session")
def site_url(built_site: pathlib.Path):
    """Serve the built site on 127.0.0.1 at a free port, for the session."""
    handler = functools.partial(_QuietHandler, directory=str(built_site))
    server = _QuietServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def html_pages(html_dir: pathlib.Path) -> list[str]:
    """Every HTML page of the book, relative to the site root (posix paths).

    Files under folders starting with an underscore (``_static``, ``_sources``,
    ``_images``) are assets, not pages.
    """
    pages = []
    for path in sorted(html_dir.rglob("*.html")):
        rel = path.relative_to(html_dir)
        if any(part.startswith("_") for part in rel.parts[:-1]):
            continue
        pages.append(rel.as_posix())
    return pages


def toc_pages() -> list[str]:
    """The pages _toc.yml promises, as HTML paths relative to the site root."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                files.append(entry["file"])
            walk(entry.get("sections"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return [pathlib.PurePosixPath(f).with_suffix(".html").as_posix() for f in files]


# --------------------------------------------------------------------------
# Crawl every page once in Chromium
# --------------------------------------------------------------------------


@dataclass
class PageReport:
    path: str
    status: int | None = None
    final_url: str = ""
    title: str = ""
    bad_images: list[str] = field(default_factory=list)
    image_count: int = 0
    links: list[str] = field(default_factory=list)
    ids: set[str] = field(default_factory=set)
    failed_requests: list[str] = field(default_factory=list)
    error: str = ""


# Runs in the page: make lazy images load, wait for every image to settle,
# then report those that failed or are drawn at zero size while visible.
_IMAGES_JS = """
async () => {
  const imgs = Array.from(document.images);
  for (const img of imgs) {
    if (img.loading === 'lazy') { img.loading = 'eager'; }
  }
  await Promise.all(imgs.map(img => img.complete ? null : new Promise(done => {
    img.addEventListener('load', done, {once: true});
    img.addEventListener('error', done, {once: true});
    setTimeout(done, 10000);
  })));
  return imgs.map(img => {
    const box = img.getBoundingClientRect();
    return {
      src: img.currentSrc || img.src || img.outerHTML.slice(0, 120),
      complete: img.complete,
      naturalWidth: img.naturalWidth,
      width: box.width,
      height: box.height,
      shown: img.checkVisibility({visibilityProperty: true}),
    };
  });
}
"""

_LINKS_JS = "() => Array.from(document.querySelectorAll('a[href]'), a => a.href)"
_IDS_JS = (
    "() => Array.from(document.querySelectorAll('[id], a[name]'),"
    " e => e.id || e.getAttribute('name'))"
)


def _fail_listing(what: str, problems: list[str]) -> None:
    if problems:
        listing = "\n".join(f"  - {p}" for p in problems)
        pytest.fail(f"{len(problems)} {what}:\n{listing}", pytrace=False)


# --------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------


class TestBuild:
    def test_every_toc_page_is_built(self, built_site):
        built = set(html_pages(built_site))
        missing = [p for p in toc_pages() if p not in built]
        _fail_listing("pages listed in _toc.yml are missing from _build/html", missing)

    def test_no_page_outside_the_toc(self, built_site):
        expected = set(toc_pages()) | GENERATED_PAGES
        extra = [p for p in html_pages(built_site) if p not in expected]
        _fail_listing("HTML pages were built that _toc.yml does not list", extra)

    def test_no_solution_file_in_the_site(self, built_site):
        """Nothing from solutions/ may reach the site, by path or as a copy.

        Student notebooks share their file name with their solution master, so
        names alone prove nothing; copies are found by content. Scanning pages
        for solution code and hidden tests is the exercise leak scan's job.
        """
        problems = []
        built_files = [p for p in built_site.rglob("*") if p.is_file()]
        for path in built_files:
            rel = path.relative_to(built_site)
            if "solutions" in rel.parts:
                problems.append(f"{rel.as_posix()} is under a solutions folder")
        solution_files = [
            p for p in (ROOT / "solutions").rglob("*")
            if p.is_file() and p.stat().st_size > 0 and "__pycache__" not in p.parts
        ]
        digests = {hashlib.sha256(p.read_bytes()).hexdigest(): p for p in solution_files}
        for path in built_files:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            if digest in digests:
                problems.append(
                    f"{path.relative_to(built_site).as_posix()} is a copy of "
                    f"{digests[digest].relative_to(ROOT).as_posix()}"
                )
        _fail_listing("solution files found in the built site", problems)


class TestInBrowser:
    def test_chromium_is_installed(self):
        if not CHROMIUM.exists():
            pytest.fail(INSTALL_HINT, pytrace=False)

    def test_every_page_was_opened(self, crawl, built_site):
        assert sorted(crawl) == [p for p in html_pages(built_site) if p not in SERVER_PAGES]
        assert len(crawl) >= len(toc_pages())

    def test_pages_load_with_a_title(self, crawl):
        problems = []
        for rel, r in crawl.items():
            if r.error:
                problems.append(f"{rel}: {r.error}")
            elif r.status != 200:
                problems.append(f"{rel}: HTTP {r.status}")
            elif not r.title:
                problems.append(f"{rel}: empty <title>")
        _fail_listing("pages did not load with a title", problems)

    def test_images_are_shown(self, crawl):
        problems = [f"{rel}: {bad}" for rel, r in crawl.items() for bad in r.bad_images]
        _fail_listing("images are broken", problems)

    def test_internal_links_resolve(self, crawl, site_url):
        host = urllib.parse.urlsplit(site_url).netloc
        # (a redirect stub's visit ends on the page it leads to: that page's own visit counts)
        ids_by_url = {urllib.parse.urldefrag(r.final_url)[0]: r.ids for r in crawl.values()
                      if urllib.parse.urldefrag(r.final_url)[0].endswith("/" + r.path)}
        targets: dict[str, set[str]] = {}
        for rel, r in crawl.items():
            for href in r.links:
                parts = urllib.parse.urlsplit(href)
                if parts.scheme not in ("http", "https") or parts.netloc != host:
                    continue
                targets.setdefault(href, set()).add(rel)

        problems = []
        status_cache: dict[str, int] = {}
        for href, sources in sorted(targets.items()):
            url, fragment = urllib.parse.urldefrag(href)
            if url not in status_cache:
                try:
                    with urllib.request.urlopen(url, timeout=10) as resp:
                        status_cache[url] = resp.status
                except urllib.error.HTTPError as err:
                    status_cache[url] = err.code
            where = ", ".join(sorted(sources))
            if status_cache[url] != 200:
                problems.append(f"{href} -> HTTP {status_cache[url]} (linked from {where})")
                continue
            # An anchor on a page of the book must exist on that page.
            if fragment and url in ids_by_url:
                anchor = urllib.parse.unquote(fragment)
                if anchor not in ids_by_url[url]:
                    problems.append(f"{href} -> no anchor #{anchor} (linked from {where})")
        _fail_listing("internal links are broken", problems)

    def test_no_own_request_fails(self, crawl):
        problems = [f"{rel}: {req}" for rel, r in crawl.items() for req in r.failed_requests]
        _fail_listing("requests for the book's own files failed", problems)

    def test_chapters_have_launch_buttons(self, crawl):
        """Each chapter links to itself on Binder (JupyterLab) and on Colab."""
        repo = "lanes-course/lanes"
        problems = []
        for rel, r in crawl.items():
            if not rel.startswith("notebooks/"):
                continue
            notebook = pathlib.PurePosixPath(rel).with_suffix(".ipynb").as_posix()
            binder = f"https://mybinder.org/v2/gh/{repo}/main?urlpath=lab/tree/{notebook}"
            colab = f"https://colab.research.google.com/github/{repo}/blob/main/{notebook}"
            for kind, url in (("Binder", binder), ("Colab", colab)):
                if url not in r.links:
                    problems.append(f"{rel}: no {kind} link {url}")
        _fail_listing("chapter launch links are missing", problems)

    def test_chapter_screenshot_saved(self, crawl):
        shot = SCREENSHOT_DIR / (pathlib.PurePosixPath(SCREENSHOT_PAGE).stem + ".png")
        assert SCREENSHOT_PAGE in crawl, f"{SCREENSHOT_PAGE} was not built"
        assert shot.is_file() and shot.stat().st_size > 10_000, f"no screenshot at {shot}"



PHONE = {"width": 390, "height": 844}

# Runs in the page: the figures drawn wider than the screen, even where their box scrolls.
_WIDE_FIGURES_JS = """
() => {
  const screen = document.documentElement.clientWidth;
  return Array.from(document.querySelectorAll('.bd-article img'))
    .filter(i => i.checkVisibility() && i.getBoundingClientRect().width > screen + 1)
    .map(i => `${i.src.split('/').pop().slice(0, 16)} drawn ${Math.round(i.getBoundingClientRect().width)} px wide`);
}
"""

# Runs in the page: how far the page scrolls sideways, and the elements that stick out.
_OVERFLOW_JS = """
() => {
  const root = document.documentElement;
  const limit = root.clientWidth + 1;
  const wide = Array.from(document.querySelectorAll('body *'))
    .filter(e => e.getBoundingClientRect().right > limit && e.checkVisibility())
    .filter(e => !Array.from(e.children).some(c => c.getBoundingClientRect().right > limit))
    .slice(0, 3)
    .map(e => `${e.tagName.toLowerCase()}.${String(e.className).split(' ')[0]} "${(e.textContent || '').trim().slice(0, 40)}"`);
  return {scroll: root.scrollWidth - root.clientWidth, wide};
}
"""


# --------------------------------------------------------------------------
# Offline: every page from file://, no network at all
# --------------------------------------------------------------------------


@dataclass
class OfflineReport:
    path: str
    maths: int = 0
    typeset: int = 0
    raw_tex: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    failed_files: list[str] = field(default_factory=list)
    error: str = ""
    #: How far the page scrolls sideways at PHONE width, px, and what sticks out (None: not measured).
    sideways: dict | None = None
    #: JavaScript errors: uncaught exceptions and console.error messages while the page loaded.
    js_errors: list[str] = field(default_factory=list)
    #: Figures drawn wider than the PHONE screen (even inside a box that scrolls), with their width.
    wide_figures: list[str] = field(default_factory=list)
    #: Cell figures whose labels are drawn smaller than the page's code text on the PHONE screen.
    small_labels: list[str] = field(default_factory=list)


# Runs in the page: wait for MathJax (when the page loads it) to finish, then
# count maths elements, those holding MathJax output, and raw TeX left in text.
_MATHS_JS = r"""
async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  const maths = Array.from(document.querySelectorAll('.math'));
  const typeset = maths.filter(m => m.querySelector('mjx-container svg'));
  const text = document.body.innerText;
  const raw = [];
  for (const token of ['\\(', '\\)', '\\[', '$$']) {
    const at = text.indexOf(token);
    if (at >= 0) { raw.push(text.slice(Math.max(0, at - 30), at + 30)); }
  }
  return {maths: maths.length, typeset: typeset.length, raw: raw};
}
"""


# --------------------------------------------------------------------------
# Every visit in one browser, several pages at a time
# --------------------------------------------------------------------------

#: Pages open at once in the one browser. A visit mostly waits (on the server, on
#: MathJax, on images), so a few at a time take a fraction of one after the other.
CONCURRENT_PAGES = 3

#: The px size of matplotlib's smallest default text (10 pt tick labels, axis labels and
#: legends) in a figure drawn at the inline backend's 100 dpi and shown at full size.
LABEL_PX = 10 * 100 / 72

# Runs in the page: the cell figures whose 10-pt labels are drawn more than a pixel smaller
# than the page's code text (its small print, 14 px), because the figure is shrunk to fit
# the column. (A 10-pt label at full size is 13.9 px; a panel of PANEL_WIDTH_IN whose tight
# bounding box came out a little wider than the 358 px column is shrunk by a few per cent:
# chapter 11's tall decode figure, 369 px, shows 13.5 px labels. The pixel allows that.)
_SMALL_LABELS_JS = """
(labelPx) => {
  const probe = document.createElement('pre');
  probe.textContent = 'x';
  (document.querySelector('.bd-article') || document.body).appendChild(probe);
  const small = parseFloat(getComputedStyle(probe).fontSize);
  probe.remove();
  return Array.from(document.querySelectorAll('.bd-article .cell_output img'))
    .filter(i => i.checkVisibility() && i.naturalWidth > 0)
    .map(i => [i, labelPx * i.getBoundingClientRect().width / i.naturalWidth])
    .filter(([i, px]) => px + 1 < small)
    .map(([i, px]) => `${i.src.split('/').pop().slice(0, 16)} (${i.naturalWidth} px drawn`
         + ` ${Math.round(i.getBoundingClientRect().width)}): labels ${px.toFixed(1)} px, code text ${small} px`);
}
"""

# Runs in the page: what the page is still waiting for before it is read (MathJax's
# typesetting, the web fonts): specific signals, not a fixed quiet time.
_SETTLED_JS = """
async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  await document.fonts.ready;
}
"""


@dataclass
class Visits:
    #: Every page over HTTP from the test server, on a desktop screen.
    http: dict[str, PageReport]
    #: Every page from file:// on a phone's screen, every other request recorded.
    offline: dict[str, OfflineReport]
    #: 404.html opened from file:// and from the test server's root: its stylesheets and links.
    not_found: dict[str, dict]


@pytest.fixture(scope="session")
def visits(site_url: str, built_site: pathlib.Path) -> Visits:
    """Every browser visit of this file, made once, in one headless Chromium."""
    if not CHROMIUM.exists():
        pytest.fail(INSTALL_HINT, pytrace=False)
    import asyncio

    return asyncio.run(_visit_all(site_url, built_site))


@pytest.fixture(scope="session")
def crawl(visits: Visits) -> dict[str, PageReport]:
    """Every page of the built book opened over HTTP in headless Chromium, once."""
    return visits.http


async def _visit_all(site_url: str, built_site: pathlib.Path) -> Visits:
    import asyncio

    from playwright.async_api import async_playwright

    pages = [p for p in html_pages(built_site) if p not in SERVER_PAGES]
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        desktop = await browser.new_context(viewport={"width": 1280, "height": 900})
        # A phone's screen: the pages are read offline the way a phone would show them, so the
        # same visit also measures sideways scrolling and the figures' size.
        phone = await browser.new_context(viewport=PHONE, device_scale_factor=1, is_mobile=True, has_touch=True)
        plain_phone = await browser.new_context(viewport=PHONE)
        jobs = [(_visit_http, desktop, site_url, rel) for rel in pages]
        jobs += [(_visit_offline, phone, built_site, rel) for rel in pages]
        jobs += [(_visit_not_found, plain_phone, url) for url in (
            (built_site / "404.html").resolve().as_uri(), site_url + "404.html")]
        done: dict = {}

        async def worker():
            # One tab per context, led from page to page (a new tab is a new renderer process).
            tabs: dict = {}
            while jobs:
                visit, context, *args = jobs.pop(0)
                if context not in tabs:
                    tabs[context] = await context.new_page()
                    tabs[context].set_default_timeout(PAGE_TIMEOUT_MS)
                done.setdefault(visit, []).append(await visit(tabs[context], *args))

        await asyncio.gather(*(worker() for _ in range(CONCURRENT_PAGES)))
        await browser.close()
    return Visits(http={r.path: r for r in done[_visit_http]},
                  offline={r.path: r for r in done[_visit_offline]},
                  not_found=dict(done[_visit_not_found]))


async def _requests_done(pending: set, timeout_s: float = PAGE_TIMEOUT_MS / 1000) -> None:
    """Wait until the page's own requests have all finished or failed (each one is recorded)."""
    import asyncio

    for _ in range(int(timeout_s / 0.05)):
        if not pending:
            return
        await asyncio.sleep(0.05)


def _listen(page, **handlers) -> dict:
    """Call each handler on its event of tab ``page`` (until ``_leave``)."""
    for event, handler in handlers.items():
        page.on(event, handler)
    return handlers


async def _leave(page, handlers: dict) -> None:
    """Lead tab ``page`` to a blank page (the visited page unloads while its events still
    count), then stop listening: the tab is ready for the next visit."""
    try:
        await page.goto("about:blank")
    finally:
        for event, handler in handlers.items():
            page.remove_listener(event, handler)


def _is_redirect_stub(rel: str) -> bool:
    """Whether page ``rel`` of the build is a redirect stub (index.html), read from its file."""
    source = (HTML_DIR / rel).read_text(encoding="utf-8", errors="replace")
    return re.search(r"http-equiv=[\"']refresh", source, re.I) is not None


async def _visit_http(page, site_url: str, rel: str) -> PageReport:
    """Open one page over HTTP in tab ``page``: status, title, images, links, anchors and failed requests."""
    host = urllib.parse.urlsplit(site_url).netloc
    report = PageReport(path=rel)
    pending: set = set()

    def own(url: str) -> bool:
        return urllib.parse.urlsplit(url).netloc == host

    def on_failed(request):
        pending.discard(request)
        if own(request.url):
            report.failed_requests.append(f"{request.url} ({request.failure})")

    def on_response(response):
        if own(response.url) and response.status >= 400:
            report.failed_requests.append(f"{response.url} (HTTP {response.status})")

    handlers = _listen(page, request=lambda r: pending.add(r), requestfinished=lambda r: pending.discard(r),
                       requestfailed=on_failed, response=on_response)
    try:
        response = await page.goto(site_url + rel, wait_until="load")
        report.status = response.status if response else None
        if _is_redirect_stub(rel):
            # A redirect stub (index.html): follow it to the real page.
            await page.wait_for_url(lambda url: not url.endswith("/" + rel))
            await page.wait_for_load_state("load")
        await page.evaluate(_SETTLED_JS)
        report.final_url = page.url
        report.title = (await page.title()).strip()
        images = await page.evaluate(_IMAGES_JS)
        report.image_count = len(images)
        for img in images:
            if not img["complete"] or img["naturalWidth"] == 0:
                report.bad_images.append(f"{img['src']} did not load")
            elif img["shown"] and (img["width"] == 0 or img["height"] == 0):
                report.bad_images.append(f"{img['src']} is drawn at {img['width']}x{img['height']} px")
        report.links = await page.evaluate(_LINKS_JS)
        report.ids = {i for i in await page.evaluate(_IDS_JS) if i}
        if rel == SCREENSHOT_PAGE:
            await page.screenshot(path=str(SCREENSHOT_DIR / (pathlib.Path(rel).stem + ".png")), full_page=True)
        await _requests_done(pending)
    except Exception as exc:  # noqa: BLE001 - reported per page by the tests
        report.error = f"{type(exc).__name__}: {exc}".splitlines()[0]
    finally:
        await _leave(page, handlers)
    return report


async def _visit_offline(page, built_site: pathlib.Path, rel: str) -> OfflineReport:
    """Open one page from file:// on the phone in tab ``page``: maths, requests, layout and JavaScript errors."""
    report = OfflineReport(path=rel)

    def on_request(request):
        if not request.url.startswith(("file:", "data:", "blob:", "about:")):
            report.blocked.append(f"{request.resource_type} {request.url}")

    def on_failed(request):
        # ERR_ABORTED: cut short by the next navigation (the redirect stub), not missing.
        if request.url.startswith("file:") and "ERR_ABORTED" not in (request.failure or ""):
            report.failed_files.append(f"{request.url} ({request.failure})")

    handlers = _listen(
        page, request=on_request, requestfailed=on_failed,
        console=lambda m: m.type == "error" and report.js_errors.append(f"console.error: {m.text[:200]}"),
        pageerror=lambda e: report.js_errors.append(f"uncaught: {str(e)[:200]}"))
    try:
        await page.goto((built_site / rel).resolve().as_uri(), wait_until="load")
        if _is_redirect_stub(rel):
            # A redirect stub (index.html): follow it to the real page.
            await page.wait_for_url(lambda url: not url.endswith("/" + rel))
            await page.wait_for_load_state("load")
        found = await page.evaluate(_MATHS_JS)
        report.maths, report.typeset, report.raw_tex = found["maths"], found["typeset"], found["raw"]
        if rel != "index.html":  # (the redirect stub: its page is measured as itself)
            report.sideways = await page.evaluate(_OVERFLOW_JS)  # after the maths is typeset
            report.wide_figures = await page.evaluate(_WIDE_FIGURES_JS)
            report.small_labels = await page.evaluate(_SMALL_LABELS_JS, LABEL_PX)
    except Exception as exc:  # noqa: BLE001 - reported per page by the tests
        report.error = f"{type(exc).__name__}: {exc}".splitlines()[0]
    finally:
        await _leave(page, handlers)
    return report


async def _visit_not_found(page, url: str) -> tuple[str, dict]:
    """Open 404.html at ``url`` in tab ``page``: the stylesheets it loaded and the links of its body."""
    try:
        await page.goto(url, wait_until="load")
        return url, {"sheets": await page.evaluate(_STYLESHEETS_JS), "links": await page.evaluate(_LINK_JS)}
    except Exception as exc:  # noqa: BLE001 - reported by the test
        return url, {"error": f"{type(exc).__name__}: {exc}".splitlines()[0]}
    finally:
        await page.goto("about:blank")


@pytest.fixture(scope="session")
def offline_crawl(visits) -> dict[str, OfflineReport]:
    """Every page of the book opened from file:// on a phone's screen, every other request recorded."""
    return visits.offline


class TestOffline:
    def test_every_page_opens_from_disk(self, offline_crawl, built_site):
        expected = [p for p in html_pages(built_site) if p not in SERVER_PAGES]
        assert sorted(offline_crawl) == expected
        problems = [f"{rel}: {r.error}" for rel, r in offline_crawl.items() if r.error]
        _fail_listing("pages did not open from file://", problems)

    def test_maths_is_typeset_without_a_network(self, offline_crawl):
        with_maths = [r for r in offline_crawl.values() if r.maths]
        assert with_maths, "no page of the book has maths: is the maths check looking at the right thing?"
        problems = []
        for rel, r in offline_crawl.items():
            if r.typeset < r.maths:
                problems.append(f"{rel}: {r.maths - r.typeset} of {r.maths} maths elements not typeset")
            for raw in r.raw_tex:
                problems.append(f"{rel}: raw TeX in the text: ...{raw!r}...")
        _fail_listing("pages show maths MathJax did not render offline", problems)

    def test_no_page_needs_the_network_for_a_script_style_or_font(self, offline_crawl):
        needed = {"script", "stylesheet", "font", "xhr", "fetch", "image"}
        problems = [
            f"{rel}: {req}" for rel, r in offline_crawl.items() for req in r.blocked
            if req.split(" ", 1)[0] in needed
        ]
        _fail_listing("requests to other hosts were made (and blocked)", problems)

    def test_no_file_the_pages_load_is_missing(self, offline_crawl):
        problems = [f"{rel}: {f}" for rel, r in offline_crawl.items() for f in r.failed_files]
        _fail_listing("files the pages load are missing from _build/html", problems)


_EXTERNAL = re.compile(
    r"""<(?:script|link)\b[^>]*\b(?:src|href)=["']((?:https?:)?//[^"']+)["'][^>]*>""", re.I
)


class TestBuiltHtml:
    def test_no_script_or_stylesheet_from_another_host(self, built_site):
        problems = []
        for path in sorted(built_site.rglob("*.html")):
            for tag in _EXTERNAL.finditer(path.read_text(encoding="utf-8", errors="replace")):
                if 'rel="canonical"' in tag.group(0) or "rel='canonical'" in tag.group(0):
                    continue  # the page's published address, not something it loads
                problems.append(f"{path.relative_to(built_site).as_posix()}: {tag.group(1)}")
        _fail_listing("pages load files from another host", problems)

    def test_mathjax_is_the_books_own_copy_loaded_once(self, built_site):
        mathjax = built_site / "_static" / "mathjax" / "tex-svg.js"
        assert mathjax.is_file() and mathjax.stat().st_size > 1_000_000, "MathJax is not in the build"
        problems = []
        loads_mathjax = 0
        for rel in html_pages(built_site):
            html = (built_site / rel).read_text(encoding="utf-8")
            tags = re.findall(r"<script[^>]*src=\"[^\"]*mathjax[^\"]*\"", html, re.I)
            loads_mathjax += bool(tags)
            if len(tags) > 1:
                problems.append(f"{rel}: {len(tags)} MathJax script tags")
            if "class=\"math" in html and not tags:
                problems.append(f"{rel}: has maths but loads no MathJax")
        assert loads_mathjax, "no page loads MathJax"
        _fail_listing("pages load MathJax wrongly", problems)

    def test_404_page(self, built_site):
        page = built_site / "404.html"
        assert page.is_file(), "no 404.html in the build"
        html = page.read_text(encoding="utf-8")
        assert "Page not found" in html
        assets = re.findall(r"(?:src|href)=\"(/[^\"#?]*)", html)
        assert assets, "404.html names no absolute asset"
        problems = []
        for url in sorted(set(assets)):
            if not url.startswith(SITE_PREFIX):
                problems.append(f"{url} is outside {SITE_PREFIX}")
            elif not (built_site / url[len(SITE_PREFIX):]).exists():
                problems.append(f"{url} is not in the build")
        _fail_listing("404.html links are wrong", problems)

    def test_explorers_show_their_fallback_in_the_book(self, built_site):
        for rel in html_pages(built_site):
            html = (built_site / rel).read_text(encoding="utf-8")
            assert "VBox(children=" not in html, f"{rel} shows a raw widget repr"
            assert "application/vnd.jupyter.widget-view+json" not in html, f"{rel} embeds a widget view"


# --------------------------------------------------------------------------
# On a phone (390 px), the 404 page anywhere, and alt text
# --------------------------------------------------------------------------



def test_no_page_scrolls_sideways_on_a_phone(offline_crawl, built_site):
    """At 390 px no page is wider than the screen: inline code wraps, wide things scroll in their box.

    Measured in the offline crawl, which opens every page on a phone-sized mobile screen.
    """
    measured = {rel: r.sideways for rel, r in offline_crawl.items() if r.sideways is not None}
    expected = [p for p in html_pages(built_site) if p not in SERVER_PAGES and p != "index.html"]
    assert sorted(measured) == expected
    problems = [f"{rel}: scrolls {found['scroll']} px sideways; widest: {found['wide']}"
                for rel, found in measured.items() if found["scroll"] > 1]
    _fail_listing("pages scroll sideways at 390 px", problems)


def test_no_figure_is_wider_than_a_phone(offline_crawl):
    """At 390 px every figure fits the screen: none is drawn wider and left to scroll in its box
    (a multi-panel figure is drawn as one small figure per panel, which stack on a phone)."""
    problems = [f"{rel}: {', '.join(r.wide_figures)}" for rel, r in offline_crawl.items() if r.wide_figures]
    _fail_listing("pages draw figures wider than a 390 px screen", problems)


#: Pages whose cell figures are still drawn shrunk on a phone, labels under the code text:
#: how many such figures each page has, and which cells draw them (one wide figure where a
#: figure of PANEL_WIDTH_IN, ``lanes.display.pool.plots.panels``, would be shown at full size).
#: The test fails when a page has more (a new small figure) and when it has fewer (then
#: lower the count here, or drop the entry).
SMALL_FIGURES_NOT_YET: dict[str, tuple[int, str]] = {}


def test_figure_labels_are_as_large_as_the_code_text_on_a_phone(offline_crawl):
    """At 390 px no cell figure is shrunk so far that its 10-pt labels come out smaller than
    the page's code text: a multi-panel figure is drawn per panel (``panels``)."""
    problems = []
    for rel, r in offline_crawl.items():
        allowed, where = SMALL_FIGURES_NOT_YET.get(rel, (0, ""))
        if len(r.small_labels) > allowed:
            problems += [f"{rel}: {f}" for f in r.small_labels]
        elif len(r.small_labels) < allowed:
            problems.append(f"{rel}: {len(r.small_labels)} small figures, SMALL_FIGURES_NOT_YET "
                            f"expects {allowed} ({where}): lower it")
    _fail_listing("figures are drawn with labels under the code text at 390 px", problems)


def test_no_glue_call_on_any_chapter_page(built_site):
    """The chapters' pages show no glue plumbing: the cells that record values for the prose are
    tagged ``remove-cell`` (tests/chapters/test_notebooks.py holds every glue call to them)."""
    pages = sorted((built_site / "notebooks").glob("[0-9][0-9]_*.html"))
    assert pages
    problems = [p.name for p in pages if '<span class="n">glue</span>' in p.read_text(encoding="utf-8")
                or "prose_glue" in p.read_text(encoding="utf-8")]
    _fail_listing("chapter pages show glue calls in their code", problems)


def test_no_javascript_error_on_any_page(offline_crawl):
    """No page throws or logs a JavaScript error (each page opened once, in the order of the crawl)."""
    problems = [f"{rel}: {e}" for rel, r in offline_crawl.items() for e in dict.fromkeys(r.js_errors)]
    _fail_listing("JavaScript errors", problems)


_STYLESHEETS_JS = """
() => Array.from(document.querySelectorAll('link[rel=stylesheet]'))
  .map(l => ({href: l.href, loaded: !!l.sheet}))
"""
_LINK_JS = "() => Array.from(document.querySelectorAll('.bd-article a[href]'), a => a.href)"


def test_404_page_works_from_file_and_from_another_base_path(visits, site_url):
    """Served at another root than /lanes/ (the test server's /) or opened over file://,
    404.html still loads its styles and its links lead to pages of the book."""
    assert len(visits.not_found) == 2, visits.not_found
    problems = []
    for url, seen in visits.not_found.items():
        if seen.get("error"):
            problems.append(f"{url}: {seen['error']}")
            continue
        if not seen["sheets"]:
            problems.append(f"{url}: no stylesheet")
        problems += [f"{url}: stylesheet {s['href']} did not load" for s in seen["sheets"] if not s["loaded"]]
        if not seen["links"]:
            problems.append(f"{url}: no link in the page body")
        for href in seen["links"]:
            if href.startswith("file:"):
                target = pathlib.Path(urllib.parse.unquote(urllib.parse.urlsplit(href).path))
                if not target.is_file():
                    problems.append(f"{url}: link {href} leads to no file")
            elif href.startswith(site_url):
                try:
                    with urllib.request.urlopen(urllib.parse.urldefrag(href)[0], timeout=10) as resp:
                        status = resp.status
                except urllib.error.HTTPError as err:
                    status = err.code
                if status != 200:
                    problems.append(f"{url}: link {href} -> HTTP {status}")
            else:
                problems.append(f"{url}: link {href} leaves the book")
    _fail_listing("404.html is broken outside /lanes/", problems)


def test_every_chapter_figure_has_alt_text_not_a_file_name(built_site):
    problems, figures = [], 0
    for rel in html_pages(built_site):
        if not rel.startswith("notebooks/"):
            continue
        html = (built_site / rel).read_text(encoding="utf-8")
        for tag in re.findall(r"<img\b[^>]*>", html):
            src = re.search(r'\bsrc="([^"]*)"', tag)
            if not src or "_images/" not in src.group(1):
                continue  # the theme's own images (launch-button logos), not a chapter figure
            figures += 1
            alt = re.search(r'\balt="([^"]*)"', tag)
            text = alt.group(1) if alt else ""
            if len(text.split()) < 5 or re.fullmatch(r"[0-9a-f]{16,}(\.\w+)?", text):
                problems.append(f"{rel}: <img alt={text!r}>")
    assert figures >= 20, f"only {figures} chapter figures found in the built book"
    _fail_listing("chapter figures lack alt text", problems)
