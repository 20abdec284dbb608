#!/usr/bin/env python3
"""OSC control benchmark for `soundstage run` (driven by Benchmarks/OSCBenchmark/run.sh).

Three measurements, all with python-osc (PyPI) as the client:

1. Round trip: /ping -> /pong, one at a time.
2. Sustained parameter sets: `/node/p/volume f` streamed at a fixed rate for a few seconds, for increasing
   rates, plus one unpaced run ("max"). A rate counts as sustained only when nothing was lost and nothing
   glitched: the kernel dropped no datagram on the service's socket (/proc/net/udp), no /error came back
   (a full command queue answers /error 50), /sync answered and the last value sent is the value the
   engine reports, and /status shows no new xrun.
3. Control latency, message to changed audio, two ways:
   a. jack_rec: a click on out_1, started by a bundle time-tagged t_ref, marks a known instant in a jack_rec
      capture; at t_ref the script sends an immediate message that changes out_2 (a volume step on a
      constant, or `play` of a stopped player). Latency = frames from the click to the first changed
      sample of out_2, minus (t_send - t_ref) * rate. The reference is the engine's own time tag to frame
      conversion, so its jitter (the dummy driver's wake-up jitter without realtime) is in the result.
   b. JACK probe (JACK-Client from PyPI, skipped when missing): a JACK client reads out_2 in its process
      callback and timestamps the send with jack_frame_time(), JACK's own estimate of the current frame.
      Latency = first changed frame - send frame; "cycles late" = whether the change starts in the first
      cycle that begins after the send (0) or later.

Usage: bench_osc.py --port P --pid PID --server JACK_SERVER --client JACK_CLIENT --period FRAMES
                    [--rates 5000,10000,...] [--seconds 3] [--trials 30] [--json FILE]
"""
import argparse
import json
import os
import random
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(HERE, "..", "..", "Tests", "OSCControlTests", "Python"))
from osc_session import Client, approx, bundle, message  # noqa: E402
from service_stats import kernel_drops, status, thread_ticks  # noqa: E402

RATE = 48000


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


# 1. Round trip ---------------------------------------------------------------------------------------

def round_trip(c, count=1000):
    times = []
    for i in range(count):
        t = time.perf_counter()
        m = c.request("/ping", i, reply="/pong")
        times.append(time.perf_counter() - t)
        assert m.params == [i], m.params
    us = [t * 1e6 for t in times]
    return {"count": count, "median_us": statistics.median(us), "p99_us": percentile(us, 99), "max_us": max(us)}


# 2. Sustained parameter sets -------------------------------------------------------------------------

def flood(c, rate, seconds, datagrams):
    """Sends `/node/p/volume` messages at `rate` per second (None: as fast as possible)."""
    send = c.udp.send
    n = len(datagrams)
    total = int((rate or 10_000_000) * seconds)
    sent = 0
    start = time.perf_counter()
    if rate is None:
        deadline = start + seconds
        while time.perf_counter() < deadline:
            for _ in range(256):
                send(datagrams[sent % n])
                sent += 1
    else:
        while sent < total:
            due = min(total, int((time.perf_counter() - start) * rate) + 1)
            while sent < due:
                send(datagrams[sent % n])
                sent += 1
            if sent >= due:
                time.sleep(0.0002)
    return sent, time.perf_counter() - start


