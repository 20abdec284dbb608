#!/usr/bin/env python3
"""Seeded random soak test: valid live edits over OSC against a running `soundstage run`, with a model of the
graph that explains every /error the engine sends.

A private dummy JACK server and `soundstage run` (see common.py) start from a small patch; then, for --seconds,
about --rate messages per second of random edits chosen from the driver's own model of the engine (nodes with
their kinds and the values that matter, connections, buffers, recorders):
- nodes of every kind (mixer, player, audioplayer, input, reverb, delay, distortion, eq, timepitch, varispeed,
  environment) created with random valid parameters and freed (at most --max-nodes user nodes);
- connections made only "upstream to downstream" in a random order the model keeps (no cycles), and removed;
  the time-effect rules (docs/PATCH_FORMAT.md "Time effects": no live input upstream of a time effect, nothing
  upstream of one may feed outside its chain, an inserted timepitch is exempt) are evaluated by the model, so
  a refused connection (14) is predicted, never guessed;
- parameter sets within range; buffers loaded, scheduled and enqueued; transport; 3D moves of sources in
  environments, listener moves, rendering algorithms (HRTF rarely: its set may still be loading, which the
  model cannot see); recorders; time-tagged bundles 0-0.5 s ahead, one in ten followed at once by /node/free of a node
  they address (their requests may then fail: that is tracked); /patch/load of small patches every ~10 s (the model
  is then rebuilt from /node/list, /graph/list, /buffer/list and /node/<n>/params);
- a few deliberately invalid requests whose exact error code the model predicts (a cycle, freeing `main`, a
  value out of range ...).
Every request is recorded with what the model expects: success, a given error code, or "may fail" (a bundle or
worker job whose node was freed after it was sent). An /error the model cannot explain, a /done where it
predicted an error, or a graph that differs from the model at a /sync barrier (every 15 s) is reported with the
request and counted as unexplained.

Fails (exit 1, seed printed) when the engine exits, its log shows a sanitizer or glibc heap report, a /ping
(every 0.25 s) is not answered within 1 s, or an unexplained error occurred. Samples every 5 s: RSS, fds and
threads from /proc, the model's node count, xruns from /status. --idle only pings (an xrun baseline).
--period-changes S changes the JACK period every S seconds or so meanwhile, cycling 128, 1024, 64, 512 and
256 frames (off by default, so the hour's xruns stay comparable with an idle engine's; scripts/sanitize.sh
uses 8). The slower worker at short periods is how it found a /buffer/free that overtook a /buffer/load of
the same name.

Usage:  soak.py [--bin BIN] [--seconds 60] [--seed N] [--rate 175] [--max-nodes 40] [--json FILE] [--idle]
                [--no-timed-3d] [--trace FILE] [--ping-timeout 1.0] [--keep] [--period-changes 0]
--no-timed-3d keeps 3D and environment changes out of timed bundles: with it an engine that still had the
environment-voice use-after-free that repro.py shows survived, so the model could be checked for minutes.
--trace writes every packet sent and every message received, with times (to study an unexplained error).
A seed fixes the random choices, but the model also follows the engine's timing (worker jobs finishing,
bundles released), so two runs with one seed drift apart after a while.
The last line printed is `soak: 1 passed, 0 failed` or `soak: 0 passed, 1 failed`.
"""
import argparse
import collections
import json
import math
import os
import random
import struct
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the drivers
import common  # noqa: E402
from common import IMMEDIATELY, bundle, log, message  # noqa: E402

# MARK: Engine facts (docs/OSC.md, docs/PATCH_FORMAT.md, Sources/AudioGraph)

SOURCES = ("player", "audioplayer", "input")            # no input bus
EFFECTS = ("reverb", "delay", "distortion", "eq", "timepitch", "varispeed")
TIME_EFFECTS = ("timepitch", "varispeed")
MIXING = ("mixer", "player", "audioplayer", "input", "environment")  # volume, pan, fade
SOURCES_3D = ("mixer", "player", "audioplayer", "input")
ALGORITHMS = ("equalPowerPanning", "sphericalHead", "HRTF", "soundField", "vectorBasedPanning", "stereoPassThrough",
              "HRTFHQ", "auto")
SOURCE_MODES = ("spatializeIfMono", "bypass", "pointSource", "ambienceBed")
REVERB_PRESETS = ("smallRoom", "mediumRoom", "largeRoom", "mediumHall", "largeHall", "plate", "mediumChamber",
                  "largeChamber", "cathedral", "largeRoom2", "mediumHall2", "mediumHall3", "largeHall2")
DISTORTION_PRESETS = ("drumsBitBrush", "drumsBufferBeats", "drumsLoFi", "multiBrokenSpeaker",
                      "multiCellphoneConcert", "multiDecimated1", "multiDecimated2", "multiDecimated3",
                      "multiDecimated4", "multiDistortedFunk", "multiDistortedCubed", "multiDistortedSquared",
                      "multiEcho1", "multiEcho2", "multiEchoTight1", "multiEchoTight2", "multiEverythingIsBroken",
                      "speechAlienChatter", "speechCosmicInterference", "speechGoldenPi", "speechRadioTower",
                      "speechWaves")
FILTER_TYPES = ("parametric", "lowPass", "highPass", "resonantLowPass", "resonantHighPass", "bandPass", "bandStop",
                "lowShelf", "highShelf", "resonantLowShelf", "resonantHighShelf")
DISTANCE_MODELS = ("none", "inverse", "inverseClamped", "linear", "linearClamped", "exponent", "exponentClamped")
LAYOUTS = ("stereo", "quad", "5.1", "7.1", "octagon")

# Settable parameters and the ranges this driver draws from (inside the documented ranges; 'choice' from a list).
F = "float"
I = "int"
B = "bool"
C = "choice"
MIXING_PARAMS = {"volume": (F, 0, 1), "pan": (F, -1, 1)}
SPATIAL_PARAMS = {
    "positionX": (F, -20, 20), "positionY": (F, -5, 5), "positionZ": (F, -20, 20),
    "velocityX": (F, -30, 30), "velocityY": (F, -5, 5), "velocityZ": (F, -30, 30),
    "directionX": (F, -1, 1), "directionY": (F, -1, 1), "directionZ": (F, -1, 1),
    "coneInnerAngle": (F, 0, 360), "coneOuterAngle": (F, 0, 360), "coneOuterGain": (F, 0, 1),
    "reverbBlend": (F, 0, 1), "obstruction": (F, -100, 0), "occlusion": (F, -100, 0),
    "sourceMode": (C, SOURCE_MODES),
}
EFFECT_PARAMS = {
    "reverb": {"wetDryMix": (F, 0, 100), "preset": (C, REVERB_PRESETS), "bypass": (B,)},
    "delay": {"delayTime": (F, 0, 2), "feedback": (F, -100, 100), "lowPassCutoff": (F, 10, 24000),
              "wetDryMix": (F, 0, 100), "bypass": (B,)},
    "distortion": {"preGain": (F, -80, 20), "wetDryMix": (F, 0, 100), "preset": (C, DISTORTION_PRESETS),
                   "bypass": (B,)},
    "eq": {"globalGain": (F, -96, 24), "bypass": (B,)},
    "timepitch": {"rate": (F, 0.25, 4), "pitch": (F, -2400, 2400), "overlap": (F, 8, 8), "bypass": (B,)},
    "varispeed": {"rate": (F, 0.25, 4), "bypass": (B,)},
}
EQ_BAND_PARAMS = {"filterType": (C, FILTER_TYPES), "frequency": (F, 20, 24000), "bandwidth": (F, 0.05, 5),
                  "gain": (F, -96, 24), "bypass": (B,)}
ENV_PARAMS = {
    "listenerX": (F, -10, 10), "listenerY": (F, -3, 3), "listenerZ": (F, -10, 10),
    "listenerYaw": (F, -360, 360), "listenerPitch": (F, -90, 90), "listenerRoll": (F, -180, 180),
    "distanceModel": (C, DISTANCE_MODELS), "rolloffFactor": (F, 0, 10), "speedOfSound": (F, 200, 400),
    "dopplerFactor": (F, 0, 2), "reverb": (B,), "reverbPreset": (C, REVERB_PRESETS), "reverbLevel": (F, -40, 12),
    "reverbFilterType": (C, FILTER_TYPES), "reverbFilterFrequency": (F, 20, 20000),
    "reverbFilterBandwidth": (F, 0.05, 5), "reverbFilterGain": (F, -96, 24), "reverbFilterBypass": (B,),
    "outputVolume": (F, 0, 1),
}
MIXER_PARAMS = {"outputVolume": (F, 0, 1), "channels": (I, 1, 4)}
PLAYER_PARAMS = {"loop": (B,), "playing": (B,), "start": (I, 0, 40000), "frames": (I, 0, 48000)}
AUDIOPLAYER_PARAMS = {"numberOfLoops": (I, -1, 3), "currentTime": (F, 0, 3), "meteringEnabled": (B,)}
VOICE_PARAMS = {"bypass": (B,), "agc": (B,), "noiseSuppression": (B,), "inputMuted": (B,), "duckOthers": (B,),
                "duckLevel": (C, ("default", "min", "mid", "max")), "advancedDucking": (B,),
                "reference": (C, ("ports", "engine"))}

# Error codes (docs/OSC.md).
UNKNOWN_NODE, DUPLICATE, INVALID_NAME, UNKNOWN_KIND, NOT_ALLOWED = 10, 11, 12, 13, 14
UNKNOWN_PARAM, WRONG_TYPE, OUT_OF_RANGE, READ_ONLY = 20, 21, 22, 23
INVALID_BUS, CYCLE, NOT_CONNECTED = 30, 31, 32
UNKNOWN_BUFFER, FILE_ERROR, BUSY = 40, 42, 50
ENGINE_CODES = set(range(10, 60))

