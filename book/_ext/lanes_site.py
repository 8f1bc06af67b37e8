"""Sphinx fixes for the lanes book, loaded by ``_config.yml`` (``sphinx.local_extensions``).

Jupyter Book 1 always loads sphinx-thebe, which adds its configuration script
(``const THEBE_JS_URL = ...``) once each time the sources are read: a full
build reads them twice, so every page declared the constant twice and logged
"Identifier 'THEBE_JS_URL' has already been declared".  The book launches no
Thebe (``launch_buttons.thebe: false``), so this drops sphinx-thebe's scripts
from every page.  ``tests/site/test_site.py`` fails on any JavaScript error.
"""

from __future__ import annotations


def _is_thebe(script) -> bool:
    name = str(getattr(script, "filename", script) or "")
    body = str(getattr(script, "attributes", {}).get("body", ""))
    return "sphinx-thebe" in name or "THEBE_JS_URL" in body


def _drop_thebe(app, pagename, templatename, context, doctree) -> None:
    if "script_files" in context:
        context["script_files"] = [s for s in context["script_files"] if not _is_thebe(s)]


def setup(app):
    app.connect("html-page-context", _drop_thebe, priority=900)
    # env_version: raised when what this extension does to a page changes, so a build over an
    # older _build reads every page again (2: code cells are no longer rewritten here).
    return {"env_version": 2, "parallel_read_safe": True, "parallel_write_safe": True}
