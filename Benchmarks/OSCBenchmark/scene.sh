#!/usr/bin/env bash
# A moving 3D scene over OSC: `soundstage run` with N looping sources in one environment on a private
# dummy JACK server, every source moved 60 times per second by a python-osc client (one bundle of N
# `/node/sK/position` messages per frame). Reports CPU at rest and moving, xruns, dropped datagrams and
# /error replies. Results and how to read them: docs/benchmarks.md, section "A moving scene over OSC".
#
#   Benchmarks/OSCBenchmark/scene.sh                          N = 64 and 256, HRTF and equal power
#   SOURCES=256 ALGORITHMS=HRTF WINDOW_SECONDS=20 Benchmarks/OSCBenchmark/scene.sh
#
# Needs jackd2, jack_wait and python3 with venv (python-osc from PyPI into a virtual environment under
# $TMPDIR, or $SOUNDSTAGE_PYTHON). Starts and stops only its own processes (by PID).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
HERE="$ROOT/Benchmarks/OSCBenchmark"
CONFIG="${CONFIG:-release}"
PERIOD="${PERIOD:-256}"
SOURCES="${SOURCES:-64 256}"
ALGORITHMS="${ALGORITHMS:-HRTF equalPowerPanning}"
SECONDS_PER_WINDOW="${WINDOW_SECONDS:-10}"
TMP="${TMPDIR:-/tmp}"
SCRATCH="${SCRATCH:-$ROOT/.build-oscbench}"
export JACK_NO_START_SERVER=1

. "$HERE/common.sh"
describe_machine
build_soundstage
prepare_python

SERVER="osc_scene_$$"
WORK="$(mktemp -d "$TMP/osc-scene-XXXXXX")"
JACKD_PID=""
SS_PID=""
stop_soundstage() {
    [ -n "$SS_PID" ] && kill "$SS_PID" 2>/dev/null && wait "$SS_PID" 2>/dev/null || true
    SS_PID=""
}
cleanup() {
    stop_soundstage
    [ -n "$JACKD_PID" ] && kill "$JACKD_PID" 2>/dev/null && wait "$JACKD_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

jackd -n "$SERVER" --no-realtime -d dummy -r 48000 -p "$PERIOD" -C 2 -P 2 >/dev/null 2>&1 &
JACKD_PID=$!
jack_wait -s "$SERVER" -w -t 10 >/dev/null 2>&1

STATUS=0
for ALGORITHM in $ALGORITHMS; do
    for N in $SOURCES; do
        PATCH="$WORK/scene-$ALGORITHM-$N.yaml"
        LOG="$WORK/scene-$ALGORITHM-$N.log"
        "$PYTHON" "$HERE/bench_scene.py" write-patch "$PATCH" --sources "$N" --algorithm "$ALGORITHM"
        "$BIN" run "$PATCH" --server "$SERVER" --name "scene" --osc-port 0 --no-start-server \
            --duration 3600 >"$LOG" 2>&1 &
        SS_PID=$!
        for _ in $(seq 200); do grep -q "playing for" "$LOG" && break; sleep 0.1; done
        PORT="$(grep -o 'OSC: udp and tcp on 127.0.0.1:[0-9]*' "$LOG" | grep -o '[0-9]*$' || true)"
        [ -n "$PORT" ] || { cat "$LOG"; echo "soundstage run did not start" >&2; exit 1; }
        echo "== $ALGORITHM, N = $N (soundstage pid $SS_PID, OSC port $PORT)"
        "$PYTHON" "$HERE/bench_scene.py" run --port "$PORT" --pid "$SS_PID" --sources "$N" \
            --seconds "$SECONDS_PER_WINDOW" --json "$WORK/result.json" || STATUS=1
        stop_soundstage
        echo
    done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $STATUS