PING_EVERY_S = 0.25
PING_TIMEOUT_S = 1.0
SAMPLE_EVERY_S = 5.0
BARRIER_EVERY_S = 15.0
PATCH_EVERY_S = 10.0
HRTF_LOAD_GAP_S = 4.0       # at most one HRTF set load (about 0.3 s; a live engine loads it on a worker) per this many s
REPLY_TIMEOUT_S = 5.0       # a synchronous command must be answered within this
JOB_TIMEOUT_S = 30.0        # a worker job (decode, patch) must be answered within this
MAX_INSERTS = 4
MAX_TIMEPITCH = 3
MAX_INPUTS = 2
MAX_VOICE = 3
MAX_RECORDERS = 3


def done_key_for(address, args):
    """The arguments a `/done` for this request repeats after the address (docs/OSC.md), so a reply is matched
    to its own request, not to another one to the same address; None when it repeats nothing identifying."""
    if address in ("/graph/connect", "/graph/disconnect"):
        return list(args[:2])
    if address == "/node/new":
        return list(args[1:2])
    if address in ("/node/free", "/buffer/load", "/buffer/free", "/recorder/new", "/patch/load") or \
            address.endswith("/schedule/buffer") or address.endswith("/schedule/file"):
        return list(args[:1])
    return None


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def draw(rng, spec):
    """A random valid value for a parameter spec (floats stay inside the range after float32 rounding)."""
    kind = spec[0]
    if kind == B:
        return rng.random() < 0.5
    if kind == C:
        return rng.choice(spec[1])
    lo, hi = spec[1], spec[2]
    if kind == I:
        return rng.randint(lo, hi)
    if rng.random() < 0.05:
        return float(rng.choice((lo, hi)))  # the bounds used here are exact in float32
    v = round(rng.uniform(lo, hi), 4)
    while not lo <= f32(v) <= hi:
        v = round((v + (lo + hi) / 2) / 2, 4)
    return float(v)


# MARK: Model


class Node:
    def __init__(self, name, kind, rank):
        self.name = name
        self.kind = kind
        self.rank = rank          # connections only go from lower to higher rank (no cycles)
        self.ready = True         # False while an asynchronous /node/new (with a file) is on the worker
        self.insert = False
        self.bands = 4
        self.enable_rate = False
        self.has_material = False  # audioplayer
        self.metering = False      # audioplayer
        self.algorithm = "equalPowerPanning"
        self.hrtf_capable = False  # a mono player whose material and sourceMode never change
        self.ref_dist = 1.0        # environment
        self.max_dist = 100000.0
        self.hrtf_sets = set()     # environment: qualities whose HRTF set it has loaded
        self.enqueued = 0          # player: items queued since its last stop


class Recorder:
    def __init__(self, name, node, path):
        self.name = name
        self.node = node
        self.path = path
        self.phase = "stopped"    # stopped | recording | paused | timed (may have stopped itself) | busy
        self.metering = False
        self.file_exists = False


class Model:
    def __init__(self, rng):
        self.rng = rng
        self.nodes = {}
        self.edges = []           # (src, srcBus, dst, dstBus), in the order made
        self.buffers = {}         # name -> ready (False while its /buffer/load runs)
        self.recorders = {}
        self.freed = collections.defaultdict(list)    # node name -> times a free was sent
        self.created = collections.defaultdict(list)  # node name -> times a creation was sent
        self.buffer_freed = collections.defaultdict(list)
        self.patch_loads = []     # times a /patch/load was sent (it frees every node and buffer)
        self.reset_builtins()

    def reset_builtins(self):
        self.nodes = {"main": Node("main", "mixer", 1e9), "output": Node("output", "output", 2e9)}
        self.edges = [("main", 0, "output", 0)]

    def user_nodes(self):
        return [n for n in self.nodes.values() if n.name not in ("main", "output")]

    def ready_nodes(self, kinds=None):
        return [n for n in self.user_nodes() if n.ready and (kinds is None or n.kind in kinds)]

    def count(self, kind):
        return sum(1 for n in self.user_nodes() if n.kind == kind)

    def ready_buffers(self):
        return sorted(b for b, ready in self.buffers.items() if ready)

    # Graph rules (Sources/AudioGraph/Control/EngineCore+Graph.swift, EngineCore+TimeEffects.swift)

    @staticmethod
    def input_bus_count(kind):
        if kind in ("mixer", "environment"):
            return None
        if kind in SOURCES:
            return 0
        if kind == "voiceprocessor":
            return 2  # microphone, reference; a connection without a bus takes bus 0
        return 1  # effects, output

    def next_free_bus(self, dst):
        used = {e[3] for e in self.edges if e[2] == dst}
        bus = 0
        while bus in used:
            bus += 1
        return bus

    def path_exists(self, start, goal):
        if start == goal:
            return True
        seen, queue = {start}, [start]
        while queue:
            cur = queue.pop()
            for e in self.edges:
                if e[0] == cur and e[2] not in seen:
                    if e[2] == goal:
                        return True
                    seen.add(e[2])
                    queue.append(e[2])
        return False

    def time_domain_problem(self, edges, clocking=None):
        """Engine.timeDomainProblem: why `edges` cannot render, or None."""
        for name in sorted(self.nodes):
            node = self.nodes[name]
            if node.kind not in TIME_EFFECTS or (node.insert and name != clocking):
                continue
            upstream = {}
            stack = [(e[0], name) for e in edges if e[2] == name]
            while stack:
                nxt, via = stack.pop()
                if nxt in upstream:
                    continue
                upstream[nxt] = via
                stack += [(e[0], nxt) for e in edges if e[2] == nxt]
            for ancestor in sorted(upstream):
                if self.nodes[ancestor].kind == "input":
                    return f"live input {ancestor} upstream of {name}"
                if any(e[0] == ancestor and e[2] != name and e[2] not in upstream for e in edges):
                    return f"{ancestor} feeds {name} and something outside its chain"
        return None

    def predict_connect(self, src, dst):
        """(error code or None, the edge that would be made, the edges it replaces)."""
        if src not in self.nodes or dst not in self.nodes:
            return UNKNOWN_NODE, None, []
        if self.nodes[src].kind == "output":
            return INVALID_BUS, None, []
        count = self.input_bus_count(self.nodes[dst].kind)
        if count is None:
            bus = self.next_free_bus(dst)
        elif count == 0:
            return INVALID_BUS, None, []
        else:
            bus = 0
        if self.path_exists(dst, src):
            return CYCLE, None, []
        edge = (src, 0, dst, bus)
        if edge in self.edges:
            return None, edge, []
        replaced = [e for e in self.edges if e[2] == dst and e[3] == bus]
        candidate = [e for e in self.edges if e not in replaced] + [edge]
        if self.time_domain_problem(candidate):
            return NOT_ALLOWED, None, []
        return None, edge, replaced

    def apply_connect(self, edge, replaced):
        if edge is None:
            return
        for e in replaced:
            self.edges.remove(e)
        if edge not in self.edges:
            self.edges.append(edge)

    def remove_node(self, name, now):
        self.nodes.pop(name, None)
        self.edges = [e for e in self.edges if e[0] != name and e[2] != name]
        self.freed[name].append(now)

    def environments_fed_by(self, name):
        return [e[2] for e in self.edges if e[0] == name and self.nodes.get(e[2]) and
                self.nodes[e[2]].kind == "environment"]

    def freed_since(self, name, since):
        return any(t >= since for t in self.freed.get(name, ())) or any(t >= since for t in self.patch_loads)

    def recreated_since(self, name, since):
        return any(t >= since for t in self.created.get(name, ())) or any(t >= since for t in self.patch_loads)

    def buffer_freed_since(self, name, since):
        return any(t >= since for t in self.buffer_freed.get(name, ())) or any(t >= since for t in self.patch_loads)

    def fresh_rank(self, lo=0.0, hi=1.0):
        return self.rng.uniform(lo, hi)


# MARK: Expectations


class Pending:
    """What the model expects of one request.
    kind 'command': answered by /done or /error; 'set': answered only on failure (parameter sets, queries).
    expect: None (must succeed) or an error code the model predicts.
    deferred: nodes/buffers whose later free or re-creation explains a failure (bundles held for their time
    tag, worker jobs)."""

    def __init__(self, kind, address, args, expect, sent, deadline, done_key=None, nodes=(), buffers=(),
                 deferred=False, on_done=None, on_error=None, note="", not_before=0.0):
        self.kind = kind
        self.not_before = not_before  # a held bundle cannot be answered before its release
        self.address = address
        self.args = args
        self.expect = expect
        self.sent = sent
        self.deadline = deadline
        self.done_key = done_key
        self.nodes = tuple(nodes)
        self.buffers = tuple(buffers)
        self.deferred = deferred
        self.on_done = on_done
        self.on_error = on_error
        self.note = note

    def describe(self):
        args = " ".join(repr(a) for a in self.args)
        what = "success" if self.expect is None else f"error {self.expect}"
        extra = f" [{self.note}]" if self.note else ""
        return f"{self.address} {args} (model expected {what}{', deferred' if self.deferred else ''}){extra}"


# MARK: The soak


