#!/usr/bin/env bash
# Build the lanes web book into _build/html with warnings as errors.
#
#   scripts/build_book.sh          # incremental build (seconds when little changed)
#   scripts/build_book.sh --all    # rebuild every page from scratch
#
# 1. Vendors what the pages load, so the book works offline: MathJax 3 (SVG
#    output) goes to _vendor/mathjax, a static path in _config.yml, which
#    copies it to _build/html/_static/mathjax, where mathjax_path points.
#    The files are committed; they are fetched from the npm package only when
#    missing (npm is needed then, and only then).
# 2. Builds: `jupyter-book build . -W -n --keep-going` (the command CI and the
#    publishing workflow run). It executes no notebook: the pages show the
#    committed outputs (execute_notebooks: "off" in _config.yml), which strict
#    nbval checks against a fresh run (python -m pytest notebooks/). The
#    jupyter-book command is started by $PYTHON (default: python, or python3) without
#    jsonschema's IRI grammars (rfc3987_syntax: about 2.4 s of CPU at import,
#    for "iri" string formats that neither the book's config schema nor
#    nbformat's uses; scripts/grade.py does the same). tests/conftest.py builds
#    the book for the tests with this script. book/_ext/lanes_live.py adds a live
#    box after every explorer (step 3 writes the files it runs).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-$(command -v python || command -v python3 || echo python)}"

# jupyter-book, run by $PYTHON without jsonschema's IRI grammars (see above); the
# jupyter-book on PATH where $PYTHON has no jupyter_book.
jupyter-book() {
    if "$PYTHON" -c 'import importlib.util as u, sys; sys.exit(u.find_spec("jupyter_book") is None)' 2>/dev/null; then
        "$PYTHON" -c 'import sys; sys.modules.setdefault("rfc3987_syntax", None); from jupyter_book.cli.main import main; sys.exit(main())' "$@"
    else
        command jupyter-book "$@"
    fi
}

MATHJAX_VERSION=3.2.2
MATHJAX_DIR=_vendor/mathjax

extra=()
if [[ "${1:-}" == "--all" ]]; then
    extra+=(--all)
elif [[ $# -gt 0 ]]; then
    echo "usage: scripts/build_book.sh [--all]" >&2
    exit 2
fi

vendor_mathjax() {
    if [[ -f "$MATHJAX_DIR/tex-svg.js" && -d "$MATHJAX_DIR/input/tex/extensions" ]]; then
        return
    fi
    if ! command -v npm >/dev/null 2>&1; then
        echo "build_book.sh: $MATHJAX_DIR is missing and npm is not installed;" >&2
        echo "build_book.sh: install Node.js/npm (Debian: apt-get install -y npm) or restore $MATHJAX_DIR from git." >&2
        exit 1
    fi
    echo "[vendor] MathJax $MATHJAX_VERSION from the npm package into $MATHJAX_DIR"
    local tmp
    tmp="$(mktemp -d)"
    (cd "$tmp" && npm pack --silent "mathjax@$MATHJAX_VERSION" >/dev/null && tar xzf "mathjax-$MATHJAX_VERSION.tgz")
    mkdir -p "$MATHJAX_DIR/input/tex"
    cp "$tmp/package/es5/tex-svg.js" "$MATHJAX_DIR/"
    rm -rf "$MATHJAX_DIR/input/tex/extensions"
    cp -r "$tmp/package/es5/input/tex/extensions" "$MATHJAX_DIR/input/tex/"
    cp "$tmp/package/LICENSE" "$MATHJAX_DIR/LICENSE"
    rm -rf "$tmp"
}

vendor_mathjax

echo "[build] jupyter-book build . -W -n --keep-going ${extra[*]:-}"
# Progress: Sphinx's own "reading sources" lines.
# The full log goes to _build/build_book.log.
mkdir -p _build
set +e
jupyter-book build . -W -n --keep-going "${extra[@]}" 2>&1 | tee _build/build_book.log | while IFS= read -r line; do
    case "$line" in
        *"[IPKernelApp] WARNING"*) ;;
        *"Executing notebook"*|*"Executed notebook"*|*"reading sources"*|*"writing output"*|*WARNING*|*ERROR*|*Error*|*"build succeeded"*|*"build finished"*|*"Finished generating"*|*"Your book's HTML"*)
            echo "$line" ;;
    esac
done
status=${PIPESTATUS[0]}
set -e
if [[ $status -ne 0 ]]; then
    echo "build_book.sh: the build failed (exit $status); the end of _build/build_book.log:" >&2
    tail -n 40 _build/build_book.log >&2
    exit "$status"
fi

# 3. The live explorers' files (book/_ext/lanes_live.py): Pyodide from npm (pinned version
#    and sha512, cached in _build/cache; npm is needed the first time: installed through apt
#    when this runs as root, otherwise the book is built without them and says so) and a
#    wheel of this checkout, as scripts in _build/html/_static/lanes-live.
if ! command -v npm >/dev/null 2>&1 && ! compgen -G "_build/cache/pyodide-*.tgz" >/dev/null; then
    if [[ "$(id -u)" == "0" ]] && command -v apt-get >/dev/null 2>&1; then
        echo "[live] installing Debian's npm, to fetch Pyodide once ..."
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -q && apt-get install -y -q --no-install-recommends npm
    fi
fi
"$PYTHON" book/_ext/lanes_live.py assets _build/html/_static/lanes-live

echo
echo "The book is built. Open it in a browser:"
echo "  file://$(pwd)/_build/html/index.html"
