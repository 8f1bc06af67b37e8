"""The live book: every explorer runs in the reader's browser, offline, with no server.

Two halves, one file:

* **Pages** (a Sphinx extension, loaded by ``_config.yml``): after each explorer's
  text fallback (``<p class="lanes-explorer-fallback">``, what the notebook saved) it
  adds a box with a button, the explorer's call and its controls
  (:mod:`lanes.display.explorers`), and loads ``_static/lanes-live/lanes-live.js``
  on that page only.  The call comes from the fallback's ``data-lanes-explorer``
  (written by the notebook's explorer); a notebook saved before explorers carried
  it names the explorer by its title, and the page makes it with its default arguments.
* **Assets** (``python book/_ext/lanes_live.py assets OUT``, run by ``scripts/build_book.sh``
  after the build; without npm and no cached package it says so and writes nothing, and the
  boxes tell the reader this copy has no Python): Pyodide from npm's ``pyodide`` package, fetched with ``npm pack`` into
  ``_build/cache`` and checked against the pinned sha512 (:data:`PYODIDE_INTEGRITY`), plus a
  wheel of this checkout, written to ``OUT`` (``_build/html/_static/lanes-live``) as
  scripts that hold each file's bytes in base64.  Scripts, not files to fetch: a page
  opened from disk (``file://``) may load scripts, but Chromium refuses its ``fetch``.

In the browser (``lanes-live.js``) Python runs in a Web Worker made from a Blob, its files
served to Pyodide from memory; nothing is requested from another host.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

#: npm's pyodide package: the version and the sha512 integrity npm's registry lists for it
#: (``npm view pyodide@314.0.8 dist.integrity``).
PYODIDE_VERSION = "314.0.8"
PYODIDE_INTEGRITY = "sha512-74Wq1kXOC+CCEzAfxuRAO701nAcCMLjf8NrwvWpu8S41dVMXwXmLQ05dYB+F4e46AdnGo0oq7YHSVUpHsoarLQ=="
#: The files of the package a page needs (the rest are the console, maps and typings).
PYODIDE_FILES = ("pyodide.js", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # the book's explorers are this checkout's, whatever lanes is installed
SCRIPT = "lanes-live/lanes-live.js"

_FALLBACK = re.compile(r'<p class="lanes-explorer-fallback"(?: data-lanes-explorer="(?P<call>[^"]*)")?><em>(?P<text>.*?)</em></p>', re.S)
_TITLE = re.compile(r"its controls \((?P<title>.*)\)\. The static figure", re.S)


def explorer_call(call: str | None, text: str) -> str:
    """The call of the explorer a fallback stands for: its own, or the one its title names."""
    if call:
        return html.unescape(call)
    from lanes.display import explorers

    m = _TITLE.search(html.unescape(text))
    titles = explorers.by_title()
    if m is None or m.group("title") not in titles:
        raise ValueError(f"an explorer fallback names no known explorer: {html.unescape(text)[:120]!r}")
    return explorers.EXPLORERS[titles[m.group("title")]]().call


def live_box(call: str) -> str:
    """The HTML the page gets after a fallback: a start button, the call and the controls."""
    from lanes.display import explorers

    described = json.dumps(explorers.from_call(call).describe(), separators=(",", ":"))
    return (
        f'<div class="lanes-live" data-lanes-explorer="{html.escape(call)}" data-lanes-controls="{html.escape(described)}">'
        '<button type="button" class="lanes-live-start">Run this explorer in the browser</button> '
        '<span class="lanes-live-note">Python starts on this page (about 14 MB, read from this copy of the book); '
        "nothing is sent anywhere.</span></div>"
    )


def add_live_boxes(body: str) -> tuple[str, int]:
    """``body`` with a live box after every explorer fallback, and how many there were."""
    count = 0

    def repl(m: re.Match) -> str:
        nonlocal count
        count += 1
        return m.group(0) + live_box(explorer_call(m.group("call"), m.group("text")))

    return _FALLBACK.sub(repl, body), count


def _page(app, pagename, templatename, context, doctree) -> None:
    body = context.get("body")
    if not body or "lanes-explorer-fallback" not in body:
        return
    context["body"], count = add_live_boxes(body)
    if count:
        app.add_js_file(SCRIPT, loading_method="defer")


# --- assets -------------------------------------------------------------------------------------


def sri_sha512(data: bytes) -> str:
    """``data``'s integrity string as npm writes it (``sha512-`` and the base64 digest)."""
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def pyodide_tarball(cache: pathlib.Path) -> pathlib.Path | None:
    """npm's pyodide package in ``cache``, fetched with ``npm pack`` when missing, checked against the pin.

    None when it is missing and there is no npm to fetch it.
    """
    tgz = cache / f"pyodide-{PYODIDE_VERSION}.tgz"
    if not tgz.is_file():
        npm = shutil.which("npm")
        if npm is None:
            return None
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run([npm, "pack", "--silent", f"pyodide@{PYODIDE_VERSION}", "--pack-destination", str(cache)],
                       check=True, stdout=subprocess.DEVNULL)
    got = sri_sha512(tgz.read_bytes())
    if got != PYODIDE_INTEGRITY:
        tgz.unlink()
        sys.exit(f"lanes_live: {tgz.name} has integrity {got}, not the pinned {PYODIDE_INTEGRITY}; removed it")
    return tgz


