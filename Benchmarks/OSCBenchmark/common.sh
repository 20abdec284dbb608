# Shared by run.sh and scene.sh (sourced, not run): the machine description, the soundstage build and
# the python-osc environment. Expects ROOT, CONFIG, PERIOD, SCRATCH and TMP; sets BIN and PYTHON.

describe_machine() {
    echo "== machine"
    lscpu | grep -E '^(Model name|CPU\(s\)|Thread\(s\) per core)' || true
    grep MemTotal /proc/meminfo || true
    . /etc/os-release 2>/dev/null && echo "OS: ${PRETTY_NAME:-unknown}"
    swift --version 2>&1 | head -1
    echo "build: $CONFIG; JACK: dummy backend, --no-realtime, 48000 Hz, $PERIOD-frame periods"
    echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo
}

build_soundstage() {
    echo "== building soundstage ($CONFIG, scratch $SCRATCH)"
    swift build --package-path "$ROOT" --scratch-path "$SCRATCH" -c "$CONFIG" --product soundstage >/dev/null
    BIN="$(swift build --package-path "$ROOT" --scratch-path "$SCRATCH" -c "$CONFIG" --show-bin-path)/soundstage"
}

# python-osc from PyPI into a virtual environment under $TMP, unless $SOUNDSTAGE_PYTHON names one.
prepare_python() {
    PYTHON="${SOUNDSTAGE_PYTHON:-}"
    if [ -z "$PYTHON" ]; then
        local venv="$TMP/soundstage-python-osc-venv"
        if ! "$venv/bin/python3" -c "import pythonosc" 2>/dev/null; then
            python3 -m venv "$venv"
            "$venv/bin/python3" -m pip install --quiet python-osc
        fi
        PYTHON="$venv/bin/python3"
    fi
}
