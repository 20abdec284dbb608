#!/usr/bin/env bash
# Soundstage disk-streaming benchmarks (plain tools, no package-benchmark plugin). Run from anywhere.
#
#   Benchmarks/run-streaming.sh            decode speed per format, then 64 streams of WAV, FLAC and AAC
#   Benchmarks/run-streaming.sh --decode   decode speed only (~1 minute once the files exist)
#
# Environment: STREAMS (default 64), SECONDS_RUN (real-time seconds per streaming run, default 30),
# FORMATS (streaming runs, default "wav flac aac"), DIR (where the test files are kept; default
# $TMPDIR). The first run writes the files: 64 × 60 s per format (WAV 704 MiB; the AAC encoder needs
# about 3 minutes for its 64 files on this machine). Every streaming run exits non-zero on an underrun.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
STREAMS="${STREAMS:-64}"
SECONDS_RUN="${SECONDS_RUN:-30}"
FORMATS="${FORMATS:-wav flac aac}"
DIR="${DIR:-${TMPDIR:-/tmp}}"

echo "== machine"
lscpu | grep -E '^(Model name|CPU\(s\)|Thread\(s\) per core)' || true
grep MemTotal /proc/meminfo || true
. /etc/os-release 2>/dev/null && echo "OS: ${PRETTY_NAME:-unknown}"
swift --version 2>&1 | head -1
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

swift build --package-path Benchmarks -c release --product DecodeSpeed >/dev/null
swift build --package-path Benchmarks -c release --product StreamLoad >/dev/null
BIN="$(swift build --package-path Benchmarks -c release --show-bin-path)"

echo "== decode speed (one thread)"
"$BIN/DecodeSpeed" --dir "$DIR/soundstage-decodespeed"
echo
[ "${1:-}" = "--decode" ] && exit 0

status=0
for format in $FORMATS; do
    echo "== $STREAMS streams, $format"
    "$BIN/StreamLoad" --streams "$STREAMS" --seconds "$SECONDS_RUN" --format "$format" \
        --dir "$DIR/soundstage-streamload" || status=1
    echo
done
exit "$status"