class Soak:
    def __init__(self, args, engine, client, workdir, files):
        self.args = args
        self.engine = engine
        self.c = client
        self.workdir = workdir
        self.files = files
        self.rng = random.Random(args.seed)
        self.model = Model(self.rng)
        self.pending = collections.deque()
        self.events = collections.deque()   # (message, time) from the receiver thread
        self.expected_errors = collections.Counter()
        self.unexplained = []
        self.unanswered_may_fail = 0
        self.unmatched_done = 0
        self.late = 0
        self.latest_status = None
        self.samples = []
        self.ops = collections.Counter()
        self.name_counter = 0
        self.rec_counter = 0
        self.last_hrtf_load = -1e9
        self.started = time.monotonic()
        self.resync_wanted = False
        self.latest_memory = None
        self.failure = None
        self.next_sweep = 0.0

    # Receiving (receiver thread): replies the model matches are queued; list items stay for wait_for.
    KEEP = {"/node/info", "/graph/edge", "/buffer/info", "/recorder/info", "/reply", "/synced"}

    def on_message(self, m, now):
        if m.address in ("/done", "/error", "/late", "/status.reply", "/status/memory.reply"):
            self.events.append((m, now))
            return True
        if m.address in self.KEEP or m.address.endswith("/param"):
            return False
        return True  # query replies (/node/x/volume, /recorder/x/status, …): not needed

    def now(self):
        return time.monotonic()

    # MARK: Sending with expectations

    def command(self, address, *args, expect=None, done_key=None, nodes=(), buffers=(), job=False, on_done=None,
                on_error=None, note=""):
        if done_key is None:
            done_key = done_key_for(address, args)
        t = self.now()
        self.pending.append(Pending("command", address, args, expect, t,
                                    t + (JOB_TIMEOUT_S if job else REPLY_TIMEOUT_S), done_key, nodes, buffers,
                                    deferred=job, on_done=on_done, on_error=on_error, note=note))
        self.c.send(address, *args)
        return 1

    def set(self, address, *args, expect=None, nodes=(), note=""):
        t = self.now()
        self.pending.append(Pending("set", address, args, expect, t, t + REPLY_TIMEOUT_S, nodes=nodes, note=note))
        self.c.send(address, *args)
        return 1

    # MARK: Matching replies

    def process_events(self):
        while self.events:
            m, t = self.events.popleft()
            if m.address == "/done":
                self.match_done(m, t)
            elif m.address == "/error":
                self.match_error(m, t)
            elif m.address == "/late":
                self.late += 1
            elif m.address == "/status.reply":
                p = m.params
                self.latest_status = {"state": p[0], "dsp": p[3], "xruns": p[4], "nodes": p[5]}
            elif m.address == "/status/memory.reply":
                p = m.params
                # -1: the allocator gives no figures (a sanitizer's); recorded as unknown.
                self.latest_memory = {"heap_in_use_kb": p[1] // 1024 if p[1] >= 0 else None,
                                      "heap_free_kb": p[2] // 1024 if p[2] >= 0 else None}
        now = self.now()
        if now >= self.next_sweep:
            self.next_sweep = now + 0.5
            keep = collections.deque()
            for p in self.pending:
                if p.deadline >= now:
                    keep.append(p)
                elif p.kind == "command":
                    self.no_reply(p)
            self.pending = keep

    def no_reply(self, p):
        if p.expect is not None or p.deferred:
            self.unanswered_may_fail += 1  # most likely an /error the engine's rate limit swallowed
        else:
            self.report_unexplained(p, None, "no /done or /error within the timeout (an /error may have been "
                                             "rate-limited)")

    def match_done(self, m, arrived):
        address = m.params[0] if m.params else ""
        rest = list(m.params[1:])
        candidates = [p for p in self.pending if p.kind == "command" and p.address == address
                      and p.not_before <= arrived
                      and (p.done_key is None or rest[:len(p.done_key)] == list(p.done_key))]
        # Requests that may succeed first; then a plain request (answered as soon as it is read) before a held
        # bundle or a worker job (answered later). Errors are matched by what explains them.
        candidates.sort(key=lambda p: (p.expect is not None and not p.deferred, p.deferred))
        for p in candidates[:1]:
            self.pending.remove(p)
            if p.expect is not None and not p.deferred:
                self.report_unexplained(p, m, f"/done although the model predicted error {p.expect}")
                self.resync_wanted = True
            if p.on_done:
                p.on_done(m)
            return
        self.unmatched_done += 1

    def explains(self, p, code):
        """True when the model can account for error `code` on request `p`."""
        if code == p.expect:
            return True
        if code == BUSY:
            return True  # documented: the command queue (or a player's schedule) is full; try again
        if p.deferred:
            for name in p.nodes:
                if self.model.freed_since(name, p.sent):
                    if code == UNKNOWN_NODE:
                        return True
                    if code in ENGINE_CODES and self.model.recreated_since(name, p.sent):
                        return True  # a new node of that name (maybe another kind) took the request
            for name in p.buffers:
                if code == UNKNOWN_BUFFER and self.model.buffer_freed_since(name, p.sent):
                    return True
        return False

    def match_error(self, m, arrived):
        address = m.params[0] if m.params else ""
        code = m.params[1] if len(m.params) > 1 else -1
        first = None
        for p in self.pending:
            if p.address != address or p.not_before > arrived:
                continue
            if first is None:
                first = p
            if self.explains(p, code):
                self.pending.remove(p)
                self.expected_errors[code] += 1
                if code == BUSY:
                    self.resync_wanted = True  # nothing changed, but the model assumed it did
                if p.on_error:
                    p.on_error(m)
                return
        if first is not None:
            self.pending.remove(first)
            self.report_unexplained(first, m, "the model cannot explain this error")
            if first.on_error:
                first.on_error(m)
        else:
            self.report_unexplained(None, m, "an /error for no request in flight with that address")
        self.resync_wanted = True

    def report_unexplained(self, pending, m, why):
        t = self.now() - self.started
        entry = {"t": round(t, 2), "why": why, "request": pending.describe() if pending else None,
                 "reply": [m.address] + list(m.params) if m is not None else None}
        if pending is not None:
            entry["nodes"] = {n: self.describe_node(n) for n in pending.nodes}
        self.unexplained.append(entry)
        if len(self.unexplained) <= 20:
            log(f"UNEXPLAINED at {t:.2f} s: {why}\n  request: {entry['request']}\n  reply:   {entry['reply']}"
                + (f"\n  model:   {entry.get('nodes')}" if entry.get("nodes") else ""))

    def describe_node(self, name):
        n = self.model.nodes.get(name)
        if n is None:
            return "absent"
        ins = [f"{e[0]}:{e[1]}" for e in self.model.edges if e[2] == name]
        outs = [f"{e[2]}:{e[3]}" for e in self.model.edges if e[0] == name]
        return f"{n.kind} ready={n.ready} insert={n.insert} in={ins} out={outs}"

    # MARK: Names and choices

    def new_name(self, kind):
        self.name_counter += 1
        return f"{kind[:3]}{self.name_counter}"

    def pick(self, items):
        return self.rng.choice(items) if items else None

    def weighted(self, table):
        total = sum(w for _, w in table)
        x = self.rng.uniform(0, total)
        for item, w in table:
            x -= w
            if x <= 0:
                return item
        return table[-1][0]

    def hrtf_budget(self):
        return self.now() - self.last_hrtf_load >= HRTF_LOAD_GAP_S

    # MARK: Operations (each returns the number of messages sent)

    def op_new_node(self):
        m = self.model
        if len(m.user_nodes()) >= self.args.max_nodes:
            return self.op_free_node()
        kind = self.weighted([("player", 20), ("audioplayer", 10), ("mixer", 12), ("environment", 10),
                              ("reverb", 6), ("delay", 6), ("distortion", 5), ("eq", 6), ("timepitch", 3),
                              ("varispeed", 4), ("input", 2), ("voiceprocessor", 3)])
        if kind == "timepitch" and m.count("timepitch") >= MAX_TIMEPITCH:
            kind = "varispeed"
        if kind == "input" and m.count("input") >= MAX_INPUTS:
            kind = "mixer"
        if kind == "voiceprocessor" and m.count("voiceprocessor") >= MAX_VOICE:
            kind = "delay"
        name = self.new_name(kind)
        node = Node(name, kind, m.fresh_rank(0.0, 0.3) if kind in SOURCES else m.fresh_rank(0.3, 0.99))
        params = []
        asynchronous = False
        buffers = m.ready_buffers()
        rng = self.rng
        if kind in MIXING:
            for key, spec in MIXING_PARAMS.items():
                if rng.random() < 0.3:
                    params += [key, draw(rng, spec)]
        if kind in SOURCES_3D:
            for key, spec in SPATIAL_PARAMS.items():
                if rng.random() < 0.15:
                    params += [key, draw(rng, spec)]
            if rng.random() < 0.3:
                node.algorithm = rng.choice([a for a in ALGORITHMS if a not in ("HRTF", "HRTFHQ")])
                params += ["renderingAlgorithm", node.algorithm]
        if kind == "player":
            mono = [b for b in buffers if b in ("mono",)]
            if mono and rng.random() < 0.25 and not any(n.hrtf_capable for n in m.user_nodes()):
                # The one HRTF-capable source: a mono player whose material and sourceMode stay as they are.
                node.hrtf_capable = True
                if "sourceMode" in params:
                    i = params.index("sourceMode")
                    del params[i:i + 2]
                params += ["buffer", "mono", "loop", True, "playing", True]
            elif rng.random() < 0.15:
                params += ["file", rng.choice([self.files["mono"], self.files["stereo"]]), "loop", True,
                           "playing", True]
                asynchronous = True
            elif buffers and rng.random() < 0.8:
                params += ["buffer", rng.choice(buffers), "loop", rng.random() < 0.8, "playing", rng.random() < 0.8]
                if rng.random() < 0.2:
                    params += ["start", rng.randint(0, 40000), "frames", rng.choice([0, rng.randint(1000, 48000)])]
        elif kind == "audioplayer":
            if rng.random() < 0.2:
                node.enable_rate = True
                params += ["enableRate", True]
                if rng.random() < 0.5:
                    params += ["rate", draw(rng, (F, 0.5, 2))]
            if rng.random() < 0.15:
                params += ["file", rng.choice([self.files["mono"], self.files["stereo"]])]
                node.has_material = True
                asynchronous = True
            elif buffers and rng.random() < 0.8:
                params += ["buffer", rng.choice(buffers)]
                node.has_material = True
            if node.has_material:
                params += ["numberOfLoops", rng.choice([-1, -1, 0, 2]), "playing", rng.random() < 0.8]
                if rng.random() < 0.2:
                    params += ["currentTime", draw(rng, (F, 0, 1.5))]
            if rng.random() < 0.2:
                node.metering = True
                params += ["meteringEnabled", True]
        elif kind == "mixer":
            if rng.random() < 0.3:
                params += ["outputVolume", draw(rng, (F, 0, 1))]
            if rng.random() < 0.2:
                params += ["channels", rng.choice([1, 2, 4])]
        elif kind in EFFECTS:
            for key, spec in EFFECT_PARAMS[kind].items():
                if rng.random() < 0.4:
                    params += [key, draw(rng, spec)]
            if rng.random() < 0.3:
                params += ["channels", rng.choice([1, 2])]
            if kind == "eq":
                node.bands = rng.randint(1, 6)
                params += ["bands", node.bands]
                for b in range(node.bands):
                    for key, spec in EQ_BAND_PARAMS.items():
                        if rng.random() < 0.3:
                            params += [f"band{b}.{key}", draw(rng, spec)]
            if kind != "varispeed" and rng.random() < 0.15 and self.insert_count() < MAX_INSERTS:
                node.insert = True
                params += ["insert", True]
        elif kind == "voiceprocessor":
            for key, spec in VOICE_PARAMS.items():
                if rng.random() < 0.3:
                    params += [key, draw(rng, spec)]
            for key, values in (("mode", ("quality", "lowComplexity")), ("micChannels", (1, 2)),
                                ("referenceChannels", (1, 2))):
                if rng.random() < 0.3:
                    params += [key, rng.choice(values)]
            # Its JACK ports count as an insert (at most MAX_INSERTS exposed nodes at once).
            if self.insert_count() < MAX_INSERTS and rng.random() < 0.5:
                node.insert = True
            else:
                params += ["ports", False]
        elif kind == "environment":
            if rng.random() < 0.3:
                params += ["layout", rng.choice(LAYOUTS)]
            elif rng.random() < 0.05:
                params += ["speakers", "-30, 30, 0, lfe, -110, 110"]
            for key, spec in ENV_PARAMS.items():
                if rng.random() < 0.15:
                    params += [key, draw(rng, spec)]
            if rng.random() < 0.3:
                ref = draw(rng, (F, 0.1, 5))
                mx = draw(rng, (F, 10, 1000))
                node.ref_dist, node.max_dist = f32(ref), f32(mx)
                params += ["referenceDistance", ref, "maximumDistance", mx]
        m.nodes[name] = node
        m.created[name].append(self.now())
        if asynchronous:
            node.ready = False

            def ready(_m, n=node):
                n.ready = True

            def failed(_m, name=name, n=node):
                if m.nodes.get(name) is n:
                    m.remove_node(name, self.now())

            return self.command("/node/new", kind, name, *params, done_key=[name], nodes=[name], job=True,
                                on_done=ready, on_error=failed)
        return self.command("/node/new", kind, name, *params, done_key=[name])

    def insert_count(self):
        return sum(1 for n in self.model.user_nodes() if n.insert)

    def op_free_node(self, name=None):
        m = self.model
        if name is None:
            node = self.pick(m.ready_nodes())
            if node is None:
                return 0
            name = node.name
        m.remove_node(name, self.now())  # a recorder on it keeps the name; its tap goes with the node
        return self.command("/node/free", name, done_key=[name])

    def op_connect(self):
        m = self.model
        nodes = m.ready_nodes()
        if not nodes:
            return 0
        # Prefer nodes with no outlet yet, so chains grow towards main.
        loose = [n for n in nodes if not any(e[0] == n.name for e in m.edges)]
        src = self.pick(loose) if loose and self.rng.random() < 0.7 else self.pick(nodes)
        dsts = [n for n in m.ready_nodes() + [m.nodes["main"]]
                if n.rank > src.rank and m.input_bus_count(n.kind) != 0 and n.name != "output"]
        if not dsts:
            return 0
        dst = self.pick(dsts)
        code, edge, replaced = m.predict_connect(src.name, dst.name)
        if code == NOT_ALLOWED and self.rng.random() < 0.8:
            return 0  # mostly valid edits; sometimes the refusal is exercised
        if code is None and src.hrtf_capable and dst.kind == "environment" and src.algorithm in ("HRTF", "HRTFHQ"):
            quality = "hq" if src.algorithm == "HRTFHQ" else "std"
            if quality not in dst.hrtf_sets:
                if not self.hrtf_budget():
                    return 0
                self.last_hrtf_load = self.now()  # the new voice loads the environment's set
                dst.hrtf_sets.add(quality)
        if code is None:
            m.apply_connect(edge, replaced)
        return self.command("/graph/connect", src.name, dst.name, expect=code, done_key=[src.name, dst.name])

    def op_disconnect(self):
        m = self.model
        edges = [e for e in m.edges if e != ("main", 0, "output", 0) and m.nodes[e[0]].ready and m.nodes[e[2]].ready]
        edge = self.pick(edges)
        if edge is None:
            return 0
        m.edges = [e for e in m.edges if not (e[0] == edge[0] and e[2] == edge[2])]
        return self.command("/graph/disconnect", edge[0], edge[2], done_key=[edge[0], edge[2]])

    def param_choices(self, node):
        """(name, spec) pairs that may be set on `node` now, each valid whatever else the model knows."""
        kind = node.kind
        out = []
        if kind in MIXING:
            out += list(MIXING_PARAMS.items())
        if kind in SOURCES_3D:
            out += [(k, s) for k, s in SPATIAL_PARAMS.items() if not (node.hrtf_capable and k == "sourceMode")]
        if kind == "mixer":
            out += list(MIXER_PARAMS.items())
        elif kind == "player":
            out += list(PLAYER_PARAMS.items())
        elif kind == "audioplayer":
            out += list(AUDIOPLAYER_PARAMS.items())
            if node.enable_rate:
                out.append(("rate", (F, 0.5, 2)))
        elif kind in EFFECTS:
            out += list(EFFECT_PARAMS[kind].items())
            if kind == "eq":
                for b in range(node.bands):
                    out += [(f"band{b}.{k}", s) for k, s in EQ_BAND_PARAMS.items()]
        elif kind == "environment":
            out += list(ENV_PARAMS.items())
        elif kind == "voiceprocessor":
            out += list(VOICE_PARAMS.items())
        return out

    def op_set_param(self, in_bundle=False):
        """A valid parameter set on a random node; with in_bundle, (key, value, node) for a bundle instead."""
        node = self.pick(self.model.ready_nodes() + [self.model.nodes["main"]])
        if node is None:
            return 0
        choices = self.param_choices(node)
        if not choices:
            return 0
        key, spec = self.pick(choices)
        value = draw(self.rng, spec)
        if node.kind == "audioplayer" and key == "playing" and value and not node.has_material:
            value = False
        if key == "sourceMode" and node.hrtf_capable:
            return 0
        if in_bundle:
            if key == "meteringEnabled":
                return 0  # the model could not know when it changes (power would race)
            return key, value, node
        if node.kind == "audioplayer" and key == "meteringEnabled":
            node.metering = value
        if node.kind == "environment" and self.rng.random() < 0.1:
            return self.op_distances(node)
        if node.kind in ("reverb", "delay", "distortion", "eq", "timepitch") and self.rng.random() < 0.03:
            return self.op_insert(node)
        return self.set(f"/node/{node.name}/{key}", value, nodes=[node.name])

    def op_distances(self, env):
        """referenceDistance and maximumDistance: each set is checked against the other's current value
        (reference <= maximum, else 22); the model keeps both."""
        sent = 0
        for key in self.rng.sample(["referenceDistance", "maximumDistance"], 2):
            if key == "referenceDistance":
                value = draw(self.rng, (F, 0.1, 5))
                expect = None if f32(value) <= env.max_dist else OUT_OF_RANGE
                if expect is None:
                    env.ref_dist = f32(value)
            else:
                value = draw(self.rng, (F, 10, 1000))
                expect = None if env.ref_dist <= f32(value) else OUT_OF_RANGE
                if expect is None:
                    env.max_dist = f32(value)
            sent += self.set(f"/node/{env.name}/{key}", value, expect=expect, nodes=[env.name])
        if self.rng.random() < 0.1:  # a probe: a reference beyond the maximum is refused
            sent += self.set(f"/node/{env.name}/referenceDistance", float(int(env.max_dist) + 1),
                             expect=OUT_OF_RANGE, nodes=[env.name])
        return sent

    def op_insert(self, node):
        m = self.model
        if node.insert:
            problem = m.time_domain_problem(m.edges, clocking=node.name) if node.kind == "timepitch" else None
            if problem is None:
                node.insert = False
            return self.set(f"/node/{node.name}/insert", False, expect=NOT_ALLOWED if problem else None,
                            nodes=[node.name], note=problem or "")
        if self.insert_count() >= MAX_INSERTS:
            return 0
        node.insert = True
        return self.set(f"/node/{node.name}/insert", True, nodes=[node.name])

    def op_move(self):
        m = self.model
        sources = [n for n in m.ready_nodes(SOURCES_3D) if m.environments_fed_by(n.name)]
        node = self.pick(sources) or self.pick(m.ready_nodes(SOURCES_3D))
        if node is None:
            return 0
        what = self.weighted([("position", 8), ("velocity", 1), ("direction", 1)])
        lim = {"position": 20, "velocity": 30, "direction": 1}[what]
        v = [draw(self.rng, (F, -lim, lim)) for _ in range(3)]
        return self.set(f"/node/{node.name}/{what}", *v, nodes=[node.name])

    def op_listener(self):
        env = self.pick(self.model.ready_nodes(("environment",)))
        if env is None:
            return 0
        r = self.rng.random()
        if r < 0.5:
            v = [draw(self.rng, (F, -10, 10)) for _ in range(3)]
            return self.set(f"/node/{env.name}/listener/position", *v, nodes=[env.name])
        if r < 0.85:
            return self.set(f"/node/{env.name}/listener/orientation", draw(self.rng, (F, -360, 360)),
                            draw(self.rng, (F, -90, 90)), draw(self.rng, (F, -180, 180)), nodes=[env.name])
        # forward and up: perpendicular unit vectors from a random yaw.
        a = self.rng.uniform(0, 2 * math.pi)
        fwd = [round(math.sin(a), 4), 0.0, round(-math.cos(a), 4)]
        return self.set(f"/node/{env.name}/listener/orientation", *fwd, 0.0, 1.0, 0.0, nodes=[env.name])

    def op_algorithm(self):
        m = self.model
        node = self.pick(m.ready_nodes(SOURCES_3D))
        if node is None:
            return 0
        choices = [a for a in ALGORITHMS if a not in ("HRTF", "HRTFHQ")]
        algorithm = self.rng.choice(choices)
        if node.hrtf_capable and self.rng.random() < 0.5:
            wanted = self.rng.choice(("HRTF", "HRTFHQ"))
            quality = "hq" if wanted == "HRTFHQ" else "std"
            envs = [m.nodes[e] for e in m.environments_fed_by(node.name)]
            loads = [e for e in envs if quality not in e.hrtf_sets]
            if len(loads) <= 1 and (not loads or self.hrtf_budget()):
                algorithm = wanted
                for e in loads:
                    e.hrtf_sets.add(quality)
                    self.last_hrtf_load = self.now()
        node.algorithm = algorithm
        return self.set(f"/node/{node.name}/renderingAlgorithm", algorithm, nodes=[node.name])

    def op_transport(self):
        m = self.model
        node = self.pick(m.ready_nodes(("player", "audioplayer")))
        if node is None:
            return 0
        verb = self.weighted([("play", 5), ("pause", 2), ("stop", 2)])
        expect = None
        if node.kind == "audioplayer" and verb == "play" and not node.has_material:
            expect = NOT_ALLOWED
        if verb == "stop":
            node.enqueued = 0
        return self.command(f"/node/{node.name}/{verb}", expect=expect, nodes=[node.name])

    def op_material(self):
        m = self.model
        buffers = m.ready_buffers()
        players = [n for n in m.ready_nodes(("player",)) if not n.hrtf_capable]
        aps = m.ready_nodes(("audioplayer",))
        r = self.rng.random()
        if r < 0.35 and players and buffers:
            node = self.pick(players)
            buf = self.pick(buffers)
            node.enqueued = 0
            options = ["loop"] if self.rng.random() < 0.7 else []
            return self.command(f"/node/{node.name}/schedule/buffer", buf, *options, done_key=[buf],
                                nodes=[node.name], buffers=[buf])
        if r < 0.6 and players and buffers:
            node = self.pick(players)
            if node.enqueued >= 24:
                node.enqueued = 0
                return self.command(f"/node/{node.name}/stop", nodes=[node.name])
            buf = self.pick(buffers)
            options = self.rng.choice(["", "loops", "interrupts", "interruptsAtLoop", "dataConsumed",
                                       "dataRendered,interrupts", "dataPlayedBack"])
            args = [buf, options]
            if self.rng.random() < 0.5:
                args += [self.rng.randint(0, 40000), self.rng.randint(1000, 48000)]
            node.enqueued += 1
            return self.command(f"/node/{node.name}/enqueue", *args, nodes=[node.name], buffers=[buf])
        if r < 0.8 and buffers and (players or aps):
            node = self.pick(players + aps)
            buf = self.pick(buffers)
            if node.kind == "audioplayer":
                node.has_material = True
            return self.set(f"/node/{node.name}/buffer", buf, nodes=[node.name])
        if r < 0.9 and buffers:
            buf = self.pick(buffers)
            return self.command("/sound/play", buf, draw(self.rng, (F, 0, 1)), draw(self.rng, (F, -1, 1)))
        if players and self.rng.random() < 0.5:
            # Worker jobs: the file is decoded off the OSC thread, then set (no reply on success for `file`).
            node = self.pick(players)
            if self.rng.random() < 0.5:
                path = self.rng.choice([self.files["mono"], self.files["stereo"]])
                return self.command(f"/node/{node.name}/schedule/file", path, done_key=[path], job=True,
                                    nodes=[node.name])
            path = self.rng.choice([self.files["mono"], self.files["stereo"]])
            t = self.now()
            self.pending.append(Pending("set", f"/node/{node.name}/file", (path,), None, t, t + JOB_TIMEOUT_S,
                                        nodes=[node.name], deferred=True))
            self.c.send(f"/node/{node.name}/file", path)
            return 1
        if aps:
            node = self.pick(aps)
            r2 = self.rng.random()
            if r2 < 0.4:
                return self.command(f"/node/{node.name}/prepare", nodes=[node.name])
            if r2 < 0.7:
                return self.command(f"/node/{node.name}/fade", draw(self.rng, (F, 0, 1)), draw(self.rng, (F, 0, 2)),
                                    nodes=[node.name])
            if node.metering:
                return self.set(f"/node/{node.name}/power", nodes=[node.name])
            if not node.has_material:
                return 0  # the file arrives later (worker): until then `play` would be refused
            path = self.rng.choice([self.files["mono"], self.files["stereo"]])
            t = self.now()
            self.pending.append(Pending("set", f"/node/{node.name}/file", (path,), None, t, t + JOB_TIMEOUT_S,
                                        nodes=[node.name], deferred=True))
            self.c.send(f"/node/{node.name}/file", path)
            return 1
        return 0

    def op_misc(self):
        m = self.model
        r = self.rng.random()
        if r < 0.3:
            node = self.pick(m.ready_nodes(EFFECTS))
            if node:
                return self.command(f"/node/{node.name}/reset", nodes=[node.name])
        if r < 0.6:
            node = self.pick(m.ready_nodes(MIXING))
            if node:
                return self.command(f"/node/{node.name}/fade", draw(self.rng, (F, 0, 1)), draw(self.rng, (F, 0, 3)),
                                    nodes=[node.name])
        node = self.pick(m.ready_nodes() + [m.nodes["main"]])
        if node is None:
            return 0
        # A query: answered on its own address (dropped by the receiver); only an /error would matter.
        choices = self.param_choices(node)
        if not choices:
            return 0
        key, _ = self.pick(choices)
        return self.set(f"/node/{node.name}/{key}", nodes=[node.name])

    def op_buffers(self):
        m = self.model
        if self.rng.random() < 0.7 or len(m.buffers) < 3:
            name = self.rng.choice(["b0", "b1", "b2", "b3", "mono", "tone"])
            if m.buffers.get(name) is False:
                return 0
            path = self.rng.choices([self.files["mono"], self.files["stereo"], self.files["long"]], [5, 5, 1])[0]
            if name == "mono":
                path = self.files["mono"]  # the HRTF-capable player relies on 'mono' staying mono
            if name not in m.buffers:
                m.buffers[name] = False

            def loaded(_m, name=name):
                if name in m.buffers:
                    m.buffers[name] = True

            def failed(_m, name=name):
                if m.buffers.get(name) is False:
                    del m.buffers[name]

            return self.command("/buffer/load", name, path, done_key=[name], job=True, on_done=loaded,
                                on_error=failed)
        candidates = [b for b in m.ready_buffers() if b not in ("mono",)]
        name = self.pick(candidates)
        if name is None:
            return 0
        del m.buffers[name]
        m.buffer_freed[name].append(self.now())
        # A free behind a load of the same name still running waits for it (answered as a worker job).
        behind_load = any(p.address == "/buffer/load" and p.args and p.args[0] == name for p in self.pending)
        return self.command("/buffer/free", name, done_key=[name], job=behind_load)

    def op_recorder(self):
        m = self.model
        rec = self.pick(list(m.recorders.values()))
        if rec is None or (len(m.recorders) < MAX_RECORDERS and self.rng.random() < 0.3):
            node = self.pick(m.ready_nodes() + [m.nodes["main"]])
            if node is None or node.kind == "output":
                return 0
            self.rec_counter += 1
            name = f"rec{self.rec_counter}"
            ext = self.rng.choice(["wav", "wav", "flac", "caf"])
            path = f"take{self.rec_counter}.{ext}"
            args = [name, node.name, path]
            if ext != "flac":
                args += ["encoding", "int16"]
            r = Recorder(name, node.name, path)
            if self.rng.random() < 0.3:
                args += ["metering", 1]
                r.metering = True
            m.recorders[name] = r
            return self.command("/recorder/new", *args, done_key=[name], nodes=[node.name])
        if rec.phase == "busy":
            return 0
        base = f"/recorder/{rec.name}"
        node_alive = rec.node in m.nodes and m.nodes[rec.node].ready
        if node_alive:
            verb = self.weighted([("record", 4), ("pause", 1), ("stop", 3), ("delete", 1), ("free", 1),
                                  ("status", 1), ("metering", 1), ("power", 1)])
        else:  # its node is gone: mostly tidy up (a take from 'stopped' would fail: 42)
            verb = self.weighted([("record", 1), ("stop", 2), ("free", 4), ("status", 1)])
        if verb == "delete" and not rec.file_exists and self.rng.random() < 0.8:
            verb = "status"
        if verb == "power" and not rec.metering and self.rng.random() < 0.8:
            verb = "metering"
        if verb == "record":
            timed = self.rng.random() < 0.4
            args = [draw(self.rng, (F, 0.2, 3))] if timed else []
            expect = None
            deferred = False
            if rec.phase == "stopped" and not node_alive:
                expect = FILE_ERROR  # "there is no node named …"
            elif not node_alive:
                # Timed: it may have stopped itself. Recording or paused: its node went (a patch load
                # frees every node) and took the recorder's tap with it. Either way it needs its node.
                deferred = True
            if expect is None:
                rec.phase = "timed" if timed else "recording"
                if not deferred:
                    rec.file_exists = True

            def started(_m, r=rec):
                r.file_exists = True

            def refused(_m, r=rec):
                r.phase = "stopped"

            sent = self.command(base + "/record", *args, expect=expect, on_done=started, on_error=refused,
                                note="its node is gone; the take may have ended" if deferred else "")
            if deferred:
                self.pending[-1].expect = FILE_ERROR  # …then 42 "there is no node named …"
                self.pending[-1].deferred = True
            return sent
        if verb == "pause":
            if rec.phase == "recording":
                rec.phase = "paused"
            return self.command(base + "/pause")
        if verb == "stop":
            rec.phase = "busy"

            def stopped(_m, r=rec):
                r.phase = "stopped"

            return self.command(base + "/stop", job=True, on_done=stopped, on_error=stopped)
        if verb == "delete":
            if rec.phase != "stopped":
                return 0
            expect = None if rec.file_exists else NOT_ALLOWED
            rec.file_exists = False
            return self.command(base + "/delete", expect=expect)
        if verb == "free":
            del m.recorders[rec.name]
            return self.command(base + "/free", job=True)
        if verb == "status":
            return self.set(base + "/status")
        if verb == "metering":
            rec.metering = self.rng.random() < 0.5
            return self.command(base + "/metering", 1 if rec.metering else 0)
        return self.set(base + "/power", expect=None if rec.metering else NOT_ALLOWED)

    def op_bundle(self):
        """1-4 timed requests on live nodes, 0-0.5 s ahead; one in ten is followed at once by freeing one of
        their nodes (the bundle is held until 0.1 s before its tag, so the free gets there first)."""
        m = self.model
        ahead = self.rng.choice([0.0, 0.02]) if self.rng.random() < 0.05 else self.rng.uniform(0.05, 0.5)
        deferred = ahead > 0.08  # held until 0.1 s before its tag: a free sent after it gets there first
        t = self.now()
        release = t + ahead - 0.1 - 0.003 if ahead > 0.1 else 0.0  # no reply can come before the release
        note = f"in a bundle {ahead:+.3f} s"
        contents = []
        targets = []
        for _ in range(self.rng.randint(1, 4)):
            r = self.rng.random()
            if r < 0.4:
                got = self.op_set_param(in_bundle=True)
                if not got:
                    continue
                key, value, node = got
                if self.args.no_timed_3d and (key in SPATIAL_PARAMS or node.kind == "environment"):
                    continue
                contents.append(message(f"/node/{node.name}/{key}", value))
                self.pending.append(Pending("set", f"/node/{node.name}/{key}", (value,), None, t, t + ahead + 3,
                                            nodes=[node.name], deferred=deferred, not_before=release, note=note))
                targets.append(node.name)
            elif r < 0.75:
                node = self.pick(m.ready_nodes(SOURCES_3D))
                if node is None or self.args.no_timed_3d:
                    continue
                v = [draw(self.rng, (F, -20, 20)) for _ in range(3)]
                contents.append(message(f"/node/{node.name}/position", *v))
                self.pending.append(Pending("set", f"/node/{node.name}/position", tuple(v), None, t, t + ahead + 3,
                                            nodes=[node.name], deferred=deferred, not_before=release, note=note))
                targets.append(node.name)
            elif r < 0.92:
                node = self.pick([n for n in m.ready_nodes(("player", "audioplayer"))
                                  if n.kind == "player" or n.has_material])
                if node is None:
                    continue
                verb = self.rng.choice(["play", "play", "pause", "stop"])
                contents.append(message(f"/node/{node.name}/{verb}"))
                self.pending.append(Pending("command", f"/node/{node.name}/{verb}", (), None, t, t + ahead + 5,
                                            nodes=[node.name], deferred=deferred, not_before=release, note=note))
                targets.append(node.name)
            else:
                node = self.pick([n for n in m.ready_nodes(("player",)) if not n.hrtf_capable])
                buf = self.pick(m.ready_buffers())
                if node is None or buf is None:
                    continue
                contents.append(message(f"/node/{node.name}/schedule/buffer", buf))
                self.pending.append(Pending("command", f"/node/{node.name}/schedule/buffer", (buf,), None, t,
                                            t + ahead + 5, done_key=[buf], nodes=[node.name], buffers=[buf],
                                            deferred=deferred, not_before=release, note=note))
                targets.append(node.name)
        if not contents:
            return 0
        tag = IMMEDIATELY if ahead == 0.0 and self.rng.random() < 0.5 else time.time() + ahead
        packet = bundle(tag, *contents)
        self.c.send_packet(packet)
        sent = len(contents)
        if deferred and self.rng.random() < 0.1:
            victim = self.rng.choice(targets)
            if victim in m.nodes and victim not in ("main", "output") and m.nodes[victim].ready:
                sent += self.op_free_node(victim)
        return sent

    def op_invalid(self):
        """A request the model knows must fail, with the exact code."""
        m = self.model
        r = self.rng.randrange(12)
        nodes = m.ready_nodes()
        if r == 0:
            return self.command("/node/free", "main", expect=NOT_ALLOWED)
        if r == 1:
            e = self.pick([e for e in m.edges if e[2] != "output"])
            if e is not None:
                code, _, _ = m.predict_connect(e[2], e[0])  # a cycle (31), or a bus the node lacks (30)
                if code is not None:
                    return self.command("/graph/connect", e[2], e[0], expect=code)
        if r == 2 and len(nodes) >= 2:
            a, b = self.rng.sample(nodes, 2)
            if not any(e[0] == a.name and e[2] == b.name for e in m.edges):
                return self.command("/graph/disconnect", a.name, b.name, expect=NOT_CONNECTED)
        if r == 3:
            node = self.pick(m.ready_nodes(MIXING))
            if node:
                return self.set(f"/node/{node.name}/volume", 1.5, expect=OUT_OF_RANGE, nodes=[node.name])
        if r == 4 and nodes:
            node = self.pick(nodes)
            return self.set(f"/node/{node.name}/noSuchParameter", 1.0, expect=UNKNOWN_PARAM, nodes=[node.name])
        if r == 5:
            return self.set("/node/ghost_never_made/volume", 0.5, expect=UNKNOWN_NODE)
        if r == 6:
            node = self.pick(m.ready_nodes(("player", "input")))
            if node:
                return self.set(f"/node/{node.name}/channels", 1, expect=READ_ONLY, nodes=[node.name])
        if r == 7:
            node = self.pick(m.ready_nodes(MIXING))
            if node:
                return self.set(f"/node/{node.name}/volume", "loud", expect=WRONG_TYPE, nodes=[node.name])
        if r == 8:
            return self.command("/node/new", "oscillator", "osc_never", expect=UNKNOWN_KIND)
        if r == 9 and nodes:
            node = self.pick(nodes)
            kind = self.rng.choice(["mixer", "reverb"])
            return self.command("/node/new", kind, node.name, expect=DUPLICATE)
        if r == 10:
            node = self.pick(m.ready_nodes(EFFECTS + ("mixer", "environment")))
            if node:
                return self.command(f"/node/{node.name}/play", expect=NOT_ALLOWED, nodes=[node.name])
        if r == 11:
            env = self.pick(m.ready_nodes(("environment",)))
            if env:
                return self.set(f"/node/{env.name}/listener/orientation", 0.0, 0.0, -1.0, 0.0, 0.0, -2.0,
                                expect=OUT_OF_RANGE, nodes=[env.name])
        return self.command("/buffer/free", "no_such_buffer", expect=UNKNOWN_BUFFER)

    # MARK: Barriers, patch loads, the model from the engine

    def wait_quiet(self, what, predicate, timeout):
        """Waits (pinging, watching the engine) until predicate() holds; False on timeout."""
        end = self.now() + timeout
        while self.now() < end:
            self.tick_watch()
            self.process_events()
            if self.failure or predicate():
                return not self.failure
            time.sleep(0.005)
        return False

    def sync(self, timeout=15.0):
        ident = self.rng.randrange(1, 1 << 30)
        self.c.send("/sync", ident)
        got = []

        def synced():
            m = self.c.wait_for(lambda m: m.address == "/synced" and m.params == [ident], 0)
            if m is not None:
                got.append(m)
            return bool(got)

        return self.wait_quiet("/sync", synced, timeout)

    def fetch(self, address, item):
        self.c.send(address)
        result = []

        def done():
            end = self.c.wait_for(lambda m: m.address == "/reply" and m.params == [address], 0)
            if end is None:
                return False
            with self.c.lock:
                items = [m for m in self.c.inbox if m.address == item]
                for m in items:
                    self.c.inbox.remove(m)
            result.append([m.params for m in items])
            return True

        if not self.wait_quiet(address, done, 10.0):
            return None
        return result[0]

    def truth(self, with_params):
        """The engine's nodes, connections, buffers (and each node's parameter values)."""
        nodes = self.fetch("/node/list", "/node/info")
        edges = self.fetch("/graph/list", "/graph/edge")
        buffers = self.fetch("/buffer/list", "/buffer/info")
        if nodes is None or edges is None or buffers is None:
            return None
        params = {}
        if with_params:
            for info in nodes:
                name = info[0]
                if name in ("output",):
                    continue
                got = self.fetch(f"/node/{name}/params", f"/node/{name}/param")
                if got is None:
                    return None
                params[name] = {p[0]: p[6] for p in got}
        parsed = []
        for src, dst in edges:
            if ":" in src and src.rsplit(":", 1)[1].isdigit() and ":" in dst and dst.rsplit(":", 1)[1].isdigit():
                s, sb = src.rsplit(":", 1)
                d, db = dst.rsplit(":", 1)
                parsed.append((s, int(sb), d, int(db)))
        return {"nodes": {i[0]: i[1] for i in nodes}, "edges": parsed, "buffers": {b[0] for b in buffers},
                "params": params}

    def barrier(self, reason):
        """/sync, then compare the model with the engine; differences are unexplained (model drift)."""
        if not self.sync():
            if not self.failure:
                self.fail(f"/sync did not answer within 15 s ({reason})")
            return
        self.process_events()
        truth = self.truth(with_params=False)
        if truth is None:
            if not self.failure:
                self.fail(f"a list request did not complete ({reason})")
            return
        m = self.model
        model_nodes = {n.name: n.kind for n in m.nodes.values()}
        model_edges = set(m.edges)
        diffs = []
        for name in sorted(set(model_nodes) | set(truth["nodes"])):
            if model_nodes.get(name) != truth["nodes"].get(name):
                diffs.append(f"node {name}: model {model_nodes.get(name)}, engine {truth['nodes'].get(name)}")
        for e in sorted(model_edges ^ set(truth["edges"])):
            where = "model only" if e in model_edges else "engine only"
            diffs.append(f"edge {e[0]}:{e[1]} -> {e[2]}:{e[3]} ({where})")
        model_buffers = {b for b, ready in m.buffers.items() if ready}
        for b in sorted(model_buffers ^ truth["buffers"]):
            diffs.append(f"buffer {b} ({'model only' if b in model_buffers else 'engine only'})")
        if diffs and not self.resync_wanted:
            entry = {"t": round(self.now() - self.started, 2), "why": f"model and engine differ at a barrier "
                     f"({reason})", "request": None, "reply": diffs[:20]}
            self.unexplained.append(entry)
            log(f"UNEXPLAINED at {entry['t']} s: {entry['why']}:\n  " + "\n  ".join(diffs[:20]))
        if diffs or self.resync_wanted:
            self.rebuild(with_params=True)
        self.resync_wanted = False

    def rebuild(self, with_params=True, fresh=False):
        """The model from the engine (after a patch load, fresh: every node is new; or after a discrepancy)."""
        truth = self.truth(with_params=with_params)
        if truth is None:
            if not self.failure:
                self.fail("a list request did not complete while rebuilding the model")
            return
        m = self.model
        old = m.nodes
        m.reset_builtins()
        # Ranks: a topological order of the engine's graph (sources first), main and output last.
        names = [n for n in truth["nodes"] if n not in ("main", "output")]
        indegree = {n: 0 for n in names}
        for e in truth["edges"]:
            if e[2] in indegree and e[0] in indegree:
                indegree[e[2]] += 1
        order, ready = [], sorted(n for n in names if indegree[n] == 0)
        self.rng.shuffle(ready)
        while ready:
            n = ready.pop()
            order.append(n)
            for e in truth["edges"]:
                if e[0] == n and e[2] in indegree:
                    indegree[e[2]] -= 1
                    if indegree[e[2]] == 0:
                        ready.append(e[2])
        order += [n for n in names if n not in order]
        ranks = sorted(self.rng.uniform(0.0, 0.99) for _ in order)
        for name, rank in zip(order, ranks):
            kind = truth["nodes"][name]
            node = Node(name, kind, rank)
            p = truth["params"].get(name, {})
            previous = old.get(name)
            node.insert = bool(p.get("insert", False))
            node.bands = sum(1 for k in p if k.startswith("band") and k.endswith(".gain")) or 4
            node.enable_rate = bool(p.get("enableRate", False))
            node.has_material = (p.get("duration") or 0) > 0 or bool(p.get("buffer")) or bool(p.get("file"))
            node.metering = bool(p.get("meteringEnabled", False))
            node.algorithm = p.get("renderingAlgorithm", "equalPowerPanning")
            if kind == "environment":
                node.ref_dist = f32(p.get("referenceDistance", 1.0))
                node.max_dist = f32(p.get("maximumDistance", 100000.0))
            if previous is not None and previous.kind == kind and not fresh:
                node.hrtf_sets = previous.hrtf_sets
                node.hrtf_capable = previous.hrtf_capable
                node.enqueued = previous.enqueued
            m.nodes[name] = node
        m.edges = list(truth["edges"])
        m.buffers = {b: True for b in truth["buffers"]}

    def patch_load(self):
        name = self.rng.choice(["patch_scene.yaml", "patch_tape.yaml", "start.yaml"])
        m = self.model
        m.patch_loads.append(self.now())
        for n in m.user_nodes():
            m.freed[n.name].append(self.now())
        outcome = []
        t = self.now()
        self.pending.append(Pending("command", "/patch/load", (name,), None, t, t + JOB_TIMEOUT_S,
                                    done_key=[name], on_done=lambda msg: outcome.append("done"),
                                    on_error=lambda msg: outcome.append("error")))
        self.c.send("/patch/load", name)
        self.ops["patch_load"] += 1
        if not self.wait_quiet("/patch/load", lambda: bool(outcome), JOB_TIMEOUT_S):
            if not self.failure:
                self.fail(f"/patch/load {name} did not finish within {JOB_TIMEOUT_S:.0f} s")
            return
        if self.sync():
            self.process_events()
            self.rebuild(with_params=True, fresh=True)
            self.resync_wanted = False

    # MARK: Watching the engine

    def fail(self, reason):
        if self.failure is None:
            self.failure = reason

    def tick_watch(self):
        now = self.now()
        if now >= self.next_ping:
            self.c.ping()
            self.next_ping = now + PING_EVERY_S
        if not self.engine.alive():
            self.fail(f"the engine {self.engine.exit_description()}")
            return
        overdue = self.c.overdue_ping(self.args.ping_timeout)
        if overdue:
            self.fail(f"/ping {overdue[0]} unanswered after {overdue[1]:.2f} s")
            return
        if now >= self.next_sample:
            self.sample()
            self.next_sample = now + SAMPLE_EVERY_S

    def sample(self):
        reading = common.proc_sample(self.engine.pid)
        if reading is None:
            return
        if self.engine.crash_lines():
            self.fail("the engine's log reports memory trouble (sanitizer or heap check)")
        status = self.latest_status or {}
        memory = self.latest_memory or {}
        self.samples.append({"t": round(self.now() - self.started, 2), "rss_kb": reading["rss_kb"],
                             "fds": reading["fds"], "threads": reading["threads"],
                             "nodes": len(self.model.user_nodes()), "xruns": status.get("xruns"),
                             "dsp": round(status["dsp"], 1) if status.get("dsp") is not None else None,
                             "heap_in_use_kb": memory.get("heap_in_use_kb"),
                             "heap_free_kb": memory.get("heap_free_kb")})
        self.c.send("/status")
        self.c.send("/status/memory")

    # MARK: The run

    OPS = (("set_param", 30), ("move", 15), ("listener", 4), ("bundle", 6), ("connect", 9), ("disconnect", 4),
           ("new_node", 6), ("free_node", 3), ("transport", 5), ("material", 5), ("buffers", 1), ("recorder", 2),
           ("algorithm", 2), ("misc", 2), ("invalid", 0.6))

    def run(self):
        self.next_ping = self.now()
        self.next_sample = self.now() + 1e9  # the first sample once the model is built
        self.c.send("/status")
        self.rebuild(with_params=True)
        self.next_sample = self.now()
        deadline = self.started + self.args.seconds
        next_patch = self.started + PATCH_EVERY_S * self.rng.uniform(0.7, 1.3)
        next_barrier = self.started + BARRIER_EVERY_S
        next_send = self.now()
        while self.now() < deadline and not self.failure:
            self.tick_watch()
            self.process_events()
            if self.failure:
                break
            if self.args.idle:
                time.sleep(0.01)
                continue
            now = self.now()
            if now >= next_patch and deadline - now > 3:
                self.patch_load()
                next_patch = self.now() + PATCH_EVERY_S * self.rng.uniform(0.7, 1.3)
                next_barrier = self.now() + BARRIER_EVERY_S
                continue
            if now >= next_barrier or self.resync_wanted:
                self.barrier("periodic" if not self.resync_wanted else "after a discrepancy")
                next_barrier = self.now() + BARRIER_EVERY_S
                continue
            # Pace: --rate messages per second on average (no catching up after a barrier).
            if now < next_send:
                time.sleep(min(next_send - now, 0.01))
                continue
            op = self.weighted(self.OPS)
            sent = getattr(self, "op_" + op)()
            if sent:
                self.ops[op] += 1
                next_send = max(next_send, now - 0.05) + sent / self.args.rate
        if not self.failure and not self.args.idle:
            # Quiesce: the last bundles run, every request is answered, the model still matches.
            self.wait_quiet("settle", lambda: False, 0.7)
            self.barrier("final")
            self.wait_quiet("settle", lambda: False, 0.3)
            self.process_events()
        if not self.failure:
            self.tick_watch()
            self.sample()
        self.elapsed = self.now() - self.started


def write_patches(workdir, files):
    start = f"""# Written by Tests/Soak/soak.py: the start patch.
version: 1
engine: {{ sampleRate: 48000, outputs: 2, inputs: 2 }}
buffers:
  - {{ name: tone, file: {files['stereo']} }}
  - {{ name: mono, file: {files['mono']} }}
nodes:
  - {{ name: p, kind: player, params: {{ buffer: tone, loop: true, playing: true, volume: 0.5 }} }}
  - {{ name: env, kind: environment }}
  - {{ name: s, kind: player, params: {{ buffer: mono, loop: true, playing: true, renderingAlgorithm: sphericalHead,
       positionZ: -1 }} }}
connections:
  - {{ from: p, to: main }}
  - {{ from: env, to: main }}
  - {{ from: s, to: env }}
"""
    scene = f"""# Written by Tests/Soak/soak.py: a scene loaded with /patch/load.
version: 1
engine: {{ sampleRate: 48000, outputs: 2 }}
buffers:
  - {{ name: tone, file: {files['stereo']} }}
  - {{ name: mono, file: {files['mono']} }}
  - name: beep
    generate: {{ waveform: sine, frequency: 880, duration: 2.0, amplitude: 0.3 }}
nodes:
  - {{ name: env, kind: environment, params: {{ reverb: true, reverbPreset: largeRoom, referenceDistance: 2 }} }}
  - {{ name: a, kind: player, params: {{ buffer: mono, loop: true, playing: true, renderingAlgorithm: sphericalHead,
       positionX: -1 }} }}
  - {{ name: b, kind: audioplayer, params: {{ buffer: beep, numberOfLoops: -1, playing: true, positionX: 1,
       sourceMode: pointSource }} }}
  - {{ name: sub, kind: mixer }}
  - {{ name: verb, kind: reverb, params: {{ wetDryMix: 30 }} }}
connections:
  - {{ from: a, to: env }}
  - {{ from: b, to: env }}
  - {{ from: env, to: sub }}
  - {{ from: sub, to: verb }}
  - {{ from: verb, to: main }}
"""
    tape = f"""# Written by Tests/Soak/soak.py: time effects, loaded with /patch/load.
version: 1
engine: {{ sampleRate: 48000, outputs: 2 }}
buffers:
  - {{ name: tone, file: {files['stereo']} }}
  - {{ name: mono, file: {files['mono']} }}
nodes:
  - {{ name: deck, kind: player, params: {{ buffer: tone, loop: true, playing: true }} }}
  - {{ name: slow, kind: varispeed, params: {{ rate: 0.8 }} }}
  - {{ name: deck2, kind: player, params: {{ buffer: mono, loop: true, playing: true }} }}
  - {{ name: stretch, kind: timepitch, params: {{ rate: 1.25, pitch: 200 }} }}
  - {{ name: q, kind: eq, params: {{ bands: 2, band0.bypass: false, band0.filterType: lowPass,
       band0.frequency: 3000 }} }}
  - {{ name: echo, kind: delay, params: {{ delayTime: 0.25, feedback: 30, wetDryMix: 25 }} }}
connections:
  - {{ from: deck, to: slow }}
  - {{ from: slow, to: q }}
  - {{ from: q, to: main }}
  - {{ from: deck2, to: stretch }}
  - {{ from: stretch, to: echo }}
  - {{ from: echo, to: main }}
"""
    common.write_file(workdir, "patch_scene.yaml", scene)
    common.write_file(workdir, "patch_tape.yaml", tape)
    return start


def summarize(soak, args, engine, client, crashed):
    samples = soak.samples
    cut = soak.elapsed / 3.0
    tail = [s for s in samples if s["t"] >= cut]
    ts = [s["t"] for s in tail]
    slopes = {k + "_per_min": (round(v, 3) if v is not None else None)
              for k, v in (("rss_kb", common.slope_per_minute(ts, [s["rss_kb"] for s in tail])),
                           ("fds", common.slope_per_minute(ts, [s["fds"] for s in tail])),
                           ("threads", common.slope_per_minute(ts, [s["threads"] for s in tail])),
                           ("heap_in_use_kb", common.slope_per_minute(ts, [s.get("heap_in_use_kb") for s in tail])),
                           ("nodes", common.slope_per_minute(ts, [s["nodes"] for s in tail])))}
    rtt = client.rtt_stats_ms()
    xruns = None
    if soak.latest_status:
        xruns = soak.latest_status.get("xruns")
    sent = client.sent_messages
    return {
        "seed": args.seed, "mode": "idle" if args.idle else "edits", "seconds": round(soak.elapsed, 2),
        "binary": args.bin, "messages_sent": sent, "messages_per_second": round(sent / max(soak.elapsed, 1e-9), 1),
        "operations": dict(soak.ops),
        "expected_errors_by_code": {str(k): v for k, v in sorted(soak.expected_errors.items())},
        "late_bundles": soak.late, "unanswered_may_fail": soak.unanswered_may_fail,
        "unmatched_done": soak.unmatched_done,
        "unexplained_errors": len(soak.unexplained), "unexplained": soak.unexplained[:50],
        "crashes": 1 if crashed else 0, "failure": soak.failure,
        "ping_ms": {"p50": rtt["p50"], "p99": rtt["p99"], "max": rtt["max"], "count": rtt["count"]},
        "xruns": xruns, "samples": samples, "slopes_last_two_thirds": slopes,
    }


class PeriodChanger:
    """Changes the private server's period with `jack_bufsize` every `interval` seconds (0: never), as a
    user does mid-session: the engine's port work and other requests to the server then meet the
    server's own reconfiguration and the notifications it sends."""

    SIZES = (128, 1024, 64, 512, 256)

    def __init__(self, server, interval, seed):
        self.server = server
        self.interval = interval
        self.rng = random.Random(seed)
        self.sizes = []  # the periods set, in order
        self._stop = threading.Event()
        self._thread = None

    def start(self):
        if self.interval > 0:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()

    def _run(self):
        env = dict(os.environ, JACK_DEFAULT_SERVER=self.server, JACK_NO_START_SERVER="1")
        while not self._stop.wait(self.interval * self.rng.uniform(0.7, 1.3)):
            size = self.SIZES[len(self.sizes) % len(self.SIZES)]
            subprocess.run(["jack_bufsize", str(size)], env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=20)
            self.sizes.append(size)

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=25)


