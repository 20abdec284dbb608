#!/usr/bin/env bash
# Sets up, builds (release) and plays patches/hello.yaml through JACK, starting a JACK server when none
# runs. Extra arguments go to `soundstage run` (e.g. --duration 5, --connect).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
swift build -c release --product soundstage
exec .build/release/soundstage run patches/hello.yaml "$@"
