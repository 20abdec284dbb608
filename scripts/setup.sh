#!/usr/bin/env bash
# Installs the system packages Soundstage builds and runs with (Debian 12). Idempotent; needs root or sudo.
set -euo pipefail
packages=(
  libjack-jackd2-dev jackd2       # JACK client library, server and tools (jack_lsp, jack_connect, jack_wait)
  libsndfile1-dev libsoxr-dev     # decoding/encoding and sample-rate conversion
  librubberband-dev               # Rubber Band: real-time time stretching and pitch shifting (time-pitch effect)
  libavformat-dev libavcodec-dev libavutil-dev libswresample-dev  # FFmpeg: AAC/ALAC in M4A/MP4
  liblo-dev liblo-tools           # OSC control; oscsend/oscdump for tests and manual checks
  libspeexdsp-dev                 # SpeexDSP: the MDF echo canceller under the voice processor
  libwebrtc-audio-processing-dev  # webrtc-audio-processing 0.3: the echo-cancellation anchors of Benchmarks/run-voice.sh
  espeak-ng                       # speech synthesis for the echo-cancellation test scenes
  libmysofa-dev                   # HRTF datasets (AES69 SOFA files); its libmysofa1 ships the MIT KEMAR set the tests load
  python3-h5py                    # the fidelity tests write a second HRTF data set as SOFA (scripts/make-test-sofa.py)
  sox                             # used by tests as an independent file writer/meter
  ffmpeg                          # used by tests as an independent M4A writer (tests skip without it)
  python3-venv                    # tests run python-osc (from PyPI) in a private venv
  pipewire pipewire-bin pipewire-jack wireplumber dbus-daemon  # tests run the engine on a private headless PipeWire too
  systemd                         # systemd-analyze: the tests verify the service units in contrib/systemd
  graphviz                        # dot: `soundstage graph --format svg` draws patches
  gnuplot-nox                     # draws the waveform and spectrogram overview of `render --plot` / `info --plot`
  netpbm                          # pngtopnm: the tests read the --plot pictures' pixels
  chromium chromium-driver        # the web view test opens the page in headless chromium (Selenium, scripts/python-web.sh)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
command -v swift >/dev/null || { echo "swift (6.1 or later) is not on PATH" >&2; exit 1; }
