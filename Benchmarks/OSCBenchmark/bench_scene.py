#!/usr/bin/env python3
"""Moving 3D scene over OSC (driven by Benchmarks/OSCBenchmark/scene.sh).

`soundstage run` plays a patch with N looping mono players in one `environment` node (written by
`write_patch`). A python-osc client moves every source 60 times per second, as a game or a VR rig would:
one bundle per frame holding N `/node/sK/position x y z` messages, the sources orbiting the listener.
Measured over the moving window, against the same window with the scene at rest:
- the process's CPU time (utime + stime from /proc, all threads) as % of one core, and the busiest
  thread's (the JACK process thread while at rest; the OSC thread's share while moving);
- xruns (/status), datagrams the kernel dropped on the service's socket (/proc/net/udp), /error replies;
- that the last frame's positions are the engine's once /sync answers.
Exits non-zero on an /error, a dropped datagram or a wrong final position; xruns are reported only (the
dummy driver without real-time scheduling has some at rest too).

Usage: bench_scene.py write-patch FILE --sources N --algorithm A
       bench_scene.py run --port P --pid PID --sources N [--seconds 10] [--json FILE]
"""
import argparse
import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(HERE, "..", "..", "Tests", "OSCControlTests", "Python"))
from osc_session import IMMEDIATELY, Client, approx, bundle, message  # noqa: E402
from service_stats import kernel_drops, process_ticks, status, thread_ticks  # noqa: E402

FRAMES_PER_SECOND = 60


def write_patch(path, sources, algorithm):
    lines = [
        "# Written by bench_scene.py: N looping tones in one environment.",
        "version: 1",
        "engine: { sampleRate: 48000, outputs: 2 }",
        "buffers:",
        "  - name: tone",
        "    generate: { waveform: sine, frequency: 330, duration: 1.0, amplitude: 0.1 }",
        "nodes:",
        "  - { name: env, kind: environment }",
    ]
    for k in range(sources):
        lines.append(f"  - {{ name: s{k}, kind: player, params: {{ buffer: tone, loop: true, playing: true, "
                     f"renderingAlgorithm: {algorithm}, positionZ: -2 }} }}")
    lines.append("connections:")
    lines.append("  - { from: env, to: main }")
    for k in range(sources):
        lines.append(f"  - {{ from: s{k}, to: env }}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def position(k, sources, frame):
    angle = 2 * math.pi * (k / sources + 0.5 * frame / FRAMES_PER_SECOND)
    return (round(2 * math.sin(angle), 4), 0.3, round(-2 * math.cos(angle), 4))


def window(c, args, datagrams):
    """Sends `datagrams` (one per frame, cycling; none: at rest) for args.seconds; returns the figures."""
    hz = os.sysconf("SC_CLK_TCK")
    c.drain(0.2)
    c.pending.clear()
    drops0, xruns0 = kernel_drops(args.port), status(c)["xruns"]
    ticks0, threads0 = process_ticks(args.pid), thread_ticks(args.pid)
    start = time.perf_counter()
    frames = int(args.seconds * FRAMES_PER_SECOND)
    late = 0
    for frame in range(frames):
        due = start + frame / FRAMES_PER_SECOND
        now = time.perf_counter()
        if now < due:
            time.sleep(due - now)
        elif now - due > 1 / FRAMES_PER_SECOND:
            late += 1
        if datagrams:
            c.send_packet(datagrams[frame % len(datagrams)])
    took = time.perf_counter() - start
    ticks1, threads1 = process_ticks(args.pid), thread_ticks(args.pid)
    c.sync(7, timeout=10)
    drops1, st = kernel_drops(args.port), status(c)
    busiest = sorted(((threads1[t] - threads0.get(t, 0)) for t in threads1), reverse=True)[:2]
    errors = [m.params for m in c.pending if m.address == "/error"]
    return {
        "seconds": round(took, 2),
        "frames": frames if datagrams else 0,
        "frames_sent_late": late,
        "process_cpu_percent": round(100 * (ticks1 - ticks0) / hz / took, 1),
        "busiest_threads_cpu_percent": [round(100 * b / hz / took, 1) for b in busiest],
        "dsp_load_percent": round(st["dsp"], 1),
        "xruns": st["xruns"] - xruns0,
        "kernel_drops": (drops1 - drops0) if drops0 is not None and drops1 is not None else None,
        "errors": errors[:5],
        "error_count": len(errors),
    }


def run(args):
    c = Client(args.port)
    n = args.sources
    datagrams = []
    for frame in range(FRAMES_PER_SECOND * 2):
        msgs = [message(f"/node/s{k}/position", *position(k, n, frame)) for k in range(n)]
        datagrams.append(bundle(IMMEDIATELY, *msgs))
    size = max(len(d.dgram) for d in datagrams)
    rest = window(c, args, None)
    moving = window(c, args, datagrams)
    # The last frame sent must be where the engine has the sources once /sync answered.
    last = (int(args.seconds * FRAMES_PER_SECOND) - 1) % len(datagrams)
    checked = 0
    wrong = []
    for k in range(0, n, max(1, n // 8)):
        got = c.request(f"/node/s{k}/position", timeout=5).params
        want = position(k, n, last)
        if not all(approx(g, w, 1e-3) for g, w in zip(got, want)):
            wrong.append({"source": k, "engine": got, "sent last": want})
        checked += 1
    result = {"sources": n, "bundle_bytes": size, "at_rest": rest, "moving": moving,
              "final_positions_checked": checked, "final_positions_wrong": wrong}
    print(json.dumps(result, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    # Xruns are reported, not judged: without real-time scheduling the dummy driver's thread misses a
    # period now and then on a shared machine, at rest as well as moving (compare the two windows).
    ok = moving["error_count"] == 0 and (moving["kernel_drops"] or 0) == 0 and not wrong
    return 0 if ok else 1


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write-patch")
    w.add_argument("file")
    w.add_argument("--sources", type=int, required=True)
    w.add_argument("--algorithm", default="HRTF")
    r = sub.add_parser("run")
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--pid", type=int, required=True)
    r.add_argument("--sources", type=int, required=True)
    r.add_argument("--seconds", type=float, default=10)
    r.add_argument("--json")
    args = p.parse_args()
    if args.command == "run" and args.seconds < 1:
        p.error("--seconds must be at least 1")
    if args.command == "write-patch":
        write_patch(args.file, args.sources, args.algorithm)
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
