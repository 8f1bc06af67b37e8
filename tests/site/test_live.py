"""The live book in a real browser: every explorer runs in the page, offline, and draws what CPython draws.

The book is built once per run (``built_site``: ``scripts/build_book.sh``, which writes Pyodide and
the checkout's wheel into ``_static/lanes-live``) and opened in Debian's Chromium through Playwright:

- from disk (``file://``, as a reader who downloaded ``_build/html``), on a 390 px phone screen, every
  page with explorers: each explorer's button starts Python, every control is moved once (sliders
  to an end, the next choice, the checkbox), and each time the figure and table must change and be
  exactly what :func:`lanes.display.explorers.render_json` gives in this CPython for the same call,
  values and width; no page may scroll sideways;
- over HTTP (a static host), one chapter at desktop width, the same checks, and three moves in a
  row: the newest supersedes the one waiting, so two runs draw it;
- a browser without WebAssembly gets a clear message and loads nothing.

Every visit fails on a request that leaves the page's origin (other hosts do not resolve either:
``--host-resolver-rules``), on an uncaught exception and on any ``console.error``.

Chromium is required, as for ``test_site.py`` (these tests fail, never skip, without it). They skip,
saying why, only when the build has no live files because npm is missing (``build_book.sh`` needs it
once, to fetch Pyodide).
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import pathlib
import shutil
import threading

import pytest

from lanes.display import explorers

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHROMIUM = pathlib.Path(os.environ.get("LANES_CHROMIUM", "/usr/bin/chromium"))
ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
#: A failure detector for one step (a start of Python or a run) on a loaded machine, not a speed target.
STEP_MS = 180_000
PHONE = {"width": 390, "height": 844}
HTTP_PAGE = "notebooks/03_headroom.html"
#: Tabs open at once in the phone visit.
TABS = 4


@pytest.fixture(scope="module")
def live_site(built_site: pathlib.Path) -> pathlib.Path:
    assets = built_site / "_static" / "lanes-live"
    if not (assets / "pyodide.asm.wasm.js").is_file():
        if shutil.which("npm") is None:
            pytest.skip("npm is missing, so scripts/build_book.sh left the live explorers out (Debian: apt-get install -y npm)")
        pytest.fail(f"the build wrote no live files into {assets} although npm is installed")
    return built_site


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - signature is http.server's
        pass

    def do_GET(self):
        if self.path == "/favicon.ico":  # the browser asks every host; the book has none
            self.send_response(204)
            self.end_headers()
            return
        super().do_GET()


@pytest.fixture(scope="module")
def site_url(live_site: pathlib.Path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(live_site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.is_file():
        pytest.fail(f"Chromium is missing at {CHROMIUM}; install Debian's chromium (apt-get install -y chromium)", pytrace=False)
    import asyncio

    from playwright.sync_api import sync_playwright

    # A test run earlier in this worker (a kernel client) may leave an event loop marked running in
    # this thread, where Playwright's sync API refuses to start: set it aside for this module.
    running = asyncio.events._get_running_loop()
    asyncio.events._set_running_loop(None)
    try:
        with sync_playwright() as pw:
            b = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
            yield b
            b.close()
    finally:
        asyncio.events._set_running_loop(running)


def live_pages(html: pathlib.Path) -> list[str]:
    return sorted(p.relative_to(html).as_posix() for p in html.rglob("*.html") if 'class="lanes-live"' in p.read_text(encoding="utf-8"))


class Visit:
    """One tab: records requests that leave the origin and JavaScript errors."""

    def __init__(self, browser, url: str, allowed: tuple[str, ...], viewport=None, init_script: str | None = None):
        self.context = browser.new_context(viewport=viewport or {"width": 1200, "height": 900})
        if init_script:
            self.context.add_init_script(init_script)
        self.foreign: list[str] = []
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.context.on("request", self._request)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(f"console.error: {m.text[:300]}"))
        self.page.on("pageerror", lambda e: self.errors.append(f"uncaught: {str(e)[:300]}"))
        self.allowed = allowed
        self.page.goto(url, wait_until="load")

    def _request(self, req) -> None:
        self.requests.append(req.url)
        if not req.url.startswith(self.allowed):
            self.foreign.append(req.url)

    def close(self) -> None:
        self.context.close()

    def boxes(self):
        return self.page.locator(".lanes-live")

    def wait_drawn(self, i: int) -> dict:
        """Wait until box ``i`` drew its newest setting; return what it drew."""
        self.page.wait_for_function(
            """i => { const b = document.querySelectorAll('.lanes-live')[i];
                      if (b.dataset.lanesState === 'error') return true;
                      const f = b.querySelector('.lanes-live-figure');
                      return b.dataset.lanesState === 'ready' && f && b.lanesSeq && f.dataset.lanesSeq === String(b.lanesSeq); }""",
            arg=i, timeout=STEP_MS,
        )
        state = self.page.evaluate("i => document.querySelectorAll('.lanes-live')[i].dataset.lanesState", i)
        status = self.page.evaluate("i => (document.querySelectorAll('.lanes-live')[i].querySelector('.lanes-live-status') || {}).textContent", i)
        assert state == "ready", f"explorer {i}: {status}"
        return self.page.evaluate("i => document.querySelectorAll('.lanes-live')[i].lanesLast", i)


def moved(c: explorers.Control):
    """The value a test moves ``c`` to: the slider's other end, the next choice, the box flipped."""
    if c.kind == "toggle":
        return not c.value
    if c.kind == "choice":
        values = [v for _, v in c.options]
        return values[(values.index(c.value) + 1) % len(values)]
    return c.hi if c.value != c.hi else c.lo