def checkout_wheel(tmp: pathlib.Path) -> pathlib.Path:
    """A wheel of this checkout (``pip wheel --no-deps``), in ``tmp``: built from a copy of the
    package's sources, so the build leaves nothing (``lanes.egg-info``, ``build/``) in the checkout,
    where pip would later take it for an installed ``lanes``."""
    src = tmp / "lanes-src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src)
    shutil.copytree(ROOT / "lanes", src / "lanes", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(tmp), str(src)],
                   check=True, stdout=subprocess.DEVNULL)
    (wheel,) = tmp.glob("lanes-*.whl")
    return wheel


def as_script(name: str, data: bytes) -> str:
    """A script that hands ``data`` to the page's loader: ``lanesLive.put(name, base64)``."""
    return f"lanesLive.put({json.dumps(name)},\"{base64.b64encode(data).decode()}\");\n"


def write_assets(out: pathlib.Path, cache: pathlib.Path) -> list[str]:
    """Write Pyodide's files and the checkout's wheel as scripts into ``out``; returns their names."""
    out.mkdir(parents=True, exist_ok=True)
    stamp = out / "pyodide.version"
    names = []
    if not (stamp.is_file() and stamp.read_text() == PYODIDE_INTEGRITY and all((out / f"{f}.js").is_file() for f in PYODIDE_FILES)):
        tgz = pyodide_tarball(cache)
        if tgz is None:
            return []
        with tarfile.open(tgz) as tar:
            for f in PYODIDE_FILES:
                (out / f"{f}.js").write_text(as_script(f, tar.extractfile(f"package/{f}").read()), encoding="ascii")
        stamp.write_text(PYODIDE_INTEGRITY)
    names += [f"{f}.js" for f in PYODIDE_FILES]
    with tempfile.TemporaryDirectory() as tmp:
        wheel = checkout_wheel(pathlib.Path(tmp))
        (out / "lanes.whl.js").write_text(as_script("lanes.whl", wheel.read_bytes()), encoding="ascii")
    names.append("lanes.whl.js")
    return names


def setup(app):
    app.connect("html-page-context", _page)
    return {"env_version": 1, "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "assets":
        print("usage: python book/_ext/lanes_live.py assets OUT_DIR", file=sys.stderr)
        sys.exit(2)
    out = pathlib.Path(sys.argv[2])
    written = write_assets(out, ROOT / "_build" / "cache")
    if not written:
        print(f"[live] npm is missing, so Pyodide {PYODIDE_VERSION} cannot be fetched: this build's explorers say so when pressed "
              "(install npm, Debian: apt-get install -y npm, and build again)")
        sys.exit(0)
    size = sum((out / n).stat().st_size for n in written)
    print(f"[live] Pyodide {PYODIDE_VERSION} and the lanes wheel in {out} ({len(written)} scripts, {size / 1e6:.1f} MB)")