def throughput(c, args, clock_ticks):
    messages = [message("/node/p/volume", 0.25 + 0.5 * k / 999) for k in range(1000)]
    results = []
    rates = [int(r) for r in args.rates.split(",")] + [None]
    for step, rate in enumerate(rates):
        c.drain(0.2)
        c.pending.clear()
        drops0, xruns0, ticks0 = kernel_drops(args.port), status(c)["xruns"], thread_ticks(args.pid)
        sent, took = flood(c, rate, args.seconds, messages)
        # The last value is unique: it must be the engine's value once /sync has answered.
        final = round(0.9 - step * 0.01, 4)
        c.send("/node/p/volume", final)
        sent += 1
        t_sync = time.perf_counter()
        synced = True
        try:
            c.sync(1000 + step, timeout=5)
        except AssertionError:
            synced = False
        sync_s = time.perf_counter() - t_sync
        ticks1 = thread_ticks(args.pid)
        deltas = [ticks1[t] - ticks0.get(t, 0) for t in ticks1]
        window = took + sync_s
        value = c.request("/node/p/volume").params[0]
        c.drain(0.3)
        errors = c.take("/error")
        drops = kernel_drops(args.port) - drops0
        xruns = status(c)["xruns"] - xruns0
        lossless = synced and drops == 0 and not errors and approx(value, final, 1e-6)
        row = {
            "target_rate": rate or "max", "sent": sent, "seconds": round(took, 3),
            "achieved_rate": round(sent / took),
            "kernel_drops": drops, "errors": [e.params[:2] for e in errors[:3]], "error_count": len(errors),
            "synced": synced, "sync_seconds": round(sync_s, 3), "final_value_ok": approx(value, final, 1e-6),
            "xruns": xruns, "lossless": lossless and xruns == 0,
            "process_cpu_percent": round(100 * sum(deltas) / clock_ticks / window, 1),
            "busiest_thread_cpu_percent": round(100 * max(deltas) / clock_ticks / window, 1),
        }
        results.append(row)
        print(f"  rate {str(row['target_rate']):>7}: sent {sent:>7} in {took:5.2f} s = {row['achieved_rate']:>7}/s, "
              f"drops {drops}, /error {len(errors)}, synced {synced} ({sync_s:.3f} s), "
              f"value ok {row['final_value_ok']}, "
              f"xruns {xruns}, CPU: process {row['process_cpu_percent']} %, busiest thread "
              f"{row['busiest_thread_cpu_percent']} % -> "
              f"{'lossless' if row['lossless'] else 'LOSS'}", flush=True)
        time.sleep(1.0)
    sustained = [r["achieved_rate"] for r in results if r["lossless"]]
    return {"steps": results, "max_lossless_rate": max(sustained) if sustained else 0}


# 3. Control latency ----------------------------------------------------------------------------------

