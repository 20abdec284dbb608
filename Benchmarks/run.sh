#!/usr/bin/env bash
# Soundstage render benchmarks. Run from anywhere; works on the repository root.
#
#   Benchmarks/run.sh                      plain measurement + package-benchmark run + threshold check
#   Benchmarks/run.sh --plain              plain measurement only (RenderCost, no plugin; ~1 minute)
#   Benchmarks/run.sh --check              threshold check only (what CI would run)
#   Benchmarks/run.sh --update-thresholds  rewrite Benchmarks/Thresholds/6.3/ from a fresh run
#   Benchmarks/run.sh --streaming          disk streaming and decode speed (runs Benchmarks/run-streaming.sh)
#   Benchmarks/run.sh --spatial-compare    environment node vs OpenAL Soft (runs Benchmarks/run-spatial-compare.sh;
#                                          needs libopenal-dev, a benchmark-only dependency)
#   Benchmarks/run.sh --osc-scene          a moving 3D scene driven over OSC (runs OSCBenchmark/scene.sh)
#
# Environment: REPEATS (plain measurement repeats, default 30), BENCH_TIMEOUT (seconds allowed for each
# plugin command, default 1800: package-benchmark 1.38.1 waits forever if a benchmark child sends it a
# result it cannot decode, so every plugin call is bounded).
#
# The first build of package-benchmark takes about 3 minutes on 2 cores. Benchmarks build in release.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
THRESHOLDS="Benchmarks/Thresholds/6.3/"
REPEATS="${REPEATS:-30}"
BENCH_TIMEOUT="${BENCH_TIMEOUT:-1800}"
# Metrics kept in the committed thresholds: the render thread's own counts inside the render calls.
# Timings stay local (shared and CI machines are noisy); mallocCountTotal is process-wide (it also counts
# the engine's disk thread and, in the volume-change runs, engine.set), so it is shown but not gated.
GATED_METRICS="renderMallocCount renderRetainCount renderReleaseCount"

mode="all"
case "${1:-}" in
    "") ;;
    --plain) mode="plain" ;;
    --check) mode="check" ;;
    --update-thresholds) mode="update" ;;
    --streaming) shift; exec "$ROOT/Benchmarks/run-streaming.sh" "$@" ;;
    --spatial-compare) shift; exec "$ROOT/Benchmarks/run-spatial-compare.sh" "$@" ;;
    --osc-scene) shift; exec "$ROOT/Benchmarks/OSCBenchmark/scene.sh" "$@" ;;
    *) echo "usage: $0 [--plain | --check | --update-thresholds | --streaming [--decode] | --spatial-compare [--kernels] | --osc-scene]" >&2
       exit 2 ;;
esac

machine() {
    echo "== machine"
    lscpu | grep -E '^(Model name|CPU\(s\)|Thread\(s\) per core|CPU max MHz)' || true
    grep MemTotal /proc/meminfo || true
    . /etc/os-release 2>/dev/null && echo "OS: ${PRETTY_NAME:-unknown}"
    swift --version 2>&1 | head -1
    echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo
}

plain() {
    echo "== plain measurement (no plugin): swift build -c release, then RenderCost"
    swift build --package-path Benchmarks -c release --product RenderCost >/dev/null
    local bin
    bin="$(swift build --package-path Benchmarks -c release --show-bin-path)/RenderCost"
    "$bin" --repeats "$REPEATS"
    echo
    "$bin" --repeats "$REPEATS" --volume-changes
    echo
}

plugin_run() {
    echo "== package-benchmark run (release)"
    timeout "$BENCH_TIMEOUT" swift package --package-path Benchmarks benchmark --no-progress
    echo
}

check() {
    echo "== threshold check against $THRESHOLDS"
    timeout "$BENCH_TIMEOUT" swift package --package-path Benchmarks benchmark thresholds check \
        --path "$THRESHOLDS" --no-progress
}

update() {
    echo "== rewriting $THRESHOLDS"
    mkdir -p "$THRESHOLDS"
    rm -f "$THRESHOLDS"*.p90.json
    timeout "$BENCH_TIMEOUT" swift package --package-path Benchmarks --allow-writing-to-package-directory \
        benchmark thresholds update --path "$THRESHOLDS" --no-progress
    # Keep only the gated count metrics (the update writes every metric, timings included).
    python3 - "$THRESHOLDS" $GATED_METRICS <<'PY'
import json, pathlib, sys
folder, keep = pathlib.Path(sys.argv[1]), set(sys.argv[2:])
for path in sorted(folder.glob("*.p90.json")):
    data = json.loads(path.read_text())
    gated = {k: v for k, v in data.items() if k in keep}
    if gated:
        path.write_text(json.dumps(gated, indent=2, sort_keys=True) + "\n")
        print(f"{path.name}: {gated}")
    else:
        path.unlink()
PY
}

case "$mode" in
    all) machine; plain; plugin_run; check ;;
    plain) machine; plain ;;
    check) check ;;
    update) update; check ;;
esac
