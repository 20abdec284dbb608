#!/usr/bin/env bash
# Sets up, checks the source format, builds with warnings checked, and runs every test (unit, DSP, integration with private jackd
# servers), then a smoke run of the CLI against a private dummy JACK server (debug, then a release build),
# then the graph, OSC and JACK
# suites under the address and thread sanitizers and a 60 s soak of random live OSC edits
# (scripts/sanitize.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# python-osc (PyPI) for the tests that drive Soundstage with an independent client, and for the soak.
SOUNDSTAGE_PYTHON=$(scripts/python-osc.sh)
export SOUNDSTAGE_PYTHON
# python-osc, websockets and selenium (PyPI) for the OSCQuery and web view tests.
SOUNDSTAGE_WEB_PYTHON=$(scripts/python-web.sh)
export SOUNDSTAGE_WEB_PYTHON
# numpy, scipy and pesq (PyPI) for the echo-cancellation yardstick the voice tests measure with.
SOUNDSTAGE_AEC_PYTHON=$(scripts/python-aec.sh)
export SOUNDSTAGE_AEC_PYTHON
# Everything the tests use from outside is installed now (setup.sh: jackd, liblo-tools, sox, ffmpeg;
# python-osc and the yardstick's python above), so a test that needs a missing tool fails instead of skipping
# (Sources/DSPTestSupport/ToolRequirement.swift).
export SOUNDSTAGE_REQUIRE_TOOLS=1

echo "== format"
scripts/format.sh --check

echo "== build"
swift build --build-tests 2>&1 | tee .build-log.txt
if grep -E "^/.*/(Sources|Tests)/.*warning:" .build-log.txt; then
  echo "the build has warnings in project files (listed above)" >&2
  exit 1
fi
rm -f .build-log.txt

echo "== tests"
swift test --skip-build --parallel 2>&1 | tee .test-log.txt
status=${PIPESTATUS[0]}
rm -f .test-log.txt
[ "$status" -eq 0 ] || exit "$status"

echo "== smoke: every patch renders offline and plays on a private dummy JACK server"
scripts/smoke.sh

echo "== release build: the README's first command builds it (whole-module), then the same smoke run"
swift build -c release --product soundstage
SMOKE_BIN=.build/release/soundstage scripts/smoke.sh

echo "== sanitizers and soak"
scripts/sanitize.sh
