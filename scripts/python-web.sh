#!/usr/bin/env bash
# Prints the path of a python3 that can `import selenium, websockets, pythonosc` (the web tests: the web
# view in headless chromium, the OSCQuery HTTP and WebSocket checks): $SOUNDSTAGE_WEB_PYTHON, or a
# virtual environment under the temporary folder made once with `pip install selenium websockets
# python-osc`. Selenium drives Debian's chromium through Debian's chromedriver (scripts/setup.sh installs
# both); nothing is downloaded at test time. Fails, saying why, when neither works.
set -euo pipefail
check="import selenium, websockets, pythonosc"
if [ -n "${SOUNDSTAGE_WEB_PYTHON:-}" ]; then
    "$SOUNDSTAGE_WEB_PYTHON" -c "$check" && { echo "$SOUNDSTAGE_WEB_PYTHON"; exit 0; }
    echo "SOUNDSTAGE_WEB_PYTHON=$SOUNDSTAGE_WEB_PYTHON cannot import selenium, websockets and pythonosc" >&2
    exit 1
fi
venv="${TMPDIR:-/tmp}/soundstage-python-web-venv"
if ! "$venv/bin/python3" -c "$check" 2>/dev/null; then
    python3 -m venv "$venv" >&2 || { echo "python3 -m venv failed (is python3-venv installed?)" >&2; exit 1; }
    "$venv/bin/python3" -m pip install --quiet selenium websockets python-osc >&2 ||
        { echo "pip install selenium websockets python-osc failed" >&2; exit 1; }
fi
echo "$venv/bin/python3"
