#!/usr/bin/env python3
"""Minimal reproducer: environments created and freed under a 3D source that is being moved by time-tagged
bundles. Killed the engine (heap corruption) within about a second before timed commands kept what they
point at alive (docs/DECISIONS.md, 2026-11-25).

Setup (a private dummy JACK server and `soundstage run` on it, see common.py): one looping mono source `p`
(a `player` with a sine buffer made by sox, or an `audioplayer` with the file) rendered with `sphericalHead`
(or `HRTF`), connected to `main` (not in the time-effect variants, whose rules forbid that fan-out).
Then every 30 ms, loop i:
  /node/new environment env<i>;  /graph/connect env<i> main;  /graph/connect p env<i>
  a bundle time-tagged now + 0.2 s: /node/p/position x 0 z
  /node/free env<i>                       (variant `free`)
Variants (--variant):
  free        as above (default)
  disconnect  /graph/disconnect p env<i> instead of the free; env<i> is freed 1 s later, after its bundle ran
  hrtf        the source renders with HRTF instead of sphericalHead
  audioplayer the source is an `audioplayer` playing the file
  insert      p -> fx<i> -> env<i>, fx<i> a reverb exposed as a JACK insert (`insert` true); both freed
  timepitch   p -> fx<i> (timepitch) -> env<i>; the bundle also sets fx<i>'s rate; both freed
  varispeed   the same with a varispeed
hrtf, timepitch and varispeed run sequentially: the loop waits for its connections to be made, and the free
comes 0.13 s after the bundle (--free-after), once the engine has taken the bundle (0.1 s before its tag) but
before it applies. Otherwise nothing races: an HRTF set load (about 0.3 s, once per engine now, on a worker)
or a time-pitch node's start-up can hold the bundle past its tag; `p` may feed only one time effect at a
time; and a time effect freed before the release only makes the bundle's rate set fail (10).
Each loop waits (at most 1 s) until no more than about two loops' replies are outstanding. /ping every 0.5 s
must be answered within 1 s. /error replies are counted by code, not fatal.

Usage:  repro.py [--bin BIN] [--seconds 60] [--variant free] [--seed N] [--free-after S] [--keep]
Exit 0 and `repro VARIANT: N loops in S s, no crash` when the engine survived and answered every ping;
exit 1 with the reason (exit code or signal, unanswered ping, crash lines in the log, its last 60 lines).
"""
import argparse
import collections
import math
import random
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the drivers
import common  # noqa: E402
from common import bundle, log, message  # noqa: E402

VARIANTS = ("free", "disconnect", "hrtf", "audioplayer", "insert", "timepitch", "varispeed")
PERIOD_S = 0.030
LATENCY_S = 0.2
PING_EVERY_S = 0.5
PING_TIMEOUT_S = 1.0
# Sequential variants: the free waits until the bundle was released (tag - 0.1 s) but not applied.
DEFAULT_FREE_AFTER = {"hrtf": 0.13, "timepitch": 0.13, "varispeed": 0.13}


def start_patch(variant, files):
    """The start patch: the source `p` (and, unless a time effect will feed on it, p -> main)."""
    algorithm = "HRTF" if variant == "hrtf" else "sphericalHead"
    if variant == "audioplayer":
        source = (f"  - {{ name: p, kind: audioplayer, params: {{ file: {files['mono']}, numberOfLoops: -1, "
                  f"playing: true, renderingAlgorithm: {algorithm}, positionZ: -1 }} }}")
    else:
        source = (f"  - {{ name: p, kind: player, params: {{ buffer: tone, loop: true, playing: true, "
                  f"renderingAlgorithm: {algorithm}, positionZ: -1 }} }}")
    lines = [
        "# Written by Tests/Soak/repro.py.",
        "version: 1",
        "engine: { sampleRate: 48000, outputs: 2 }",
        "buffers:",
        f"  - {{ name: tone, file: {files['mono']} }}",
        "nodes:",
        source,
    ]
    if variant not in ("timepitch", "varispeed"):
        lines += ["connections:", "  - { from: p, to: main }"]
    return "\n".join(lines) + "\n"