def run(args):
    workdir = common.make_workdir("soundstage-soak-")
    files = common.make_audio(workdir)
    start = write_patches(workdir, files)
    log(f"soak: seed {args.seed}, {args.seconds:g} s, {'idle' if args.idle else f'{args.rate:g} msg/s'}, "
        f"binary {args.bin}")
    try:
        stack, jack, engine = common.start_stack(args.bin, start, workdir, "soak")
    except RuntimeError as e:
        log(f"FAIL: {e}")
        log("soak: 0 passed, 1 failed")
        return 1
    soak = None
    with stack:
        soak = Soak(args, engine, None, workdir, files)
        client = stack.push(common.Client(engine.port, on_message=soak.on_message))
        if args.trace:
            client.trace = open(args.trace, "w")
        soak.c = client
        log(f"soundstage pid {engine.pid}, OSC port {engine.port}, JACK server {jack.name}, work folder {workdir}")
        periods = PeriodChanger(jack.name, 0 if args.idle else args.period_changes, args.seed)
        try:
            periods.start()
            soak.run()
        except KeyboardInterrupt:
            soak.fail("interrupted")
            soak.elapsed = soak.now() - soak.started
        finally:
            periods.stop()
        if periods.sizes:
            log(f"period changes: {len(periods.sizes)} ({', '.join(str(f) for f in periods.sizes)} frames)")
        time.sleep(0.2)
        crashed = not engine.alive() or bool(engine.crash_lines())
        if crashed and soak.failure is None:
            soak.fail(f"the engine {engine.exit_description()}")
        result = summarize(soak, args, engine, client, crashed)
        ok = soak.failure is None and not soak.unexplained
        print_summary(result)
        if not ok:
            time.sleep(0.3)
            log(f"FAIL (seed {args.seed}): {soak.failure or f'{len(soak.unexplained)} unexplained error(s)'}")
            excerpt = engine.crash_excerpt()
            if excerpt:
                log(f"crash report (excerpt):\n{excerpt}\n")
            if crashed or soak.failure:
                log(f"last 60 lines of {engine.log_path}:\n{engine.log_tail(60)}")
            log(f"reproduce with: {sys.argv[0]} --bin {args.bin} --seed {args.seed} --seconds {args.seconds:g}"
                + (f" --rate {args.rate:g}" if args.rate != 175 else "")
                + (f" --max-nodes {args.max_nodes}" if args.max_nodes != 40 else "")
                + (" --no-timed-3d" if args.no_timed_3d else "") + (" --idle" if args.idle else ""))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    common.remove_workdir(workdir, keep=args.keep or not ok)
    log("soak: 1 passed, 0 failed" if ok else "soak: 0 passed, 1 failed")
    return 0 if ok else 1


