#!/usr/bin/env bash
# Builds the file-decode fuzzer with libFuzzer and runs it for SECONDS (default 300) on the bad-file
# corpus in Tests/AudioFilesTests/Corpus, which it grows with new inputs. Crashes land in Fuzz/crashes;
# add each one to the corpus once fixed. Needs the Swift toolchain's libclang_rt.fuzzer (Linux).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-300}"
# libFuzzer instrumentation and runtime. SwiftPM points `main` at the target's own entry point
# (FileDecodeFuzzer.main), so libFuzzer's main is not linked in; ours hands the command line to
# LLVMFuzzerRunDriver.
flags=(-Xswiftc -sanitize=fuzzer,address -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld)
swift build -c release --package-path Fuzz --product FileDecodeFuzzer "${flags[@]}"
binary="$(swift build -c release --package-path Fuzz --product FileDecodeFuzzer "${flags[@]}" --show-bin-path)/FileDecodeFuzzer"
mkdir -p Fuzz/crashes Fuzz/work-corpus
cp -n Tests/AudioFilesTests/Corpus/* Fuzz/work-corpus/ 2>/dev/null || true
"$binary" Fuzz/work-corpus -artifact_prefix=Fuzz/crashes/ -max_total_time="$seconds" \
  -rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=20 -max_len=262144 -print_final_stats=1
