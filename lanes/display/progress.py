"""A progress line for long loops in a live notebook: plain text, updated in place, gone when done.

A widget progress bar (``tqdm.auto`` in JupyterLab) saves a widget view into
the notebook, which reads "Error displaying widget: model not found" once the
kernel is gone, and a text bar on a stream saves every frame it drew. This
line is one ``text/plain`` display updated in place through its display id
(``update_display_data``), throttled to a few updates a second, and emptied
when the loop ends, so the notebook saved after a run holds nothing of it.

IPython is imported inside :func:`track`; outside IPython it iterates silently.
:func:`lab_progress` is what a notebook hands a sweep (:mod:`lanes.pool.sweep`) as its
``progress``: the line in a live JupyterLab session, nothing under nbval, pytest or a script.
:func:`terminal_progress` is the same line for a command: on stderr, and only
when stderr is a terminal, so piped or captured output never holds it.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator, Sequence
from typing import Any, TextIO, TypeVar

from lanes import _checks

__all__ = ["lab_progress", "progress_enabled", "progress_text", "terminal_progress", "track"]

T = TypeVar("T")


def progress_text(desc: str, done: int, total: int, elapsed_s: float) -> str:
    """The line shown: ``"desc: 40/161 (25%), 3 s"``; ``elapsed_s`` in seconds.

    ``desc`` is a string, ``total`` an integer >= 0, ``done`` an integer in
    ``[0, total]`` and ``elapsed_s`` a number >= 0.
    """
    desc = _checks.text("desc", desc, empty=True)
    total = _checks.integer("total", total, lo=0)
    done = _checks.integer("done", done, lo=0, hi=total, hi_name="total")
    elapsed_s = _checks.number("elapsed_s", elapsed_s, lo=0)
    share = done / total if total else 1.0
    return f"{desc}: {done}/{total} ({share:.0%}), {elapsed_s:.0f} s"


def track(items: Sequence[T], desc: str, *, delay_s: float = 1.0, every_s: float = 0.25) -> Iterator[T]:
    """Yield ``items``, showing a progress line once the loop has run ``delay_s`` seconds.

    The line is updated at most every ``every_s`` seconds and replaced by an
    empty display when the loop finishes (or is interrupted).
    """
    try:
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython comes with every kernel
        yield from items
        return
    total = len(items)
    start = last = time.perf_counter()
    handle: Any = None
    try:
        for done, item in enumerate(items):
            now = time.perf_counter()
            if now - start >= delay_s and now - last >= every_s:
                bundle = {"text/plain": progress_text(desc, done, total, now - start)}
                if handle is None:
                    handle = display(bundle, raw=True, display_id=True)
                else:
                    handle.update(bundle, raw=True)
                last = now
            yield item
    finally:
        if handle is not None:
            handle.update({"text/plain": ""}, raw=True)




def progress_enabled(progress: bool | None = None) -> bool:
    """Whether a progress line is shown.

    Parameters
    ----------
    progress : bool or None
        ``True`` or ``False`` decide; ``None`` (default) asks the environment:
        ``LANES_PROGRESS`` if set (``1``/``0``), otherwise on only inside a
        live JupyterLab kernel (``JPY_SESSION_NAME`` set) that is not run by pytest.
    """
    if progress is not None:
        return bool(progress)
    forced = os.environ.get("LANES_PROGRESS")
    if forced is not None:
        return forced.strip().lower() in ("1", "true", "yes", "on")
    if "PYTEST_CURRENT_TEST" in os.environ:
        return False
    return bool(os.environ.get("JPY_SESSION_NAME"))


def lab_progress(items: Sequence[T], desc: str) -> Sequence[T] | Iterator[T]:
    """A sweep's ``progress``: :func:`track` over ``items`` when :func:`progress_enabled`, else ``items``.

    Executed notebooks (nbval, nbconvert) and scripts never store a progress line;
    ``LANES_PROGRESS=1`` or ``0`` forces it on or off.
    """
    items = _checks.sequence("items", items)
    desc = _checks.text("desc", desc, empty=True)
    return track(items, desc) if progress_enabled() and len(items) > 1 else items


class _TerminalLine:
    """``line(done, total)`` redraws one line on a terminal, at most every ``every_s`` seconds."""

    def __init__(self, desc: str, out: TextIO, delay_s: float, every_s: float) -> None:
        self.desc, self.out, self.delay_s, self.every_s = desc, out, delay_s, every_s
        self.start = time.perf_counter()
        self.last = -every_s
        self.shown = 0  # characters on the line now

    def __call__(self, done: int, total: int) -> None:
        now = time.perf_counter() - self.start
        if now >= self.delay_s and now - self.last >= self.every_s:
            text = progress_text(self.desc, done, total, now)
            self.out.write("\r" + text.ljust(self.shown))
            self.out.flush()
            self.shown, self.last = len(text), now

    def close(self) -> None:
        """Blank the line, if one was drawn."""
        if self.shown:
            self.out.write("\r" + " " * self.shown + "\r")
            self.out.flush()
            self.shown = 0


def terminal_progress(desc: str, *, out: TextIO | None = None, delay_s: float = 1.0, every_s: float = 0.25):
    """A ``progress(done, total)`` callback drawing a line on stderr, or None when stderr is no terminal.

    The line appears once ``delay_s`` seconds have passed, is redrawn at most
    every ``every_s`` seconds, and is blanked by the callback's ``close()``.
    """
    desc = _checks.text("desc", desc, empty=True)
    out = sys.stderr if out is None else out
    try:
        live = out.isatty()
    except (AttributeError, ValueError):
        live = False
    return _TerminalLine(desc, out, delay_s, every_s) if live else None