class Replies:
    """Counts /done and /error (by code) and /late from the receiver thread."""

    def __init__(self):
        self.lock = threading.Lock()
        self.answered = 0
        self.errors = collections.Counter()
        self.error_examples = {}
        self.late = 0

    def __call__(self, m, _now):
        with self.lock:
            if m.address == "/done":
                self.answered += 1
            elif m.address == "/error":
                self.answered += 1
                code = m.params[1] if len(m.params) > 1 else -1
                self.errors[code] += 1
                self.error_examples.setdefault(code, m.params)
            elif m.address == "/late":
                self.late += 1
        return True  # nothing is kept for wait_for


class Failure(Exception):
    pass


class Driver:
    """Sends the loop's requests while keeping the watch: /ping every 0.5 s (1 s to answer), the engine alive."""

    def __init__(self, client, engine, replies):
        self.c = client
        self.engine = engine
        self.replies = replies
        self.expected = 0  # /done-or-/error replies asked for so far
        self.next_ping = time.monotonic()
        self.loops = 0
        self.ping_timeout = PING_TIMEOUT_S

    def send(self, address, *args):
        """A command answered by /done or /error."""
        self.c.send(address, *args)
        self.expected += 1

    def check(self):
        now = time.monotonic()
        if now >= self.next_ping:
            self.c.ping()
            self.next_ping = now + PING_EVERY_S
        if not self.engine.alive():
            raise Failure(f"the engine {self.engine.exit_description()} after {self.loops} loops")
        overdue = self.c.overdue_ping(self.ping_timeout)
        if overdue:
            stacks = self.engine.thread_stacks(self.engine.log_path + ".stacks")
            raise Failure(f"/ping {overdue[0]} unanswered after {overdue[1]:.2f} s ({self.loops} loops)"
                          + (f"; thread stacks in {stacks}" if stacks else ""))

    def sleep(self, seconds):
        end = time.monotonic() + seconds
        while True:
            self.check()
            left = end - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(left, 0.005))

    def drain(self, allowed, timeout):
        """Waits until at most `allowed` replies are outstanding (at most `timeout` s; replies still missing
        then, such as rate-limited errors, are forgiven)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.check()
            with self.replies.lock:
                if self.expected - self.replies.answered <= allowed:
                    return
            time.sleep(0.002)
        with self.replies.lock:
            self.expected = self.replies.answered


def one_loop(d, variant, i, rng, free_after, pending_free):
    """Loop i: create, connect, the timed bundle, then free (or disconnect). With `free_after` > 0 the free
    waits until the bundle has been released to the engine (0.1 s before its tag) but not yet applied."""
    env = f"env{i}"
    fx = f"fx{i}" if variant in ("insert", "timepitch", "varispeed") else None
    d.send("/node/new", "environment", env)
    if variant == "insert":
        d.send("/node/new", "reverb", fx, "insert", True, "wetDryMix", 30.0)
    elif fx:
        d.send("/node/new", variant, fx)
    d.send("/graph/connect", env, "main")
    if fx:
        d.send("/graph/connect", "p", fx)
        d.send("/graph/connect", fx, env)
    else:
        d.send("/graph/connect", "p", env)
    if free_after > 0:
        # Sequential: the graph must be in place before the bundle is sent (an HRTF set load or a time-pitch
        # warm-up would otherwise hold the OSC thread past the bundle's release and make it late).
        d.drain(0, 3.0)
    angle = rng.uniform(0, 2 * math.pi)
    distance = rng.uniform(0.5, 4.0)
    x, z = round(distance * math.sin(angle), 4), round(-distance * math.cos(angle), 4)
    contents = [message("/node/p/position", x, 0.0, z)]
    if variant in ("timepitch", "varispeed"):
        contents.append(message(f"/node/{fx}/rate", round(rng.uniform(0.5, 2.0), 3)))
    d.c.send_packet(bundle(time.time() + LATENCY_S, *contents))
    if free_after > 0:
        d.sleep(free_after)
    if variant == "disconnect":
        d.send("/graph/disconnect", "p", env)
        pending_free.append((time.monotonic() + 1.0, env))  # freed once its bundle has run
    elif fx:
        d.send("/node/free", fx, env)
    else:
        d.send("/node/free", env)


def run(args):
    rng = random.Random(args.seed)
    free_after = args.free_after if args.free_after is not None else DEFAULT_FREE_AFTER.get(args.variant, 0.0)
    workdir = common.make_workdir("soundstage-repro-")
    files = common.make_audio(workdir)
    stack, jack, engine = common.start_stack(args.bin, start_patch(args.variant, files), workdir, "repro")
    replies = Replies()
    failure = None
    started = time.monotonic()
    with stack:
        c = stack.push(common.Client(engine.port, on_message=replies))
        d = Driver(c, engine, replies)
        d.ping_timeout = args.ping_timeout
        log(f"repro {args.variant}: soundstage pid {engine.pid}, OSC port {engine.port}, JACK server {jack.name}, "
            f"seed {args.seed}, {args.seconds:g} s, free {free_after:g} s after the bundle")
        pending_free = collections.deque()  # (due, env) for the disconnect variant
        deadline = started + args.seconds
        try:
            while time.monotonic() < deadline:
                begun = time.monotonic()
                d.check()
                one_loop(d, args.variant, d.loops, rng, free_after, pending_free)
                d.loops += 1
                while pending_free and pending_free[0][0] <= time.monotonic():
                    d.send("/node/free", pending_free.popleft()[1])
                d.drain(12, 1.0)  # back-pressure: about two loops' replies outstanding at most
                d.sleep(PERIOD_S - (time.monotonic() - begun))
            # The last bundles must have run, and the engine must still answer.
            d.sleep(LATENCY_S + 0.3)
            c.ping()
            d.next_ping = time.monotonic() + PING_EVERY_S
            d.sleep(PING_TIMEOUT_S + 0.1)
        except Failure as e:
            failure = str(e)
        except KeyboardInterrupt:
            failure = "interrupted"
        loops = d.loops
        elapsed = time.monotonic() - started
        crash_lines = engine.crash_lines()
        if failure is None and crash_lines:
            failure = "the engine's log reports memory trouble"
        errors = ", ".join(f"{code}: {n}" for code, n in sorted(replies.errors.items())) or "none"
        rtt = c.rtt_stats_ms()
        if failure:
            time.sleep(0.3)  # let a dying process finish its report
            log(f"FAIL repro {args.variant} (seed {args.seed}): {failure}, {elapsed:.1f} s in")
            log(f"errors by code: {errors}; /late: {replies.late}; pings answered: {rtt['count']}")
            for code, example in sorted(replies.error_examples.items()):
                log(f"  first /error {code}: {example}")
            excerpt = engine.crash_excerpt()
            if excerpt:
                log(f"crash report (excerpt):\n{excerpt}\n")
            log(f"last 60 lines of {engine.log_path}:\n{engine.log_tail(60)}")
    common.remove_workdir(workdir, keep=args.keep or failure is not None)
    if failure:
        return 1
    log(f"errors by code: {errors}; /late: {replies.late}; ping ms p50 {rtt['p50']} p99 {rtt['p99']} max {rtt['max']}")
    for code, example in sorted(replies.error_examples.items()):
        log(f"  first /error {code}: {example}")
    log(f"repro {args.variant}: {loops} loops in {elapsed:.1f} s, no crash")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", default=common.default_binary(), help="soundstage binary (default: %(default)s)")
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--variant", choices=VARIANTS, default="free")
    p.add_argument("--seed", type=int, default=None, help="seed for the positions and rates (default: random)")
    p.add_argument("--free-after", type=float, default=None,
                   help="seconds between the bundle and the free (default: 0, or 0.13 for hrtf, timepitch, varispeed)")
    p.add_argument("--keep", action="store_true", help="keep the work folder (it is always kept on failure)")
    p.add_argument("--ping-timeout", type=float, default=PING_TIMEOUT_S,
                   help="seconds a /ping may take (default %(default)s; more for a sanitized debug build)")
    args = p.parse_args()
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1 << 31)
    if args.seconds <= 0:
        p.error("--seconds must be > 0")
    try:
        return run(args)
    except RuntimeError as e:
        log(f"FAIL repro {args.variant}: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
