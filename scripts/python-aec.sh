#!/usr/bin/env bash
# Prints the path of a python3 that can run the echo-cancellation yardstick (../shared/aec: numpy, scipy
# and pesq): $SOUNDSTAGE_AEC_PYTHON, or a virtual environment under the temporary folder made once with
# `pip install numpy scipy pesq` (pesq builds from source; pip fetches its build tools). Fails, saying
# why, when neither works.
set -euo pipefail
check='import numpy, scipy, pesq'
if [ -n "${SOUNDSTAGE_AEC_PYTHON:-}" ]; then
    "$SOUNDSTAGE_AEC_PYTHON" -c "$check" && { echo "$SOUNDSTAGE_AEC_PYTHON"; exit 0; }
    echo "SOUNDSTAGE_AEC_PYTHON=$SOUNDSTAGE_AEC_PYTHON cannot import numpy, scipy and pesq" >&2
    exit 1
fi
venv="${TMPDIR:-/tmp}/soundstage-python-aec-venv"
if ! "$venv/bin/python3" -c "$check" 2>/dev/null; then
    python3 -m venv "$venv" >&2 || { echo "python3 -m venv failed (is python3-venv installed?)" >&2; exit 1; }
    "$venv/bin/python3" -m pip install --quiet numpy scipy >&2 || { echo "pip install numpy scipy failed" >&2; exit 1; }
    "$venv/bin/python3" -m pip install --quiet pesq >&2 || { echo "pip install pesq failed" >&2; exit 1; }
fi
echo "$venv/bin/python3"
