#!/usr/bin/env python3
# A two-loudspeaker scene for VoiceBench --stereo-reference, from two scenes of the echo-cancellation
# yardstick (gen_signals.py, same rate): the first gives the near talker, the noise and one far-end
# signal (a), the second another far-end signal (b). The loudspeakers play, by mode:
#   two    a | b                  two different signals (game sound and a voice, real stereo)
#   mixed  a + b/2 | a/2 + b      two correlated signals (a stereo mix)
#   panned 0.9·a | 0.45·a         one signal panned (the processor folds it into one channel)
# Each loudspeaker has its own room (the yardstick's synthetic response; direct paths at --left-ms and
# --right-ms), the echo is 6 dB below the far end and the near talker --ser-db above the echo in double
# talk, as in the yardstick. Writes far.f32 (left), far_r.f32 (right), near, echo, noise and mic (.f32,
# and mic.wav) and scene.json, which metrics.py reads like any yardstick scene.
#
#   python3 Benchmarks/voice-stereo-scene.py --mode two --first SCENE_A --second SCENE_B --out DIR
import argparse
import importlib.util
import json
import os

import numpy as np
from scipy.io import wavfile
from scipy.signal import fftconvolve

ap = argparse.ArgumentParser()
ap.add_argument("--mode", choices=("two", "mixed", "panned"), required=True)
ap.add_argument("--first", required=True)
ap.add_argument("--second", required=True)
ap.add_argument("--out", required=True)
ap.add_argument("--left-ms", type=float, default=60.0)
ap.add_argument("--right-ms", type=float, default=63.0)
ap.add_argument("--ser-db", type=float, default=0.0)
ap.add_argument("--seed", type=int, default=5)
ap.add_argument("--aec-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../shared/aec"))
a = ap.parse_args()

spec = importlib.util.spec_from_file_location("gen_signals", os.path.join(a.aec_dir, "gen_signals.py"))
gen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen)


def load(scene, name):
    return np.fromfile(os.path.join(scene, name + ".f32"), np.float32).astype(np.float64)


meta = json.load(open(os.path.join(a.first, "scene.json")))
fs, n = meta["fs"], meta["N"]
if json.load(open(os.path.join(a.second, "scene.json")))["fs"] != fs:
    raise SystemExit("the two scenes differ in rate")
x, y = load(a.first, "far"), load(a.second, "far")[:n]
left, right = {"two": (x, y), "mixed": (x + 0.5 * y, 0.5 * x + y), "panned": (0.9 * x, 0.45 * x)}[a.mode]
scale = 10 ** (-26 / 20) / gen.active_rms(np.concatenate([left, right]), fs)
left, right = left * scale, right * scale
rng = np.random.default_rng(a.seed)
rooms = [gen.make_rir(fs, ms, meta["rt60"], 0.6, meta["drr_db"], rng) for ms in (a.left_ms, a.right_ms)]
echo = fftconvolve(left, rooms[0])[:n] + fftconvolve(right, rooms[1])[:n]
echo *= gen.active_rms(np.concatenate([left, right]), fs) * 10 ** (-6 / 20) / gen.active_rms(echo, fs)
t0, t1 = (s * fs for s in meta["segments"]["dt"])
near = load(a.first, "near")
near *= gen.active_rms(echo[t0:t1], fs) * 10 ** (a.ser_db / 20) / gen.active_rms(near[t0:t1], fs)
noise = rng.standard_normal(n)
noise *= gen.active_rms(echo, fs) * 10 ** (-meta["enr_db"] / 20) / gen.rms(noise)
mic = echo + near + noise
if np.max(np.abs(mic)) > 0.99:
    raise SystemExit("the microphone clips")
os.makedirs(a.out, exist_ok=True)
for name, v in (("far", left), ("far_r", right), ("near", near), ("echo", echo), ("noise", noise), ("mic", mic)):
    v.astype(np.float32).tofile(os.path.join(a.out, name + ".f32"))
wavfile.write(os.path.join(a.out, "mic.wav"), fs, mic.astype(np.float32))
meta.update(out=a.out, stereo_mode=a.mode, delay_ms=a.left_ms, right_delay_ms=a.right_ms, ser_db=a.ser_db,
            seed=a.seed, mic_peak=float(np.max(np.abs(mic))))
json.dump(meta, open(os.path.join(a.out, "scene.json"), "w"), indent=1)
