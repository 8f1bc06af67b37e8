#!/usr/bin/env python
"""How fast the live book's explorers are in Chromium: Python ready, first figure, each move.

    python scripts/bench_live.py                      # every page with explorers, from disk
    python scripts/bench_live.py --http --moves 10    # over a local HTTP server, 10 moves a control
    python scripts/bench_live.py notebooks/03_headroom.html

Reads the built book (``scripts/build_book.sh`` first). For each page it opens a fresh tab in
headless Chromium (``$LANES_CHROMIUM``, default Debian's ``/usr/bin/chromium``), presses the first
explorer's button and prints, per explorer:

- ``ready``: from the press to Python ready in the worker (files loaded, Pyodide started, lanes
  unpacked and imported), seconds, once per page;
- ``first``: from the press (or, for later explorers of the page, from their own press) to the
  first figure drawn, seconds;
- ``move``: median and worst of the page-measured time from a control's move to its figure
  drawn, milliseconds, over ``--moves`` moves of every control (alternating between two values),
  and ``python``: the median time of the same runs inside the worker.
- ``cpython``: the median time of the same view in this CPython, milliseconds, and the ratio.

Goals (issue 43, at low load): first figure under 5 s, every move under 0.3 s. Times are
wall-clock on this machine and vary with its load: say when and where they were measured.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import pathlib
import statistics
import sys
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lanes.display import explorers  # noqa: E402

HTML = ROOT / "_build" / "html"
CHROMIUM = os.environ.get("LANES_CHROMIUM", "/usr/bin/chromium")

WAIT = """i => { const b = document.querySelectorAll('.lanes-live')[i]; const f = b.querySelector('.lanes-live-figure');
                 return b.dataset.lanesState === 'error' || (b.dataset.lanesState === 'ready' && f && b.lanesSeq
                        && f.dataset.lanesSeq === String(b.lanesSeq)); }"""

MOVE = """([i, name, kind, value]) => { const b = document.querySelectorAll('.lanes-live')[i];
            const el = b.querySelector('[data-name="' + name + '"]'); const t0 = performance.now();
            if (kind === 'toggle') { el.checked = value; el.dispatchEvent(new Event('change')); }
            else if (kind === 'choice') { el.value = String(value); el.dispatchEvent(new Event('change')); }
            else { el.value = String(value); el.dispatchEvent(new Event('input')); }
            return new Promise(resolve => { (function poll() {
              const f = b.querySelector('.lanes-live-figure');
              if (b.dataset.lanesState === 'ready' && f.dataset.lanesSeq === String(b.lanesSeq)) {
                resolve([performance.now() - t0, b.lanesLast.ms]); } else { requestAnimationFrame(poll); } })(); }); }"""


def two_values(c: explorers.Control) -> tuple:
    if c.kind == "toggle":
        return (not c.value, c.value)
    if c.kind == "choice":
        values = [v for _, v in c.options]
        other = values[(values.index(c.value) + 1) % len(values)]
        return (values.index(other), values.index(c.value))
    return (c.hi if c.value != c.hi else c.lo, c.value)


def cpython_ms(e: explorers.Explorer, c: explorers.Control, value, width: int, repeat: int) -> float:
    if c.kind == "choice":
        value = c.options[value][1]
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        explorers.render_json(e.call, json.dumps({**e.defaults(), c.name: value}), width)
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def bench_page(browser, url: str, moves: int) -> None:
    page = browser.new_page(viewport={"width": 1000, "height": 900})
    page.goto(url, wait_until="load")
    n = page.locator(".lanes-live").count()
    for i in range(n):
        box = page.locator(".lanes-live").nth(i)
        e = explorers.from_call(box.get_attribute("data-lanes-explorer"))
        t0 = time.perf_counter()
        box.locator(".lanes-live-start").click()
        page.wait_for_function(WAIT, arg=i, timeout=600_000, polling="raf")
        first = time.perf_counter() - t0
        ready = page.evaluate("() => window.lanesLive.timings.ready_ms") / 1e3
        width = page.evaluate("i => document.querySelectorAll('.lanes-live')[i].lanesLast.width", i)
        page_ms, py_ms, cp_ms = [], [], []
        for c in e.controls:
            vals = two_values(c)
            for k in range(moves):
                v = vals[k % 2]
                got = page.evaluate(MOVE, [i, c.name, c.kind, v])
                page_ms.append(got[0])
                py_ms.append(got[1])
            cp_ms.append(cpython_ms(e, c, vals[0], width, 3))
        med, worst, py, cp = statistics.median(page_ms), max(page_ms), statistics.median(py_ms), statistics.median(cp_ms)
        shown = f"{ready:5.2f} s" if i == 0 else " (same)"
        print(f"{e.name:16s} ready {shown}  first {first:5.2f} s  move median {med:6.0f} ms, worst {worst:6.0f} ms"
              f" (python {py:5.0f} ms; cpython {cp:5.0f} ms, x{py / cp if cp else float('nan'):.2f})  [{len(page_ms)} moves]", flush=True)
    page.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pages", nargs="*", help="pages relative to _build/html (default: every page with explorers)")
    ap.add_argument("--http", action="store_true", help="serve _build/html on a local port instead of opening files")
    ap.add_argument("--moves", type=int, default=4, help="moves per control (default 4)")
    args = ap.parse_args(argv)
    if args.moves < 1:
        print("bench_live.py: --moves must be at least 1", file=sys.stderr)
        return 2
    if not (HTML / "_static" / "lanes-live" / "pyodide.asm.wasm.js").is_file():
        print("bench_live.py: no live files in _build/html; run scripts/build_book.sh first", file=sys.stderr)
        return 2
    pages = args.pages or sorted(p.relative_to(HTML).as_posix() for p in HTML.rglob("*.html") if 'class="lanes-live"' in p.read_text())
    base = HTML.as_uri() + "/"
    if args.http:
        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, format, *args):  # noqa: A002 - signature is http.server's
                pass

        handler = functools.partial(Quiet, directory=str(HTML))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}/"
    from playwright.sync_api import sync_playwright

    print(f"bench_live: {'http' if args.http else 'file://'}, {args.moves} moves a control, load average {os.getloadavg()[0]:.1f}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        for p in pages:
            print(f"-- {p}")
            bench_page(browser, base + p, args.moves)
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
