#!/usr/bin/env bash
# Prints the path of a python3 that can `import pythonosc`: $SOUNDSTAGE_PYTHON, or a virtual environment
# under the temporary folder (the one the OSC tests use) made once with `pip install python-osc`.
# Fails, saying why, when neither works.
set -euo pipefail
if [ -n "${SOUNDSTAGE_PYTHON:-}" ]; then
    "$SOUNDSTAGE_PYTHON" -c "import pythonosc" && { echo "$SOUNDSTAGE_PYTHON"; exit 0; }
    echo "SOUNDSTAGE_PYTHON=$SOUNDSTAGE_PYTHON cannot import pythonosc" >&2
    exit 1
fi
venv="${TMPDIR:-/tmp}/soundstage-python-osc-venv"
if ! "$venv/bin/python3" -c "import pythonosc" 2>/dev/null; then
    python3 -m venv "$venv" >&2 || { echo "python3 -m venv failed (is python3-venv installed?)" >&2; exit 1; }
    "$venv/bin/python3" -m pip install --quiet python-osc >&2 || { echo "pip install python-osc failed" >&2; exit 1; }
fi
echo "$venv/bin/python3"
