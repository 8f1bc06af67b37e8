"""Shared fixtures: the built web book, built once per session.

Both the browser test (test_site.py) and the exercises' leak scan
(test_exercises.py) read ``_build/html``; whichever runs first builds it.
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
HTML_DIR = ROOT / "_build" / "html"
BUILD_COMMAND = ["jupyter-book", "build", ".", "-W", "-n", "--keep-going"]


@pytest.fixture(scope="session")
def built_site() -> pathlib.Path:
    """Build the book with warnings as errors, or reuse it if told to."""
    if os.environ.get("LANES_BOOK_BUILT") == "1" and (HTML_DIR / "index.html").is_file():
        return HTML_DIR
    if shutil.which(BUILD_COMMAND[0]) is None:
        pytest.fail(
            "jupyter-book is not on PATH; install the requirements: "
            "python -m pip install -r requirements.txt",
            pytrace=False,
        )
    proc = subprocess.run(
        BUILD_COMMAND, cwd=ROOT, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        log = re.sub(r"\x1b\[[0-9;]*m", "", proc.stdout + "\n" + proc.stderr).splitlines()
        problems = [line for line in log if "WARNING" in line or "ERROR" in line]
        shown = "\n".join(problems[:40] or log[-40:])
        pytest.fail(
            f"`{' '.join(BUILD_COMMAND)}` failed with exit code {proc.returncode}:\n{shown}",
            pytrace=False,
        )
    assert (HTML_DIR / "index.html").is_file(), "the build wrote no _build/html/index.html"
    return HTML_DIR


# --- The graded class (tests/hostile/klass.py) ---------------------------------
# One class of honest and hostile notebooks, graded once per session (per worker
# under xdist) and read by test_grading_class, test_grading_robustness and
# test_exercises.


@pytest.fixture(scope="session")
def graded_class(tmp_path_factory):
    """The class of tests/hostile/klass.py, graded once as root through the box."""
    from hostile import klass

    why = klass.skip_reason()
    if why:
        pytest.skip(why)
    return klass.grade_class(tmp_path_factory.mktemp("graded-class"))
