"""The notebooks where the student is: a real JupyterLab, driven in headless Chromium.

One ``jupyter lab`` server for the session, started by the fixture on a free
port, token-less, with ``--ServerApp.root_dir`` at a copy of ``notebooks/``
and of one exercise set in a temporary folder (the checkout is never
touched). It is started as the README tells a student, plain ``jupyter lab``
with no ``--config`` (``python -m jupyterlab``, what ``jupyter lab`` runs): the kit's save hook
(:mod:`lanes.display.savehook`) must come from the install itself (``requirements.txt`` installs the kit editable, and
``setup.py`` makes that install write the server setting too). Kernels import
``lanes`` from this checkout (``PYTHONPATH``). The page exposes the JupyterLab application
(``--LabApp.expose_app_in_browser``), so the tests open, run and save
notebooks with JupyterLab's own commands, as the menus do.

- Every chapter opened without running anything reads like its book page: no
  raw MyST role, directive or ``{{placeholder}}`` in its rendered markdown, no
  visible output under any prediction's reveal cell, the setup cell collapsed.
- Opening and saving an unrun chapter and an exercise set leaves the file's
  bytes unchanged (the ``git diff`` a student would see).
- A chapter run top to bottom, a slider moved, saved, the kernel restarted and
  the notebook reopened shows each explorer's text fallback, never "Error
  displaying widget: model not found"; the saved file holds no widget view and
  no progress line, its reveals are still folded, and it differs from the
  committed file only in outputs and execution counts (the ``git diff`` a
  student would see is their own run).

Playwright's own browser download does not work here: this drives Debian's
Chromium at ``/usr/bin/chromium`` (or ``$LANES_CHROMIUM``), as
``tests/site/test_site.py`` does; the tests fail, never skip, when it is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
#: The exercise set opened and saved (any set would do: they are made alike).
EXERCISE_SET = "03_headroom"
#: The chapter run top to bottom: a short one with an explorer and a slider.
RUN_CHAPTER = "07_batching.ipynb"
CHROMIUM = Path(os.environ.get("LANES_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"
MODEL_NOT_FOUND = "model not found"
FALLBACK_PREFIX = "Interactive explorer:"
START_TIMEOUT_S = 180  # a failure detector: a loaded machine starts slowly
RUN_TIMEOUT_MS = 240_000

# --------------------------------------------------------------------------
# The server and the browser
# --------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def lab_root(tmp_path_factory) -> Path:
    """A copy of the chapters and of one exercise set: what the server serves and writes."""
    root = tmp_path_factory.mktemp("lab") / "course"
    shutil.copytree(ROOT / "notebooks", root / "notebooks")
    shutil.copytree(ROOT / "exercises" / EXERCISE_SET, root / "exercises" / EXERCISE_SET)
    return root


@pytest.fixture(scope="session")
def lab_url(lab_root: Path, tmp_path_factory):
    """``jupyter lab`` on a free port for the session; yields its base URL."""
    state = tmp_path_factory.mktemp("lab-state")
    settings = state / "settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    # Every cell in the page (no windowing), so each cell can be inspected.
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    port = _free_port()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["JUPYTER_CONFIG_DIR"] = str(state / "config")
    env["JUPYTER_RUNTIME_DIR"] = str(state / "runtime")
    env["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    env.pop("PYTEST_CURRENT_TEST", None)
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
        f"--port={port}", "--ServerApp.ip=127.0.0.1", "--IdentityProvider.token=",
        "--ServerApp.password=", f"--ServerApp.root_dir={lab_root}",
        f"--LabApp.user_settings_dir={state / 'settings'}",
        f"--LabApp.workspaces_dir={state / 'workspaces'}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    log = (state / "server.log").open("w")
    proc = subprocess.Popen(command, cwd=lab_root, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        try:
            with urllib.request.urlopen(url + "api/status", timeout=2):
                break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"jupyter lab did not start: {(state / 'server.log').read_text()[-2000:]}",
                            pytrace=False)
            time.sleep(0.1)
    try:
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="session")
def lab(lab_url: str):
    """One Chromium page with JupyterLab loaded, for the session."""
    if not CHROMIUM.exists():
        pytest.fail(f"Chromium is missing at {CHROMIUM}: apt-get install -y chromium", pytrace=False)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        page.set_default_timeout(60_000)
        _load_lab(page, lab_url)
        yield page
        browser.close()


def _load_lab(page, url: str) -> None:
    """Load JupyterLab in ``page`` and wait until it started."""
    page.goto(url + "lab", wait_until="load")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.started", timeout=60_000)
    page.evaluate("() => window.jupyterapp.restored")


# Runs in the page: open a notebook (its kernel starts as JupyterLab starts
# it), wait until every markdown cell is rendered, and describe every cell.
_OPEN_JS = """
async ({path, waitKernel, kernelId}) => {
  const app = window.jupyterapp;
  const args = {path, factory: 'Notebook'};
  if (kernelId) { args.kernel = {id: kernelId}; }
  const w = await app.commands.execute('docmanager:open', args);
  await w.context.ready;
  await w.revealed;
  app.shell.activateById(w.id);
  const nb = w.content;
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  const rendered = c => {
    const r = c.node.querySelector('.jp-RenderedMarkdown');
    return r && r.textContent.trim() ? r.textContent : null;
  };
  for (let i = 0; i < 1200; i++) {  // (up to 120 s: a loaded machine renders slowly)
    const md = nb.widgets.filter(c => c.model.type === 'markdown');
    if (nb.widgets.length && md.every(rendered)) break;  // (a notebook may have no markdown)
    await sleep(100);
  }
  if (waitKernel) {
    await w.sessionContext.ready;
    for (let i = 0; i < 300; i++) {
      const k = w.sessionContext.session && w.sessionContext.session.kernel;
      if (k && k.status === 'idle' && w.model.getMetadata('language_info')) break;
      await sleep(100);
    }
  }
  const visible = el => !!el && el.checkVisibility({visibilityProperty: true, opacityProperty: true})
                       && el.getBoundingClientRect().height > 0;
  const cells = nb.widgets.map(c => {
    const out = c.node.querySelector('.jp-Cell-outputArea');
    const input = c.node.querySelector('.jp-Cell-inputArea');
    return {
      type: c.model.type,
      tags: c.model.getMetadata('tags') || [],
      markdown: c.model.type === 'markdown' ? rendered(c) : null,
      outputVisible: c.model.type === 'code' && visible(out) && (out.textContent || '').trim() !== '',
      inputVisible: visible(input),
      visibleText: c.node.innerText,
    };
  });
  return cells;
}
"""

_CLOSE_JS = """
async (shutdown) => {
  const app = window.jupyterapp;
  const w = app.shell.currentWidget;
  if (shutdown && w && w.sessionContext) { await w.sessionContext.shutdown(); }
  if (w) { w.dispose(); }
}
"""

_KERNEL_ID_JS = """
async () => {
  const w = window.jupyterapp.shell.currentWidget;
  await w.sessionContext.ready;
  return w.sessionContext.session.kernel.id;
}
"""

_SAVE_JS = """
async () => {
  const app = window.jupyterapp;
  await app.commands.execute('docmanager:save');
}
"""


def _open(page, path: str, wait_kernel: bool = False, kernel_id: str | None = None) -> list[dict]:
    """Open ``path`` in JupyterLab (connected to the running kernel ``kernel_id`` if given)."""
    return page.evaluate(_OPEN_JS, {"path": path, "waitKernel": wait_kernel, "kernelId": kernel_id})


def _close(page, shutdown: bool = True) -> None:
    page.evaluate(_CLOSE_JS, shutdown)


def _fail_listing(what: str, problems: list[str]) -> None:
    if problems:
        listing = "\n".join(f"  - {p}" for p in problems)
        pytest.fail(f"{len(problems)} {what}:\n{listing}", pytrace=False)


# --------------------------------------------------------------------------
# Opened, not run: reads like the book
# --------------------------------------------------------------------------

RAW_MYST = [
    # Rendered, a role's backticks become a code element: "{glue:text}name" is left.
    ("a MyST role", r"\{[a-z][a-z-]*(?::[a-z-]+)?\}(?=\S)"),
    ("a {{placeholder}}", r"\{\{"),
    ("a MyST directive", r"```\{|:::"),
]


@pytest.fixture(scope="session")
def opened(lab) -> dict[str, list[dict]]:
    """Every chapter opened once without running a cell: its cells as JupyterLab shows them.

    One kernel for them all (starting one per chapter is most of the time), and one page
    of the browser (each more page loads JupyterLab again: seconds of CPU for no check).
    """
    first, *rest = [f"notebooks/{p.name}" for p in CHAPTERS]
    seen = {first: _open(lab, first)}
    kernel_id = lab.evaluate(_KERNEL_ID_JS)
    _close(lab, shutdown=False)
    for path in rest:
        seen[path] = _open(lab, path, kernel_id=kernel_id)
        _close(lab, shutdown=False)
    lab.evaluate("(id) => window.jupyterapp.serviceManager.kernels.shutdown(id)", kernel_id)
    return {Path(path).name: cells for path, cells in sorted(seen.items())}


def test_every_chapter_opens(opened):
    assert sorted(opened) == [p.name for p in CHAPTERS]
    empty = [name for name, cells in opened.items() if not any(c["markdown"] for c in cells)]
    assert not empty, f"no rendered markdown in {empty}"


def test_rendered_markdown_has_no_raw_myst(opened):
    import re

    problems = []
    for name, cells in opened.items():
        for i, cell in enumerate(cells):
            if cell["type"] != "markdown":
                continue
            if cell["markdown"] is None:
                problems.append(f"{name} cell {i}: markdown not rendered")
                continue
            for what, pattern in RAW_MYST:
                m = re.search(pattern, cell["markdown"])
                if m:
                    text = cell["markdown"]
                    problems.append(f"{name} cell {i}: {what}: ...{text[max(0, m.start() - 40):m.end() + 40]!r}")
    _fail_listing("rendered markdown cells show raw MyST", problems)


def test_no_reveal_shows_its_output_before_it_runs(opened):
    """The code cell after each ``predict`` cell keeps its committed output collapsed."""
    problems = []
    checked = 0
    for name, cells in opened.items():
        codes = [c for c in cells if c["type"] == "code"]
        for i, cell in enumerate(codes[:-1]):
            if "predict" in cell["tags"]:
                checked += 1
                reveal = codes[i + 1]
                if reveal["outputVisible"]:
                    shown = reveal["visibleText"].strip().splitlines()
                    problems.append(f"{name}: the reveal after predict cell {i} shows {shown[-1][:100]!r}")
    assert checked >= len(CHAPTERS), f"only {checked} predict cells found"
    _fail_listing("reveals are visible before the student runs them", problems)


def test_setup_cell_is_collapsed(opened):
    problems = []
    for name, cells in opened.items():
        setup = [c for c in cells if c["type"] == "code" and "setup" in c["tags"]]
        if len(setup) != 1:
            problems.append(f"{name}: {len(setup)} setup cells")
        elif setup[0]["inputVisible"]:
            problems.append(f"{name}: the setup cell's code is shown")
    _fail_listing("chapters show their setup code", problems)


# --------------------------------------------------------------------------
# Open and save: the file does not change
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rel", [f"notebooks/{CHAPTERS[0].name}", f"exercises/{EXERCISE_SET}/set_{EXERCISE_SET}.ipynb"]
)
def test_open_and_save_leaves_the_file_unchanged(lab, lab_root, rel):
    before = (ROOT / rel).read_bytes()
    assert (lab_root / rel).read_bytes() == before
    _open(lab, rel, wait_kernel=True)
    lab.evaluate(_SAVE_JS)
    after = (lab_root / rel).read_bytes()
    _close(lab)
    if after != before:
        import difflib

        diff = difflib.unified_diff(before.decode().splitlines(), after.decode().splitlines(),
                                    "committed", "saved by JupyterLab", lineterm="", n=1)
        pytest.fail(f"{rel} changes when opened and saved:\n" + "\n".join(list(diff)[:40]), pytrace=False)


# --------------------------------------------------------------------------
# Run, move a slider, save, restart, reopen
# --------------------------------------------------------------------------

_RUN_JS = """
async () => {
  const app = window.jupyterapp;
  const w = app.shell.currentWidget;
  await app.commands.execute('notebook:run-all-cells');
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  const codes = () => w.content.widgets.filter(c => c.model.type === 'code');
  for (let i = 0; i < 2400; i++) {
    const k = w.sessionContext.session.kernel;
    const done = codes().every(c => c.model.executionCount !== null && c.model.executionState !== 'running');
    if (done && k.status === 'idle') break;
    await sleep(100);
  }
  return codes().map(c => ({
    count: c.model.executionCount,
    errors: c.model.outputs.toJSON().filter(o => o.output_type === 'error').map(o => o.ename + ': ' + o.evalue),
  }));
}
"""

_WAIT_IDLE_JS = """
async () => {
  const w = window.jupyterapp.shell.currentWidget;
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  await sleep(300);
  for (let i = 0; i < 600; i++) {
    const k = w.sessionContext.session && w.sessionContext.session.kernel;
    if (k && k.status === 'idle') break;
    await sleep(100);
  }
}
"""

# Runs in the page: wait until every widget view among the outputs (the saved file should
# hold none) shows what it will show: the widget, or JupyterLab's "Error displaying widget".
_WIDGETS_SHOWN_JS = """
async () => {
  const w = window.jupyterapp.shell.currentWidget;
  const mime = 'application/vnd.jupyter.widget-view+json';
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  const waiting = () => w.content.widgets.filter(c => c.model.type === 'code').some(c => {
    const nodes = c.node.querySelectorAll('.jp-OutputArea-output');
    return c.model.outputs.toJSON().some((o, k) => o.data && o.data[mime] && !(nodes[k] && (
      nodes[k].querySelector('.jupyter-widgets') || nodes[k].textContent.trim())));
  });
  for (let i = 0; i < 300 && waiting(); i++) { await sleep(100); }
}
"""

_RESTART_JS = """
async () => {
  const w = window.jupyterapp.shell.currentWidget;
  await w.sessionContext.session.kernel.restart();
}
"""

_SCRATCH = {
    "cells": [
        {"cell_type": "code", "execution_count": None, "id": "progress", "metadata": {}, "outputs": [],
         "source": "import time\nfrom lanes.display.progress import track\n\n"
                   "for _ in track(range(12), \"demo loop\", delay_s=0, every_s=0.05):\n    time.sleep(0.1)"},
        {"cell_type": "code", "execution_count": None, "id": "explorer", "metadata": {}, "outputs": [],
         "source": "from lanes.display.lane import widgets\n\nwidgets.lane_explorer()"},
    ],
    "metadata": {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}},
    "nbformat": 4, "nbformat_minor": 5,
}


def _changed_apart_from_outputs(committed: Path, saved: Path) -> list[str]:
    """What a save changed in a notebook besides outputs and execution counts."""
    def shape(path: Path) -> dict:
        nb = json.loads(path.read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            cell.pop("outputs", None)
            cell.pop("execution_count", None)
        return nb

    a, b = shape(committed), shape(saved)
    found = [f"notebook metadata {a['metadata']} -> {b['metadata']}"] if a["metadata"] != b["metadata"] else []
    if len(a["cells"]) != len(b["cells"]):
        return found + [f"{len(a['cells'])} cells -> {len(b['cells'])}"]
    found += [f"cell {i}: {x} -> {y}" for i, (x, y) in enumerate(zip(a["cells"], b["cells"])) if x != y]
    return found


def _saved_widget_views(path: Path) -> list[str]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    found = ["metadata.widgets"] if "widgets" in nb.get("metadata", {}) else []
    for i, cell in enumerate(nb["cells"]):
        for out in cell.get("outputs", []):
            if WIDGET_VIEW_MIME in out.get("data", {}):
                found.append(f"cell {i}: a widget view")
    return found


def _installed_setting() -> list[str]:
    """The kit's server settings a plain ``jupyter lab`` of this environment reads."""
    from jupyter_core.paths import jupyter_config_path

    found = []
    for folder in jupyter_config_path():
        path = Path(folder) / "jupyter_server_config.d" / "lanes.json"
        if path.is_file() and json.loads(path.read_text()).get("ServerApp", {}).get(
                "jpserver_extensions", {}).get("lanes.display.savehook"):
            found.append(str(path))
    return found


