#!/usr/bin/env bash
# Voice processing (echo cancellation) against the echo-cancellation yardstick (../shared/aec): generates
# scenes, runs VoiceBench on each (the voice processor in quality and low-complexity mode, and as anchors
# called directly SpeexDSP's MDF + preprocessor and webrtc-audio-processing 0.3's AEC, AEC with extended
# filter + delay-agnostic mode, and AECM), scores every output with metrics.py and prints one table. Run
# from anywhere; about 5 minutes on 2 cores.
#
#   Benchmarks/run-voice.sh                 all scenes (and the two-loudspeaker ones, whose first and second
#                                           scene are generated first)
#   Benchmarks/run-voice.sh default48 jump16  only the named scenes
#
# Environment: AEC_DIR (default ../shared/aec beside the repository), VOICE_WORK (scenes and outputs,
# default ${TMPDIR:-/tmp}/soundstage-voice), VOICE_BENCH_ARGS (extra VoiceBench flags, e.g. --no-ns).
# Needs espeak-ng and libwebrtc-audio-processing-dev (scripts/setup.sh) and Python 3 with numpy, scipy and
# pesq (pip install pesq).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
AEC_DIR="${AEC_DIR:-$ROOT/../shared/aec}"
WORK="${VOICE_WORK:-${TMPDIR:-/tmp}/soundstage-voice}"
mkdir -p "$WORK"

FAR2="The weather service expects heavy rain in the north this evening, with strong winds along the coast. \
Drivers should avoid the mountain roads after dark. Tomorrow morning will be cold but mostly dry, and the \
sun should return in the afternoon. Temperatures stay below the seasonal average until the weekend. \
Farmers are advised to bring the animals in before midnight, and the ferries may be delayed."
NEAR2="Sorry to interrupt, but the numbers on slide four look wrong to me. We counted twice as many \
units last month. Can we check the spreadsheet together after lunch? I will bring my laptop and the printouts."

# name | generator arguments, or "stereo MODE FIRST SECOND" (Benchmarks/voice-stereo-scene.py) | VoiceBench
# arguments
SCENES=(
  "default48|--fs 48000 --delay-ms 60"
  "default16|--fs 16000 --delay-ms 60"
  "voices48|--fs 48000 --delay-ms 20 --far-voice en-gb+m1 --near-voice en-us+f2 --seed 7 --far-text \"$FAR2\" --near-text \"$NEAR2\""
  "voices16|--fs 16000 --delay-ms 35 --far-voice en-us+f4 --near-voice en-gb+m2 --seed 11 --far-text \"$FAR2\" --near-text \"$NEAR2\""
  "delay120|--fs 48000 --delay-ms 120"
  "jump16|--fs 16000 --delay-ms 20 --delay2-ms 60"
  "jump48|--fs 48000 --delay-ms 20 --delay2-ms 60"
  "nl20|--fs 48000 --delay-ms 60 --nl-sdr 20"
  "nl6|--fs 48000 --delay-ms 60 --nl-sdr 6"
  "clip|--fs 48000 --delay-ms 60 --nl 1"
  "ser+10|--fs 48000 --delay-ms 60 --ser-db 10"
  "ser-10|--fs 48000 --delay-ms 60 --ser-db -10"
  "stereo-two|stereo two default48 voices48|--stereo-reference"
  "stereo-mixed|stereo mixed default48 voices48|--stereo-reference"
  "stereo-panned|stereo panned default48 voices48|--stereo-reference"
)

swift build -c release --package-path "$ROOT/Benchmarks" --product VoiceBench >&2
BENCH="$(swift build -c release --package-path "$ROOT/Benchmarks" --show-bin-path)/VoiceBench"

selected=("$@")
results="$WORK/results.jsonl"
: >"$results"
# Generates the scene called $1 unless it is there.
generate() {
  local entry rest args mode first second
  for entry in "${SCENES[@]}"; do
    [ "${entry%%|*}" = "$1" ] || continue
    rest="${entry#*|}"
    args="${rest%%|*}"
    [ -f "$WORK/$1/scene.json" ] && return
    if [[ "$args" == stereo* ]]; then
      read -r _ mode first second <<<"$args"
      generate "$first"
      generate "$second"
      python3 "$ROOT/Benchmarks/voice-stereo-scene.py" --mode "$mode" --first "$WORK/$first" \
        --second "$WORK/$second" --out "$WORK/$1" --aec-dir "$AEC_DIR"
    else
      eval python3 "$AEC_DIR/gen_signals.py" $args --out "$WORK/$1" >/dev/null
    fi
  done
}

for entry in "${SCENES[@]}"; do
  name="${entry%%|*}"
  rest="${entry#*|}"
  benchArgs=""
  if [[ "$rest" == *"|"* ]]; then benchArgs="${rest#*|}"; fi
  if ((${#selected[@]})) && [[ ! " ${selected[*]} " == *" $name "* ]]; then continue; fi
  scene="$WORK/$name"
  generate "$name"
  out="$WORK/$name-out"
  mkdir -p "$out"
  # shellcheck disable=SC2086
  "$BENCH" "$scene" "$out" $benchArgs ${VOICE_BENCH_ARGS:-} >"$out/bench.jsonl"
  for variant in quality low speex webrtc webrtc-ext aecm; do
    if ! grep -q "\"$variant\", \"cpu_percent\"" "$out/bench.jsonl"; then continue; fi
    cpu="$(grep "\"$variant\"" "$out/bench.jsonl" | sed 's/.*"cpu_percent": \([0-9.]*\).*/\1/')"
    metrics="$(python3 "$AEC_DIR/metrics.py" "$scene" "$out/$variant.wav")"
    echo "{\"scene\": \"$name\", \"variant\": \"$variant\", \"cpu_percent\": $cpu, \"metrics\": $metrics}" >>"$results"
  done
done

python3 - "$results" <<'PY'
import json, math, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
def energy_mean(curve):
    v = [c for c in curve if not math.isnan(c)]
    return -10 * math.log10(sum(10 ** (-c / 10) for c in v) / len(v)) if v else float("nan")
head = ("scene", "variant", "cpu%", "erle0-2", "erle_fe", "erle3-16", "erle_fe2", "fe2+2s", "nest_dB",
        "dt_near", "pesq_dt")
print(" | ".join(f"{h:>9}" for h in head))
for r in rows:
    m = r["metrics"]
    cells = (r["scene"], r["variant"], r["cpu_percent"], m["erle_0_2s"], m["erle_fe"],
             energy_mean(m["erle_curve"][3:]), m["erle_fe2"], energy_mean(m["erle_curve2"][2:]),
             m["nest_gain_db"], m["dt_near_gain_db"], m.get("pesq_dt", float("nan")))
    print(" | ".join(f"{c:>9.2f}" if isinstance(c, float) else f"{c!s:>9}" for c in cells))
PY
