#!/usr/bin/env bash
# Build the lanes web book into _build/html with warnings as errors.
#
#   scripts/build_book.sh          # incremental build (seconds when little changed)
#   scripts/build_book.sh --all    # rebuild every page from scratch
#
# The notebooks are executed through jupyter-cache (see _config.yml): the first
# build runs each one (about a minute in all), later builds re-run only
# notebooks whose code changed.
set -euo pipefail
cd "$(dirname "$0")/.."

extra=()
if [[ "${1:-}" == "--all" ]]; then
    extra+=(--all)
elif [[ $# -gt 0 ]]; then
    echo "usage: scripts/build_book.sh [--all]" >&2
    exit 2
fi

jupyter-book build . -W -n --keep-going "${extra[@]}"

echo
echo "The book is built. Open it in a browser:"
echo "  file://$(pwd)/_build/html/index.html"
