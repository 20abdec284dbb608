#!/usr/bin/env bash
# Prints the path of a python3 that can import python-osc, websockets and selenium (the OSCQuery and
# web view tests): $SOUNDSTAGE_WEB_PYTHON, or a virtual environment under the temporary folder (the one
# the tests use) made once with pip. Fails, saying why, when neither works.
set -euo pipefail
check='import pythonosc, websockets, selenium'
if [ -n "${SOUNDSTAGE_WEB_PYTHON:-}" ]; then
    "$SOUNDSTAGE_WEB_PYTHON" -c "$check" && { echo "$SOUNDSTAGE_WEB_PYTHON"; exit 0; }
    echo "SOUNDSTAGE_WEB_PYTHON=$SOUNDSTAGE_WEB_PYTHON cannot import python-osc, websockets and selenium" >&2
    exit 1
fi
venv="${TMPDIR:-/tmp}/soundstage-python-web-venv"
if ! "$venv/bin/python3" -c "$check" 2>/dev/null; then
    python3 -m venv "$venv" >&2 || { echo "python3 -m venv failed (is python3-venv installed?)" >&2; exit 1; }
    "$venv/bin/python3" -m pip install --quiet python-osc websockets selenium >&2 \
        || { echo "pip install python-osc websockets selenium failed" >&2; exit 1; }
fi
echo "$venv/bin/python3"