def read_wav32(path):
    """Channels of a 32-bit PCM WAV (jack_rec -b 32) as lists of floats."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:4] == b"RIFF" and data[8:12] == b"WAVE", "not a WAV file"
    i, channels, bits, samples = 12, 0, 0, b""
    while i + 8 <= len(data):
        chunk, size = data[i:i + 4], struct.unpack("<I", data[i + 4:i + 8])[0]
        body = data[i + 8:i + 8 + size]
        if chunk == b"fmt ":
            channels, bits = struct.unpack("<H", body[2:4])[0], struct.unpack("<H", body[14:16])[0]
        elif chunk == b"data":
            samples = body
        i += 8 + size + (size & 1)
    assert bits == 32 and channels > 0, (bits, channels)
    values = struct.unpack("<%di" % (len(samples) // 4), samples)
    return [[v / 2147483648.0 for v in values[c::channels]] for c in range(channels)]


def onsets(samples, threshold=0.5, gap=1000):
    found, last = [], -gap - 1
    for i, x in enumerate(samples):
        if abs(x) > threshold:
            if i - last > gap:
                found.append(i)
            last = i
    return found


def jack_connected(server, port, other):
    out = subprocess.run(["jack_lsp", "-s", server, "-c"], capture_output=True, text=True).stdout.splitlines()
    current = None
    for line in out:
        if line.startswith((" ", "\t")):
            if current == port and line.strip() == other:
                return True
        else:
            current = line
    return False


def latency(c, args):
    period_s = args.period / RATE
    kinds = ["volume"] * args.trials + ["play"] * args.trials
    spacing = 0.6
    seconds = len(kinds) * spacing + 3
    path = tempfile.mktemp(prefix="osc-bench-", suffix=".wav")
    env = dict(os.environ, JACK_DEFAULT_SERVER=args.server, JACK_NO_START_SERVER="1")
    ports = [f"{args.client}:out_1", f"{args.client}:out_2"]
    rec = subprocess.Popen(["jack_rec", "-f", path, "-d", str(seconds), "-b", "32"] + ports, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 10
    while not all(jack_connected(args.server, p, f"jackrec:input{i + 1}") for i, p in enumerate(ports)):
        assert time.time() < deadline and rec.poll() is None, "jack_rec did not connect"
        time.sleep(0.05)
    rng = random.Random(2026)
    trials = []
    c.send("/node/p/volume", 1.0)
    c.send("/node/p/play")
    c.sync(1)
    time.sleep(0.2)
    for k, kind in enumerate(kinds):
        c.send("/node/clk/stop")
        if kind == "play":
            c.send("/node/p/stop")  # silence, then the measured play
        c.sync(10 + k)
        time.sleep(0.05)
        # A random phase against the JACK cycle, 0.25 s ahead (more than the 0.1 s hold + a period).
        t_ref = time.time() + 0.25 + rng.uniform(0, period_s)
        c.send_packet(bundle(t_ref, message("/node/clk/play")))
        time.sleep(max(0.0, t_ref - time.time() - 0.002))
        while time.time() < t_ref:
            pass
        t_send = time.time()
        if kind == "volume":
            c.send("/node/p/volume", 0.5 if k % 2 == 0 else 1.0)
        else:
            c.send("/node/p/play")
        trials.append((kind, t_ref, t_send))
        time.sleep(max(0.0, spacing - 0.3 - (time.time() - t_send)))
    output, _ = rec.communicate(timeout=seconds + 20)
    assert "jackrec failed with" not in output, output
    left, right = read_wav32(path)
    os.unlink(path)
    clicks = onsets(left)
    assert len(clicks) == len(trials), (len(clicks), len(trials))
    c.drain(0.2)
    late_bundles = c.take("/late")
    rows = []
    period = args.period
    for (kind, t_ref, t_send), f_ref in zip(trials, clicks):
        # Look back three periods: the reference's jitter can put the click after the change.
        lookback = 3 * period
        before = right[f_ref - lookback]
        f = f_ref - lookback
        while f < min(len(right), f_ref + 16 * period) and abs(right[f] - before) <= 1e-5:
            f += 1
        # The frame at which the message was sent, on the engine's own clock (the click's frame is the
        # engine's conversion of t_ref), and the first JACK cycle that starts after it. jack_rec's file
        # starts on a cycle boundary, so cycles start at multiples of the period.
        arrival = f_ref + (t_send - t_ref) * RATE
        first_cycle_after = -(-arrival // period) * period
        change_cycle = f - f % period
        rows.append({
            "kind": kind, "frames": f - arrival, "periods": (f - arrival) / period, "click_frame": f_ref,
            "change_frame": f, "offset_in_cycle": f % period,
            "cycles_late": round((change_cycle - first_cycle_after) / period),
            "frames_before_cycle": first_cycle_after - arrival,
            "around_change": [round(x, 6) for x in right[f - 2:f + 3]],
        })
    summary = {}
    for kind in ("volume", "play"):
        mine = [r for r in rows if r["kind"] == kind]
        p = [r["periods"] for r in mine]
        late = [r for r in mine if r["cycles_late"] != 0]
        summary[kind] = {
            "trials": len(p), "min_periods": round(min(p), 3), "median_periods": round(statistics.median(p), 3),
            "p95_periods": round(percentile(p, 95), 3), "max_periods": round(max(p), 3),
            "within_one_period": sum(1 for x in p if x <= 1.0),
            "in_first_cycle_after_send": len(mine) - len(late),
            "later_cycles": [(r["cycles_late"], round(r["frames_before_cycle"], 1)) for r in late],
            "offsets_in_cycle": sorted(set(r["offset_in_cycle"] for r in mine)),
        }
        s = summary[kind]
        print(f"  {kind:>6}: {s['trials']} trials, latency min {s['min_periods']} / median {s['median_periods']} / "
              f"p95 {s['p95_periods']} / max {s['max_periods']} periods; within 1 period: {s['within_one_period']}; "
              f"in the first cycle after the send: {s['in_first_cycle_after_send']} (others: cycles late, frames the "
              f"send came before that cycle: {s['later_cycles']}); first changed sample at cycle offset "
              f"{s['offsets_in_cycle']}", flush=True)
    return {"period_frames": args.period, "late_reference_bundles": [m.params for m in late_bundles],
            "summary": summary, "trials": rows}


class JackProbe:
    """A JACK client downstream of soundstage's out_2 that timestamps sends and finds changes in JACK frames."""

    def __init__(self, server, source, port):
        import jack
        self.client = jack.Client("oscbench_probe", servername=server, no_start_server=True)
        self.inport = self.client.inports.register("in")
        self.period = self.client.blocksize
        self.last_value = None
        self.watch = None        # (send_frame, baseline) while waiting for a change
        self.result = None       # (change_frame, cycle_start)
        self.cycle_start = None
        self.done = threading.Event()
        self.client.set_process_callback(self._process)
        self.client.activate()
        self.client.connect(source, self.inport)

    def _process(self, frames):
        samples = memoryview(self.inport.get_buffer()).cast("f")
        start = self.client.last_frame_time
        self.cycle_start = start
        watch = self.watch
        if watch is not None and self.result is None:
            send_frame, baseline = watch
            for i in range(frames):
                if abs(samples[i] - baseline) > 1e-5:
                    self.result = (start + i, start)
                    self.done.set()
                    break
        self.last_value = samples[frames - 1]

    def measure(self, send, timeout=1.0):
        """Sends (`send()`), returns (send_frame, change_frame, change_cycle_start) or None on timeout."""
        self.result = None
        self.done.clear()
        baseline = self.last_value
        send_frame = self.client.frame_time
        self.watch = (send_frame, baseline)
        send()
        ok = self.done.wait(timeout)
        self.watch = None
        if not ok:
            return None
        change, cycle = self.result
        return send_frame, change, cycle

    def close(self):
        self.client.deactivate()
        self.client.close()