def move(visit: Visit, i: int, c: explorers.Control, value) -> None:
    """Move control ``c`` of box ``i`` as a reader does (fill a slider, pick an option, click a box)."""
    el = visit.boxes().nth(i).locator(f'[data-name="{c.name}"]')
    if c.kind == "toggle":
        el.click()
    elif c.kind == "choice":
        el.select_option(index=[v for _, v in c.options].index(value))
    else:
        el.fill(f"{value:g}" if isinstance(value, float) else str(value))


def same_as_cpython(drawn: dict) -> None:
    want = json.loads(explorers.render_json(drawn["call"], json.dumps(drawn["values"]), drawn["width"]))
    assert drawn["rows"] == want["rows"], f"{drawn['call'][:60]} at {drawn['values']}: the table differs from CPython's"
    assert drawn["svg"] == want["svg"], f"{drawn['call'][:60]} at {drawn['values']}: the figure differs from CPython's"


def exercise(visit: Visit, i: int, kinds: set | None = None) -> int:
    """Start box ``i``, check its first figure, then move its controls one by one, each checked
    against CPython; returns the moves made.  With ``kinds``, only the controls of a kind not in
    it yet (at least one), and their kinds are added: every kind of control is moved somewhere in
    the book, while tests/display/test_explorers.py moves every control of every explorer in
    CPython."""
    box = visit.boxes().nth(i)
    call = box.get_attribute("data-lanes-explorer")
    e = explorers.from_call(call)
    if box.locator(".lanes-live-start").count():
        box.locator(".lanes-live-start").click()
    drawn = visit.wait_drawn(i)
    assert drawn["values"] == e.defaults() and drawn["call"] == call
    same_as_cpython(drawn)
    values = e.defaults()
    chosen = list(e.controls) if kinds is None else [c for c in e.controls if c.kind not in kinds] or list(e.controls[:1])
    for c in chosen:
        if kinds is not None:
            kinds.add(c.kind)
        before = drawn
        values[c.name] = moved(c)
        move(visit, i, c, values[c.name])
        drawn = visit.wait_drawn(i)
        assert drawn["values"] == values, f"{e.name}: moving {c.name} drew {drawn['values']}"
        assert (drawn["svg"], drawn["rows"]) != (before["svg"], before["rows"]), f"{e.name}: moving {c.name} changed nothing"
        same_as_cpython(drawn)
    return len(chosen)


def test_the_pages_with_explorers_are_the_chapters_with_explorers(live_site):
    pages = live_pages(live_site)
    assert len(pages) >= 10 and all(p.startswith("notebooks/") for p in pages), pages
    boxes = sum((live_site / p).read_text(encoding="utf-8").count('class="lanes-live"') for p in pages)
    fallbacks = sum((live_site / p).read_text(encoding="utf-8").count('class="lanes-explorer-fallback"') for p in pages)
    assert boxes == fallbacks >= len(explorers.EXPLORERS)
    for page in sorted(set(p.relative_to(live_site).as_posix() for p in live_site.rglob("*.html")) - set(pages)):
        assert "lanes-live.js" not in (live_site / page).read_text(encoding="utf-8"), f"{page} loads Python but has no explorer"


def test_every_explorer_runs_from_disk_on_a_phone(live_site, browser):
    problems, kinds = [], set()
    pages = live_pages(live_site)
    # A few tabs at a time: each starts Python as soon as it is open (the starts run in the tabs'
    # workers, side by side), then its explorers are moved one by one.
    for start in range(0, len(pages), TABS):
        visits = []
        try:
            for page in pages[start:start + TABS]:
                visit = Visit(browser, (live_site / page).as_uri(), ("file:", "blob:null/"), viewport=PHONE)
                visits.append((page, visit))
                visit.boxes().nth(0).locator(".lanes-live-start").click()
            for page, visit in visits:
                for i in range(visit.boxes().count()):
                    exercise(visit, i, kinds)
                wide = visit.page.evaluate(
                    "() => [document.documentElement.scrollWidth, Math.max(0, ...[...document.querySelectorAll('.lanes-live-figure svg')]"
                    ".map(s => s.getBoundingClientRect().right))]"
                )
                if wide[0] > PHONE["width"] + 1 or wide[1] > PHONE["width"] + 1:
                    problems.append(f"{page}: wider than the phone's {PHONE['width']} px (page {wide[0]}, figure right edge {wide[1]:.0f})")
                problems += [f"{page}: request to {u}" for u in visit.foreign] + [f"{page}: {e}" for e in visit.errors]
        finally:
            for _, visit in visits:
                visit.close()
    assert not problems, "\n".join(problems)
    every_kind = {c.kind for make in explorers.EXPLORERS.values() for c in make().controls}
    assert kinds == every_kind, f"no explorer moved a control of kind {sorted(every_kind - kinds)}"


