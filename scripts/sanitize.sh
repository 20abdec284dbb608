#!/usr/bin/env bash
# Runs the graph, OSC and JACK suites under the address sanitizer and the graph and OSC suites under the
# thread sanitizer, then the seeded OSC soak (60 s of random live edits while the JACK period changes every
# 8 s or so) against an address-sanitized
# `soundstage run` on a private dummy JACK server. Any sanitizer report, crash or failed test fails the
# run. Called by scripts/test.sh after the plain build's tests; `scripts/sanitize.sh address` or
# `scripts/sanitize.sh thread` runs one half. SOAK_SECONDS (default 60) and SOAK_SEED set the soak.
#
# Nothing that opens a JACK client runs under the thread sanitizer: libjack ends its client threads in a
# way the thread sanitizer cannot follow ("thread finished with ignores enabled", which aborts the
# process; see docs/DECISIONS.md). The address sanitizer covers those suites.
set -euo pipefail
cd "$(dirname "$0")/.."

which=${1:-all}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Leaks are not what these runs look for (XCTest's own start-up allocations would be reported).
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:halt_on_error=1"
export TSAN_OPTIONS="halt_on_error=0:second_deadlock_stack=1"

# Runs `swift test` for one sanitizer in its own session, so that every process it started (private
# jackd servers of a test process the sanitizer stopped) can be stopped afterwards by session id, and
# fails on any sanitizer report. Every sanitized process of the run (the test process and each
# `soundstage` child a test starts) writes its reports to a file of its own (log_path), so a report of
# a child whose output a test keeps only in part is still shown whole.
run_suites() {
    local sanitizer=$1 scratch=$2 filter=$3 skip=${4:-} log="$tmp/$1.log" reports="$tmp/$1-reports"
    mkdir -p "$reports"
    echo "== $sanitizer sanitizer: build"
    swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch" 2>&1 | grep -E "error:|Build complete" || true
    echo "== $sanitizer sanitizer: $filter"
    local status=0
    ASAN_OPTIONS="$ASAN_OPTIONS:log_path=$reports/asan" TSAN_OPTIONS="$TSAN_OPTIONS:log_path=$reports/tsan" \
        setsid swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" --parallel \
        --filter "$filter" ${skip:+--skip "$skip"} >"$log" 2>&1 &
    local pid=$!
    wait "$pid" || status=$?
    # Whatever the run left behind in its session (a jackd whose test process was stopped) goes too.
    pkill -s "$pid" 2>/dev/null || true
    grep -E "^(✔|✘) Test run|^✘ (Test|Suite)|recorded an issue" "$log" | head -40 || true
    local report
    for report in "$reports"/*; do
        [ -s "$report" ] || continue
        echo "the $sanitizer sanitizer reported a problem (${report##*/}):" >&2
        head -200 "$report" >&2
        status=1
    done
    if grep -qE "ERROR: AddressSanitizer|WARNING: ThreadSanitizer|SUMMARY: (Address|Thread)Sanitizer|runtime error:" "$log"; then
        echo "the $sanitizer sanitizer reported a problem:" >&2
        grep -E -A40 "ERROR: AddressSanitizer|WARNING: ThreadSanitizer" "$log" | head -200 >&2
        return 1
    fi
    if [ "$status" -ne 0 ]; then
        echo "swift test under the $sanitizer sanitizer exited with $status" >&2
        tail -60 "$log" >&2
        return "$status"
    fi
}

# The soak: seeded random live edits over OSC against the address-sanitized engine (Tests/Soak).
run_soak() {
    local scratch=.build-asan
    local bin
    bin="$(swift build --scratch-path "$scratch" --sanitize=address --show-bin-path)/soundstage"
    local python
    python=$(scripts/python-osc.sh)
    echo "== soak: ${SOAK_SECONDS:-60} s of random live edits over OSC while the period changes (address sanitizer)"
    "$python" Tests/Soak/soak.py --bin "$bin" --seconds "${SOAK_SECONDS:-60}" ${SOAK_SEED:+--seed "$SOAK_SEED"} \
        --period-changes 8 --json "$tmp/soak.json"
}

if [ "$which" = all ] || [ "$which" = address ]; then
    run_suites address .build-asan "AudioGraphTests|OSCControlTests|JackHostTests"
    run_soak
fi
if [ "$which" = all ] || [ "$which" = thread ]; then
    # The suites that start a (thread-sanitized) `soundstage run` process on a JACK server are left out
    # with the JACK suite, for the same reason; they run under the address sanitizer above.
    run_suites thread .build-tsan "AudioGraphTests|OSCControlTests" \
        "ExternalLibloToolsRunTests|ExternalPythonOSCRunTests|FuzzRegressionTests|ScenarioClickOnsetTests|ScenarioPlayedBackTests|ServerLossRecoveryTests|RemoteControlRunTests|SessionSharingRunTests|SessionStoreRetryRunTests|NSMSessionRunTests|OtherAudioRunTests|HotReloadRunTests|RealtimeReportRunTests|PipeWireRunTests|NetJackScaleOutTests|OSCQueryRunTests|WebViewBrowserTests|JackConnectionBurstRunTests"
fi
echo "sanitizers: ok"
