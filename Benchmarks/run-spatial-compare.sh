#!/usr/bin/env bash
# Soundstage's environment node against OpenAL Soft, side by side in one process (plain tools, no
# package-benchmark plugin). Run from anywhere; works on the repository root.
#
#   Benchmarks/run-spatial-compare.sh          N = 1, 16, 64, 256 moving sources; OpenAL Soft with and
#                                              without HRTF, Soundstage HRTF, HRTF HQ and equal power
#                                              (moved with moveSources; HRTF and equal power also with
#                                              setVector by name)
#   Benchmarks/run-spatial-compare.sh --kernels  also the per-kernel costs (SpatialCost)
#
# Environment: REPEATS (seconds of audio measured per configuration and N, default 15), SOURCES
# (default 1,16,64,256).
#
# Benchmark-only dependency: OpenAL Soft's development files (Debian: apt-get install libopenal-dev,
# which brings libopenal1 and its HRTF data, libopenal-data). The main build does not need them;
# scripts/setup.sh does not install them.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
REPEATS="${REPEATS:-15}"
SOURCES="${SOURCES:-1,16,64,256}"

if ! pkg-config --exists openal; then
    echo "OpenAL Soft's development files are missing (Debian: apt-get install libopenal-dev)" >&2
    exit 1
fi

echo "== machine"
lscpu | grep -E '^(Model name|CPU\(s\)|Thread\(s\) per core|Hypervisor vendor)' || true
grep MemTotal /proc/meminfo || true
. /etc/os-release 2>/dev/null && echo "OS: ${PRETTY_NAME:-unknown}"
swift --version 2>&1 | head -1
echo "OpenAL Soft: $(pkg-config --modversion openal)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

swift build --package-path Benchmarks -c release --product OpenALCompare >/dev/null
BIN="$(swift build --package-path Benchmarks -c release --show-bin-path)"
echo "== OpenAL Soft vs Soundstage"
"$BIN/OpenALCompare" --sources "$SOURCES" --repeats "$REPEATS" --hq --by-name
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

if [ "${1:-}" = "--kernels" ]; then
    echo
    swift build --package-path Benchmarks -c release --product SpatialCost >/dev/null
    echo "== spatial kernels, one moving source"
    "$BIN/SpatialCost" --repeats "$REPEATS"
fi
