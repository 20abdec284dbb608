#!/usr/bin/env bash
# OSC control benchmark: sustained parameter-set rate without loss or xrun, and control latency from
# message to changed audio, against `soundstage run` on a private dummy JACK server. Results and how to
# read them: docs/benchmarks.md, section "OSC control".
#
#   Benchmarks/OSCBenchmark/run.sh                 release build, 256-frame periods
#   CONFIG=debug Benchmarks/OSCBenchmark/run.sh    the debug build the tests use
#   PERIOD=128 RATES=10000,20000,40000 RATE_SECONDS=5 TRIALS=40 Benchmarks/OSCBenchmark/run.sh
#
# Needs jackd2, jack tools (jack_rec, jack_lsp, jack_wait) and python3 with venv; python-osc and JACK-Client
# are installed from PyPI into a virtual environment under $TMPDIR (or taken from $SOUNDSTAGE_PYTHON). Starts and stops
# only its own processes (by PID). Writes the JSON result to $OUT (default: $TMPDIR/osc-bench-<config>.json).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
HERE="$ROOT/Benchmarks/OSCBenchmark"
CONFIG="${CONFIG:-release}"
PERIOD="${PERIOD:-256}"
RATES="${RATES:-5000,10000,20000,40000,80000,160000}"
SECONDS_PER_RATE="${RATE_SECONDS:-3}"
TRIALS="${TRIALS:-30}"
TMP="${TMPDIR:-/tmp}"
OUT="${OUT:-$TMP/osc-bench-$CONFIG.json}"
SCRATCH="${SCRATCH:-$ROOT/.build-oscbench}"
export JACK_NO_START_SERVER=1

. "$HERE/common.sh"
describe_machine
build_soundstage
prepare_python
# JACK-Client (PyPI) for the probe latency measurement; without it that part is skipped.
"$PYTHON" -c "import jack" 2>/dev/null || "$PYTHON" -m pip install --quiet JACK-Client || true

SERVER="osc_bench_$$"
CLIENT="ss_bench"
LOG="$(mktemp "$TMP/osc-bench-XXXXXX.log")"
JACKD_PID=""
SS_PID=""
cleanup() {
    [ -n "$SS_PID" ] && kill "$SS_PID" 2>/dev/null && wait "$SS_PID" 2>/dev/null || true
    [ -n "$JACKD_PID" ] && kill "$JACKD_PID" 2>/dev/null && wait "$JACKD_PID" 2>/dev/null || true
    rm -f "$LOG"
}
trap cleanup EXIT

jackd -n "$SERVER" --no-realtime -d dummy -r 48000 -p "$PERIOD" -C 2 -P 2 >/dev/null 2>&1 &
JACKD_PID=$!
jack_wait -s "$SERVER" -w -t 10 >/dev/null
"$BIN" run "$HERE/bench.yaml" --server "$SERVER" --name "$CLIENT" --osc-port 0 --no-start-server \
    --duration 3600 >"$LOG" 2>&1 &
SS_PID=$!
for _ in $(seq 100); do grep -q "playing for" "$LOG" && break; sleep 0.1; done
PORT="$(grep -o 'OSC: udp and tcp on 127.0.0.1:[0-9]*' "$LOG" | grep -o '[0-9]*$')"
[ -n "$PORT" ] || { cat "$LOG"; echo "soundstage run did not start" >&2; exit 1; }
echo "soundstage run: pid $SS_PID, OSC port $PORT, JACK server $SERVER"
echo

"$PYTHON" "$HERE/bench_osc.py" --port "$PORT" --pid "$SS_PID" --server "$SERVER" --client "$CLIENT" \
    --period "$PERIOD" --rates "$RATES" --seconds "$SECONDS_PER_RATE" --trials "$TRIALS" --json "$OUT"
echo
echo "JSON: $OUT"