def print_summary(r):
    log(f"summary: seed {r['seed']}, {r['mode']}, {r['seconds']} s, {r['messages_sent']} messages "
        f"({r['messages_per_second']}/s)")
    if r["operations"]:
        log("  operations: " + ", ".join(f"{k} {v}" for k, v in sorted(r["operations"].items())))
    log(f"  expected errors by code: {r['expected_errors_by_code'] or 'none'}; /late: {r['late_bundles']}; "
        f"unanswered may-fail requests: {r['unanswered_may_fail']}; unmatched /done: {r['unmatched_done']}")
    log(f"  unexplained errors: {r['unexplained_errors']}; crashes: {r['crashes']}")
    p = r["ping_ms"]
    log(f"  ping ms: p50 {p['p50']} p99 {p['p99']} max {p['max']} ({p['count']} answered); xruns: {r['xruns']}")
    if r["samples"]:
        first, last = r["samples"][0], r["samples"][-1]
        log(f"  rss {first['rss_kb']} -> {last['rss_kb']} kB, fds {first['fds']} -> {last['fds']}, "
            f"threads {first['threads']} -> {last['threads']}, nodes {first['nodes']} -> {last['nodes']} "
            f"({len(r['samples'])} samples)")
    s = r["slopes_last_two_thirds"]
    log(f"  slopes over the last 2/3 (per minute): rss {s['rss_kb_per_min']} kB, fds {s['fds_per_min']}, "
        f"threads {s['threads_per_min']}, heap in use {s['heap_in_use_kb_per_min']} kB, nodes {s['nodes_per_min']}")
    if r["samples"] and r["samples"][-1].get("heap_in_use_kb") is not None:
        first, last = r["samples"][0], r["samples"][-1]
        log(f"  heap in use {first.get('heap_in_use_kb')} -> {last['heap_in_use_kb']} kB, "
            f"heap free {first.get('heap_free_kb')} -> {last['heap_free_kb']} kB")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", default=common.default_binary(), help="soundstage binary (default: %(default)s)")
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--seed", type=int, default=None, help="default: random (printed)")
    p.add_argument("--period-changes", type=float, default=0.0,
                   help="seconds between JACK period changes, 128/1024/64/512/256 frames in turn (default: 0, "
                        "none)")
    p.add_argument("--rate", type=float, default=175.0, help="messages per second (default: %(default)s)")
    p.add_argument("--ping-timeout", type=float, default=PING_TIMEOUT_S,
                   help="seconds a /ping may take (default: %(default)s; sanitizer builds may need more)")
    p.add_argument("--max-nodes", type=int, default=40, help="user nodes at most (default: %(default)s)")
    p.add_argument("--json", help="write the summary as JSON to this file")
    p.add_argument("--idle", action="store_true", help="only ping (an idle xrun baseline)")
    p.add_argument("--keep", action="store_true", help="keep the work folder (always kept on failure)")
    p.add_argument("--no-timed-3d", action="store_true",
                   help="no 3D or environment changes inside timed bundles (steers clear of the known "
                        "use-after-free of environment voices, to check the model against a binary that has it)")
    p.add_argument("--trace", help="write every packet sent and message received to this file")
    args = p.parse_args()
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1 << 31)
    if args.seconds <= 0 or args.rate <= 0:
        p.error("--seconds and --rate must be > 0")
    args.bin = os.path.abspath(args.bin)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