def probe_latency(c, args):
    try:
        import jack  # noqa: F401
    except ImportError:
        print("  skipped: JACK-Client (PyPI) is not installed", flush=True)
        return None
    probe = JackProbe(args.server, f"{args.client}:out_2", args.port)
    period = probe.period
    rng = random.Random(7)
    rows = []
    try:
        c.send("/node/p/volume", 1.0)
        c.send("/node/p/play")
        c.sync(2)
        time.sleep(0.2)
        kinds = ["volume"] * args.trials + ["play"] * args.trials
        for k, kind in enumerate(kinds):
            if kind == "play":
                c.send("/node/p/stop")
                c.sync(500 + k)
            # Settle (glides take 20 ms), then a random phase against the cycle.
            time.sleep(0.08 + rng.uniform(0, period / RATE))
            value = 0.5 if k % 2 == 0 else 1.0
            if kind == "volume":
                r = probe.measure(lambda: c.send("/node/p/volume", value))
            else:
                r = probe.measure(lambda: c.send("/node/p/play"))
            if r is None:
                rows.append({"kind": kind, "missed": True})
                continue
            send_frame, change, cycle = r
            first_cycle_after = cycle - ((cycle - send_frame) // period) * period
            if first_cycle_after <= send_frame:
                first_cycle_after += period
            rows.append({"kind": kind, "send_frame": send_frame, "change_frame": change,
                         "frames": change - send_frame, "periods": (change - send_frame) / period,
                         "cycles_late": (cycle - first_cycle_after) // period, "offset_in_cycle": change - cycle,
                         "frames_before_cycle": first_cycle_after - send_frame})
    finally:
        probe.close()
    summary = {}
    for kind in ("volume", "play"):
        mine = [r for r in rows if r["kind"] == kind and not r.get("missed")]
        p = [r["periods"] for r in mine]
        late = [r for r in mine if r["cycles_late"] != 0]
        summary[kind] = {
            "trials": len([r for r in rows if r["kind"] == kind]),
            "missed": len([r for r in rows if r["kind"] == kind and r.get("missed")]),
            "min_periods": round(min(p), 3), "median_periods": round(statistics.median(p), 3),
            "p95_periods": round(percentile(p, 95), 3), "max_periods": round(max(p), 3),
            "within_one_period": sum(1 for x in p if x <= 1.0),
            "in_first_cycle_after_send": len(mine) - len(late),
            "later_cycles": [(r["cycles_late"], r["frames_before_cycle"]) for r in late],
            "offsets_in_cycle": sorted(set(r["offset_in_cycle"] for r in mine)),
        }
        s = summary[kind]
        print(f"  {kind:>6}: {s['trials']} trials ({s['missed']} missed), latency min {s['min_periods']} / median "
              f"{s['median_periods']} / p95 {s['p95_periods']} / max {s['max_periods']} periods; within 1 period: "
              f"{s['within_one_period']}; in the first cycle after the send: {s['in_first_cycle_after_send']} (others: "
              f"cycles late, frames the send came before that cycle: {s['later_cycles']}); first changed sample at "
              f"cycle offset {s['offsets_in_cycle']}", flush=True)
    return {"period_frames": period, "summary": summary, "trials": rows}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--server", required=True)
    parser.add_argument("--client", required=True)
    parser.add_argument("--period", type=int, required=True)
    parser.add_argument("--rates", default="5000,10000,20000,40000,80000,160000")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--json")
    args = parser.parse_args()
    c = Client(args.port)
    st = status(c)
    assert st["state"] == "running" and st["rate"] == RATE and st["period"] == args.period, st
    clock_ticks = os.sysconf("SC_CLK_TCK")
    result = {"status_before": st}
    print("== /ping round trip", flush=True)
    result["round_trip"] = round_trip(c)
    print("  median {median_us:.0f} us, p99 {p99_us:.0f} us, max {max_us:.0f} us".format(**result["round_trip"]))
    print("== sustained /node/p/volume sets", flush=True)
    result["throughput"] = throughput(c, args, clock_ticks)
    print(f"  highest lossless rate: {result['throughput']['max_lossless_rate']}/s")
    print("== control latency (message -> changed audio), a. jack_rec capture, engine-clock reference", flush=True)
    result["latency"] = latency(c, args)
    print("== control latency, b. JACK probe client, jack_frame_time reference", flush=True)
    result["latency_probe"] = probe_latency(c, args)
    result["status_after"] = status(c)
    print(f"  xruns over the whole run: {result['status_after']['xruns'] - st['xruns']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