def test_explorers_survive_save_restart_and_reopen(lab, lab_url, lab_root):
    if not _installed_setting():
        pytest.fail("this environment's install of the kit enables no save hook "
                    "(etc/jupyter/jupyter_server_config.d/lanes.json): run "
                    "`python -m pip install -r requirements.txt`", pytrace=False)
    rel = f"notebooks/{RUN_CHAPTER}"
    scratch = lab_root / "scratch.ipynb"
    scratch.write_text(json.dumps(_SCRATCH), encoding="utf-8")
    problems = []

    for target in (rel, "scratch.ipynb"):
        _open(lab, target, wait_kernel=True)
        ran = lab.evaluate(_RUN_JS, None)
        errors = [e for c in ran for e in c["errors"]]
        assert not errors, f"{target} raised when run in JupyterLab: {errors}"
        assert all(c["count"] for c in ran), f"{target}: not every cell ran"
        slider = lab.locator(".jp-NotebookPanel:visible .widget-slider").first
        before = slider.locator(".widget-readout").inner_text()
        handle = slider.locator(".noUi-handle").first
        handle.focus()
        handle.press("ArrowRight")
        handle.press("ArrowRight")
        lab.evaluate(_WAIT_IDLE_JS)
        after = slider.locator(".widget-readout").inner_text()
        assert after != before, f"{target}: the slider did not move ({before} -> {after})"
        lab.evaluate(_SAVE_JS)
        problems += [f"{target} saved with {v}" for v in _saved_widget_views(lab_root / target)]
        if target == rel:  # run and saved: only the outputs may differ (reveals folded, as committed)
            problems += [f"{target} saved with {d[:300]}"
                         for d in _changed_apart_from_outputs(ROOT / rel, lab_root / target)]
        lab.evaluate(_RESTART_JS)
        lab.evaluate(_WAIT_IDLE_JS)

    saved = json.loads(scratch.read_text(encoding="utf-8"))
    progress_out = saved["cells"][0]["outputs"]
    if progress_out:
        problems.append(f"the progress line was saved: {progress_out}")

    # Reopen: a new page, the notebooks read again from disk, kernels restarted.
    _load_lab(lab, lab_url)
    for target in (rel, "scratch.ipynb"):
        cells = _open(lab, target, wait_kernel=True)
        lab.evaluate(_WIDGETS_SHOWN_JS)
        text = lab.locator(".jp-NotebookPanel:visible").inner_text()
        if MODEL_NOT_FOUND in text:
            problems.append(f"{target} shows 'Error displaying widget: {MODEL_NOT_FOUND}' after reopening")
        if FALLBACK_PREFIX not in text:
            problems.append(f"{target}: no explorer fallback text after reopening")
        assert cells
        shown = [i for i, c in enumerate(cells) if "hide-output" in c["tags"] and c["outputVisible"]]
        if shown:
            problems.append(f"{target}: reveal cells {shown} show their answers after reopening")
        _close(lab)
    _fail_listing("explorers did not survive a save, restart and reopen", problems)