def test_an_explorer_runs_over_http_and_a_move_supersedes_the_one_waiting(site_url, browser):
    origin = site_url.rstrip("/")
    visit = Visit(browser, site_url + HTTP_PAGE, (origin + "/", f"blob:{origin}/"))
    try:
        moves = exercise(visit, 0)
        assert moves >= 3
        runs = visit.page.evaluate("() => window.lanesLive.runs")
        # Three moves at once: the first runs, the second waits and is replaced by the third.
        visit.page.evaluate("""() => { const b = document.querySelector('.lanes-live'), r = b.querySelector('[data-name="reserve"]');
                                        for (const v of [3, 5, 7]) { r.value = String(v); r.dispatchEvent(new Event('input')); } }""")
        drawn = visit.wait_drawn(0)
        assert drawn["values"]["reserve"] == 7
        same_as_cpython(drawn)
        assert visit.page.evaluate("() => window.lanesLive.runs") - runs == 2
        assert any(u.endswith("/_static/lanes-live/pyodide.asm.wasm.js") for u in visit.requests)
        assert not visit.foreign, visit.foreign
        assert not visit.errors, visit.errors
    finally:
        visit.close()


def test_without_webassembly_the_reader_is_told_and_nothing_loads(site_url, browser):
    visit = Visit(browser, site_url + HTTP_PAGE, (site_url.rstrip("/") + "/",), init_script="delete globalThis.WebAssembly;")
    try:
        visit.boxes().nth(0).locator(".lanes-live-start").click()
        status = visit.boxes().nth(0).locator(".lanes-live-status")
        assert "cannot run WebAssembly" in status.inner_text()
        assert visit.boxes().nth(0).get_attribute("data-lanes-state") == "error"
        assert not [u for u in visit.requests if "pyodide" in u]
        assert not visit.errors, visit.errors
    finally:
        visit.close()


# --- the page half of book/_ext/lanes_live.py, without a browser ------------------------------------


def _extension():
    import importlib.util

    spec = importlib.util.spec_from_file_location("lanes_live", ROOT / "book" / "_ext" / "lanes_live.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class TestPages:
    def fallback(self, explorer_box) -> str:
        return explorer_box._repr_mimebundle_()["text/html"]

    def test_a_saved_call_is_the_call_the_page_runs(self):
        from lanes.display.pool import widgets

        sc = lanes_scenario(hours=2)
        html_out = self.fallback(widgets.starvation_explorer(sc, deadline_s=3600))
        body, count = _extension().add_live_boxes(f"<div>{html_out}</div>")
        assert count == 1
        call = body.split('<div class="lanes-live" data-lanes-explorer="')[1].split('"')[0]
        import html as _html

        call = _html.unescape(call)
        assert call == explorers.starvation(sc, deadline_s=3600).call
        assert explorers.from_call(call).view().rows == explorers.starvation(sc, deadline_s=3600).view().rows

    def test_a_fallback_saved_without_its_call_is_found_by_its_title(self):
        text = ("<p class=\"lanes-explorer-fallback\"><em>Interactive explorer: run this cell in JupyterLab (or on Binder or Colab) "
                "to use its controls (Tenant cost: change tenant B&#x27;s requests and the output weight). The static figure and "
                "table beside it show the default settings.</em></p>")
        body, count = _extension().add_live_boxes(text)
        assert count == 1 and body.startswith(text)
        assert 'data-lanes-explorer="{&quot;args&quot;:[],&quot;explorer&quot;:&quot;tenant&quot;' in body

    def test_an_unknown_explorer_stops_the_build(self):
        text = '<p class="lanes-explorer-fallback"><em>Interactive explorer: ... its controls (No such thing). The static figure</em></p>'
        with pytest.raises(ValueError, match="names no known explorer"):
            _extension().add_live_boxes(text)

    def test_the_files_travel_as_scripts_of_their_bytes(self):
        import base64

        data = bytes(range(256)) * 3
        script = _extension().as_script("lanes.whl", data)
        assert script.startswith('lanesLive.put("lanes.whl","')
        assert base64.b64decode(script.split(',"')[1].split('"')[0]) == data

    def test_the_pin_is_a_sha512_integrity(self):
        ext = _extension()
        assert ext.sri_sha512(b"") == "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg=="
        assert ext.PYODIDE_INTEGRITY.startswith("sha512-") and len(ext.PYODIDE_INTEGRITY) == 95


def lanes_scenario(**kwargs):
    import lanes

    return lanes.Scenario(**kwargs)
