#!/usr/bin/env bash
# The long soak (issue: live edits must never crash the engine): `soundstage run` (release build) on a
# private dummy JACK server, driven for SECONDS (default 3600) by Tests/Soak/soak.py's seeded random live
# edits over OSC, next to an idle engine on its own private server for the same time (the xrun baseline:
# the dummy backend without real-time scheduling reports xruns even at rest). Prints both summaries and
# leaves the JSON reports in OUT (default a new temporary folder). The figures go to docs/benchmarks.md.
#
# Usage: Benchmarks/Soak/run.sh [SECONDS] [SEED]
# Needs jackd2, jack_wait, sox and python3 with venv (python-osc from PyPI; see scripts/python-osc.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
SECONDS_TO_RUN=${1:-3600}
SEED=${2:-$RANDOM}
OUT=${OUT:-$(mktemp -d)}
echo "== machine"
lscpu | grep -E '^(Model name|CPU\(s\))' || true
grep MemTotal /proc/meminfo || true
swift --version 2>&1 | head -1
echo "== building soundstage (release)"
swift build --package-path "$ROOT" -c release --product soundstage >/dev/null
BIN="$(swift build --package-path "$ROOT" -c release --show-bin-path)/soundstage"
PYTHON=$("$ROOT/scripts/python-osc.sh")
echo "== soak: $SECONDS_TO_RUN s, seed $SEED; idle baseline alongside; reports in $OUT"
status=0
"$PYTHON" "$ROOT/Tests/Soak/soak.py" --bin "$BIN" --seconds "$SECONDS_TO_RUN" --seed "$SEED" --json "$OUT/soak.json" \
    >"$OUT/soak.log" 2>&1 &
soak=$!
# Two JACK servers starting at the same moment can trip over each other's registration: start apart.
sleep 10
"$PYTHON" "$ROOT/Tests/Soak/soak.py" --bin "$BIN" --seconds "$SECONDS_TO_RUN" --idle --json "$OUT/idle.json" \
    >"$OUT/idle.log" 2>&1 || true
wait "$soak" || status=$?
echo "== idle"; tail -8 "$OUT/idle.log"
echo "== soak"; tail -12 "$OUT/soak.log"
exit "$status"
