#!/usr/bin/env bash
# The project's test command (README.md "Run the tests"; .ci/run calls exactly this).
#
#   scripts/test.sh                 # everything: unit, CLI, grading, packaging,
#                                   # notebooks (strict nbval) and the browser test
#   scripts/test.sh tests/test_x.py # any pytest arguments pass through
#
# First it installs what the tests need when it is missing:
# - the Python requirements (requirements.txt) when one of them cannot be imported,
#   after upgrading pip when it is older than 23.1 (requirements.txt passes
#   --config-settings, which older pips refuse; a new venv of Debian's Python 3.11
#   starts with pip 23.0.1);
# - Debian's Chromium for the browser test: through apt when run as root,
#   otherwise it stops with one message naming the package to install;
# - Debian's bubblewrap (bwrap), the grading box, the same way;
# - Debian's npm (it fetches Pyodide for the live book), through apt as root, else a note.
# Then it runs `python -m pytest`, in parallel over the CPU cores (pytest-xdist,
# one worker per core plus one;
# LANES_TEST_WORKERS=0 runs it in one process, LANES_TEST_WORKERS=N in N), and
# exits with pytest's own status (5 means pytest collected no test: that is
# reported, never hidden).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python}"
CHROMIUM="${LANES_CHROMIUM:-/usr/bin/chromium}"
BWRAP="${LANES_BWRAP:-/usr/bin/bwrap}"

# (find_spec looks the modules up without importing them: importing these takes seconds;
# the current folder is left out, where `lanes` is found without being installed, but not
# by a kernel or a notebook started in another folder.)
if ! "$PYTHON" -c "import importlib.util as u, sys; sys.path = [p for p in sys.path if p]; sys.exit(any(u.find_spec(m) is None for m in sys.argv[1:]))" \
        pytest xdist nbval playwright otter jupyter_book notfound lanes 2>/dev/null; then
    echo "test.sh: installing the Python requirements (requirements.txt) ..."
    "$PYTHON" -m pip install -q --upgrade "pip>=23.1"
    "$PYTHON" -m pip install -q -r requirements.txt
fi

if [[ ! -x "$CHROMIUM" ]]; then
    if [[ "$(id -u)" == "0" ]] && command -v apt-get >/dev/null 2>&1; then
        echo "test.sh: installing Debian's chromium for the browser test ..."
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -q
        apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core
    else
        echo "test.sh: the browser test needs Chromium at $CHROMIUM." >&2
        echo "test.sh: install Debian's package 'chromium' (sudo apt-get install -y chromium)," >&2
        echo "test.sh: or point LANES_CHROMIUM at another Chromium binary, then run again." >&2
        exit 3
    fi
fi

# npm fetches Pyodide for the live book once (scripts/build_book.sh; tests/site/test_live.py
# skips, saying so, without it).
if ! command -v npm >/dev/null 2>&1; then
    if [[ "$(id -u)" == "0" ]] && command -v apt-get >/dev/null 2>&1; then
        echo "test.sh: installing Debian's npm for the live book ..."
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -q
        apt-get install -y -q --no-install-recommends npm
    else
        echo "test.sh: npm is missing: the live book's browser test will skip (sudo apt-get install -y npm)." >&2
    fi
fi

if [[ ! -x "$BWRAP" ]]; then
    if [[ "$(id -u)" == "0" ]] && command -v apt-get >/dev/null 2>&1; then
        echo "test.sh: installing Debian's bubblewrap for the grading box ..."
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -q
        apt-get install -y -q --no-install-recommends bubblewrap
    else
        echo "test.sh: the grading tests need bubblewrap at $BWRAP." >&2
        echo "test.sh: install Debian's package 'bubblewrap' (sudo apt-get install -y bubblewrap)," >&2
        echo "test.sh: or point LANES_BWRAP at another bwrap binary, then run again." >&2
        exit 3
    fi
fi

# --- Parallel run (pytest-xdist) ----------------------------------------------
# The tests run in LANES_TEST_WORKERS worker processes (default: one per CPU
# core plus one, since many tests wait on a browser, a server, a kernel or a
# grading box, and the extra worker runs while they wait; 0 runs them all in
# this one process, without xdist). --dist loadfile
# keeps each test file and each notebook on one worker: module and session
# fixtures (the built book, the graded class, the wheel) are made once, and
# nbval runs a notebook's cells in order in one kernel. tests/conftest.py puts
# the longest files first (--no-loadscope-reorder keeps that order), so the
# workers finish at about the same time.
cores="$("$PYTHON" -c "import os; print(len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count() or 1)")"
workers="${LANES_TEST_WORKERS:-$((cores + 1))}"
parallel=()
if [[ "$workers" != "0" ]]; then
    parallel=(-n "$workers" --dist loadfile --no-loadscope-reorder)
fi
# --- end of the parallel run block ----------------------------------------------

set +e
"$PYTHON" -m pytest "${parallel[@]}" "$@"
status=$?
set -e
if [[ $status -eq 5 ]]; then
    echo "test.sh: pytest collected no tests (exit status 5)." >&2
fi
exit $status
