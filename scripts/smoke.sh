#!/usr/bin/env bash
# Smoke test: render every patch offline, then run patches/hello.yaml on a private dummy JACK server,
# capture its output with jack_rec and check that it is not silent. Stops only the server it started.
set -euo pipefail
cd "$(dirname "$0")/.."
# SMOKE_BIN: the binary to try (scripts/test.sh runs this for the debug and the release build).
bin=${SMOKE_BIN:-.build/debug/soundstage}
tmp=$(mktemp -d)
server="ss_smoke_$$"
jackd_pid=""
cleanup() {
  [ -n "$jackd_pid" ] && kill "$jackd_pid" 2>/dev/null && wait "$jackd_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

for p in patches/*.yaml; do
  "$bin" check "$p"
  "$bin" render "$p" --out "$tmp/$(basename "$p" .yaml).wav" --duration 1
done

jackd -n "$server" --no-realtime -d dummy -r 48000 -p 256 >"$tmp/jackd.log" 2>&1 &
jackd_pid=$!
jack_wait -s "$server" -w -t 10 >/dev/null
"$bin" run patches/hello.yaml --server "$server" --duration 4 --no-start-server --osc-port 0 >"$tmp/run.log" 2>&1 &
run_pid=$!
for _ in $(seq 50); do jack_lsp -s "$server" 2>/dev/null | grep -q soundstage:out_1 && break; sleep 0.1; done
JACK_DEFAULT_SERVER="$server" timeout 10 jack_rec -f "$tmp/capture.wav" -d 2 soundstage:out_1 soundstage:out_2 >/dev/null 2>&1 || true
wait "$run_pid"
cat "$tmp/run.log"
peak=$(sox "$tmp/capture.wav" -n stat 2>&1 | awk '/Maximum amplitude/ {print $3}')
echo "captured peak amplitude: $peak"
awk -v p="$peak" 'BEGIN { exit !(p > 0.05) }' || { echo "smoke: captured output is silent" >&2; exit 1; }
echo "smoke: ok"
