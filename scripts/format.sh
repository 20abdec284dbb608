#!/usr/bin/env bash
# The source format (.swift-format, the toolchain's swift-format).
#
#   scripts/format.sh          rewrites every Swift file of the package in place
#   scripts/format.sh --check  changes nothing; fails, listing what differs, when a file is not formatted
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v swift-format >/dev/null; then
  echo "swift-format is missing (it ships with the Swift toolchain, 5.9 and later)" >&2
  exit 1
fi
# The package's own Swift files, tracked or new (never ignored ones, such as a build directory's checkouts).
mapfile -t paths < <(git ls-files --cached --others --exclude-standard '*.swift')
if [ "${1:-}" = "--check" ]; then
  if ! swift-format lint --strict --parallel "${paths[@]}"; then
    echo "files are not formatted (listed above); run scripts/format.sh" >&2
    exit 1
  fi
else
  swift-format format --in-place --parallel "${paths[@]}"
fi
