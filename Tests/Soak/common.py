"""Shared pieces of the soak drivers (repro.py, soak.py): a private JACK server, `soundstage run` with its log,
a python-osc client that matches replies, generated audio files, and readings from /proc.

Everything here starts only its own processes and stops them by PID:
- `JackServer` runs `jackd -n NAME --no-realtime -d dummy -r 48000 -p 256` with a unique NAME and waits for it
  with `jack_wait -s NAME -w -t 10`;
- `Engine` runs `BIN run PATCH --server NAME --no-start-server --osc-port 0 --file-root DIR`, with stdout and
  stderr in one log file, and reads the port from its line `OSC: udp and tcp on 127.0.0.1:PORT (…)`
  (Sources/soundstage/RunCommand.swift).
Only 127.0.0.1 is used. python-osc (PyPI) builds and parses every packet; nothing else here speaks OSC.
"""
import collections
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree

try:
    from pythonosc import osc_bundle_builder, osc_message_builder
    from pythonosc.osc_bundle import OscBundle
    from pythonosc.osc_message import OscMessage
except ImportError:  # pragma: no cover - explained to the user
    sys.exit("python-osc is missing: run this script with the python3 that scripts/python-osc.sh prints "
             "(a virtual environment with python-osc from PyPI)")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
# The python-osc test helpers: message and bundle builders, and the datagram decoder (nested bundles flattened).
sys.path.insert(0, os.path.join(ROOT, "Tests", "OSCControlTests", "Python"))
from osc_session import bundle, decode, message  # noqa: E402,F401  (re-exported to the drivers)
IMMEDIATELY = osc_bundle_builder.IMMEDIATELY
RATE = 48000
PERIOD = 256

# Lines in the engine's log that mean memory or undefined-behaviour trouble even if the process survives.
CRASH_MARKERS = (
    "ERROR: AddressSanitizer", "WARNING: ThreadSanitizer", "ERROR: LeakSanitizer", "runtime error",
    "corrupted", "double free", "free(): ", "malloc(): ", "malloc_consolidate", "munmap_chunk", "Fatal error",
    "Segmentation fault", "stack smashing", "Program crashed",
)
# Where a report starts, and how many lines of it to show: the Swift runtime's backtrace (its crashed thread),
# a sanitizer's report, glibc's heap checks.
REPORT_STARTS = (
    (re.compile(r"Thread \d+( \"[^\"]*\")? crashed:"), 12),
    (re.compile(r"ERROR: AddressSanitizer|WARNING: ThreadSanitizer|ERROR: LeakSanitizer"), 40),
    (re.compile(r"\*\*\* Program crashed|runtime error|corrupted|double free|free\(\): |malloc\(\): |Fatal error"), 0),
)


def _stop_on_sigterm(signum, frame):
    """SIGTERM (a CI time-out, `kill`) unwinds like Ctrl-C, so the engine and jackd we started are stopped."""
    raise KeyboardInterrupt(f"signal {signum}")


signal.signal(signal.SIGTERM, _stop_on_sigterm)


def default_binary():
    """$SOUNDSTAGE_BIN, else the release build in this checkout."""
    return os.environ.get("SOUNDSTAGE_BIN") or os.path.join(ROOT, ".build", "release", "soundstage")


def log(text):
    print(text, flush=True)


# MARK: Files


def make_workdir(prefix):
    return tempfile.mkdtemp(prefix=prefix)


def make_audio(folder):
    """Test material made with sox: 2 s stereo and mono sines (WAV), a 30 s stereo FLAC. Returns their names
    (relative to `folder`, which is a file root)."""
    files = {
        "stereo": ("sine_stereo.wav", ["-c", "2", "-b", "16"], ["synth", "2", "sine", "440", "vol", "0.3"]),
        "mono": ("sine_mono.wav", ["-c", "1", "-b", "16"], ["synth", "2", "sine", "660", "vol", "0.3"]),
        "long": ("long.flac", ["-c", "2", "-b", "16"], ["synth", "30", "sine", "220", "vol", "0.3"]),
    }
    out = {}
    for key, (name, fmt, effect) in files.items():
        path = os.path.join(folder, name)
        subprocess.run(["sox", "-n", "-r", str(RATE)] + fmt + [path] + effect, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        out[key] = name
    return out


def write_file(folder, name, text):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(text)
    return path


# MARK: Processes


def describe_exit(code):
    """'exited with code N' or 'killed by signal SIGSEGV (11)' for a Popen return code."""
    if code is None:
        return "still running"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "signal"
        return f"killed by signal {name} ({-code})"
    if code > 128 and code - 128 < 65:
        try:
            return f"exited with code {code} (signal {signal.Signals(code - 128).name}?)"
        except ValueError:
            pass
    return f"exited with code {code}"


def stop_process(proc, grace=5.0):
    """SIGTERM, then SIGKILL after `grace` seconds; only this Popen's own PID."""
    if proc is None or proc.poll() is not None:
        return
    try:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)
    except ProcessLookupError:
        pass


class JackServer:
    """A private dummy JACK server with a unique name, stopped by its PID."""

    def __init__(self, workdir, prefix="soak"):
        self.name = f"{prefix}_{os.getpid()}_{int(time.time() * 1000) % 100000}"
        self.log_path = os.path.join(workdir, "jackd.log")
        self.proc = None

    def start(self):
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            ["jackd", "-n", self.name, "--no-realtime", "-d", "dummy", "-r", str(RATE), "-p", str(PERIOD)],
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT)
        # jack_wait can connect while the server is still setting up and give up at once ("Cannot create new
        # client"): try again while jackd runs, for 10 s in all.
        deadline = time.monotonic() + 10
        while True:
            time.sleep(0.1)
            left = max(1, int(deadline - time.monotonic()))
            wait = subprocess.run(["jack_wait", "-s", self.name, "-w", "-t", str(left)], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, timeout=20)
            if wait.returncode == 0 or self.proc.poll() is not None or time.monotonic() >= deadline:
                break
        if wait.returncode != 0 or self.proc.poll() is not None:
            self.stop()
            raise RuntimeError(f"jackd '{self.name}' did not start: {wait.stdout.strip()} "
                               f"{tail(self.log_path, 20)}")
        return self

    def stop(self):
        stop_process(self.proc)
        if getattr(self, "_log", None):
            self._log.close()
            self._log = None


class Engine:
    """`soundstage run PATCH` on a JACK server, stdout and stderr in `log_path`."""

    PORT_LINE = re.compile(r"OSC: udp and tcp on 127\.0\.0\.1:(\d+)")

    def __init__(self, binary, patch, server, workdir, log_name="soundstage.log"):
        self.binary = binary
        self.patch = patch
        self.server = server
        self.workdir = workdir
        self.log_path = os.path.join(workdir, log_name)
        self.proc = None
        self.port = None

    @property
    def pid(self):
        return self.proc.pid

    def start(self, timeout=30.0):
        if not os.access(self.binary, os.X_OK):
            raise RuntimeError(f"no executable soundstage at {self.binary} (use --bin)")
        env = dict(os.environ, JACK_NO_START_SERVER="1")
        # A crash report that fits the last 60 lines of the log: the crashed thread only (unless set already).
        env.setdefault("SWIFT_BACKTRACE", "threads=crashed,registers=none,images=none")
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [self.binary, "run", self.patch, "--server", self.server, "--no-start-server", "--osc-port", "0",
             "--file-root", self.workdir],
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT, cwd=self.workdir, env=env)
        deadline = time.time() + timeout
        while time.time() < deadline:
            with open(self.log_path, errors="replace") as f:
                m = self.PORT_LINE.search(f.read())
            if m:
                self.port = int(m.group(1))
                return self
            if self.proc.poll() is not None:
                raise RuntimeError(f"soundstage {describe_exit(self.proc.returncode)} before OSC was up:\n"
                                   + self.log_tail(60))
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("soundstage printed no OSC port within %.0f s:\n%s" % (timeout, self.log_tail(60)))

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def thread_stacks(self, path):
        """Writes every thread's stack (gdb, when installed) to `path`: what a hang is waiting for."""
        if not self.alive() or shutil.which("gdb") is None:
            return None
        with open(path, "w") as out:
            subprocess.run(["gdb", "-p", str(self.pid), "-batch", "-ex", "thread apply all bt 30"],
                           stdout=out, stderr=subprocess.STDOUT, timeout=60)
        return path

    def exit_description(self):
        return describe_exit(self.proc.poll() if self.proc else None)

    def log_tail(self, lines=60):
        return tail(self.log_path, lines)

    def crash_lines(self):
        """Lines of the log that carry a crash marker (sanitizers, glibc's heap checks)."""
        try:
            with open(self.log_path, errors="replace") as f:
                return [line.rstrip() for line in f if any(mark in line for mark in CRASH_MARKERS)]
        except OSError:
            return []

    def crash_excerpt(self, limit=80):
        """The start of each crash report in the log (the crashed thread's frames), at most `limit` lines."""
        try:
            with open(self.log_path, errors="replace") as f:
                lines = [line.rstrip("\n") for line in f]
        except OSError:
            return ""
        out, until = [], -1
        for i, line in enumerate(lines):
            for pattern, after in REPORT_STARTS:
                if pattern.search(line):
                    until = max(until, i + after)
            if i <= until:
                out.append(line)
                if line.strip() == "..." or line.startswith("Registers:"):
                    until = i  # the end of the crashed thread's frames
            if len(out) >= limit:
                break
        return "\n".join(out)

    def stop(self):
        stop_process(self.proc, grace=8.0)
        if getattr(self, "_log", None):
            self._log.close()
            self._log = None


def tail(path, lines):
    try:
        with open(path, errors="replace") as f:
            return "".join(collections.deque(f, maxlen=lines))
    except OSError as e:
        return f"(no log: {e})"


class Stack:
    """Stops what was started, last first, also on exceptions and Ctrl-C (use as a context manager)."""

    def __init__(self):
        self.items = []

    def push(self, thing):
        self.items.append(thing)
        return thing

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        while self.items:
            try:
                self.items.pop().stop()
            except Exception as e:  # keep stopping the rest
                log(f"cleanup: {e}")
        return False


def start_stack(binary, patch_text, workdir, prefix):
    """A JACK server and an engine on it with `patch_text` as start.yaml; returns (stack, jack, engine)."""
    stack = Stack()
    try:
        jack = stack.push(JackServer(workdir, prefix).start())
        patch = write_file(workdir, "start.yaml", patch_text)
        engine = stack.push(Engine(binary, patch, jack.name, workdir))
        engine.start()
    except BaseException:
        stack.__exit__(None, None, None)
        raise
    return stack, jack, engine


# MARK: OSC


def describe_packet(packet):
    if isinstance(packet, OscBundle):
        tag = "immediately" if packet.timestamp == 0 else f"{packet.timestamp - time.time():+.3f}s"
        return f"bundle {tag} [" + "; ".join(describe_packet(p) for p in packet) + "]"
    return f"{packet.address} {packet.params}"


def count_messages(packet):
    """OSC messages in a message or bundle (what 'messages sent' counts)."""
    if isinstance(packet, OscBundle):
        return sum(count_messages(item) for item in packet)
    return 1


class Client:
    """One UDP socket on 127.0.0.1: every request goes out from it, so every reply comes back to it. A receiver
    thread decodes replies; `/pong` answers are timed for the pinger, everything else is handed to `on_message`
    (if given) and kept in `inbox` for `wait_for`."""

    def __init__(self, port, on_message=None):
        self.target = ("127.0.0.1", port)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.on_message = on_message
        self.lock = threading.Condition()
        self.inbox = collections.deque(maxlen=20000)
        self.sent_messages = 0
        self.sent_packets = 0
        self.received = 0
        self.undecodable = 0
        self.pings = {}  # id -> send time (monotonic)
        self.ping_rtts = []
        self.next_ping = 1
        self.trace = None  # a file: every packet sent and every message received, with times
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._receive_loop, name="osc-receiver", daemon=True)
        self.thread.start()

    def stop(self):
        self.stopped.set()
        self.thread.join(timeout=2)
        self.sock.close()

    # Sending

    def send(self, address, *args):
        self.send_packet(message(address, *args))

    def send_packet(self, packet):
        self.sock.sendto(packet.dgram, self.target)
        with self.lock:
            self.sent_packets += 1
            self.sent_messages += count_messages(packet)
            if self.trace:
                self.trace.write(f"{time.monotonic():.6f} > {describe_packet(packet)}\n")

    # Receiving

    def _receive_loop(self):
        while not self.stopped.is_set():
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            now = time.monotonic()
            try:
                messages = decode(data)
            except Exception:
                with self.lock:
                    self.undecodable += 1
                continue
            if self.trace:
                with self.lock:
                    for m in messages:
                        self.trace.write(f"{now:.6f} < {m.address} {m.params}\n")
            for m in messages:
                if m.address == "/pong" and len(m.params) == 1 and isinstance(m.params[0], int):
                    with self.lock:
                        sent = self.pings.pop(m.params[0], None)
                        if sent is not None:
                            self.ping_rtts.append(now - sent)
                    if sent is not None:
                        continue
                # on_message returns True when it consumed the message (it is then not kept for wait_for).
                if self.on_message is not None and self.on_message(m, now):
                    continue
                with self.lock:
                    self.received += 1
                    self.inbox.append(m)
                    self.lock.notify_all()

    def wait_for(self, predicate, timeout=5.0):
        """Removes and returns the first received message matching `predicate`, or None after `timeout`."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                for i, m in enumerate(self.inbox):
                    if predicate(m):
                        del self.inbox[i]
                        return m
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self.lock.wait(min(remaining, 0.05))

    def clear(self):
        with self.lock:
            self.inbox.clear()

    def request(self, address, *args, reply=None, timeout=5.0):
        """Sends and waits for the first message on `reply` (default: the same address)."""
        self.send(address, *args)
        wanted = reply or address
        return self.wait_for(lambda m: m.address == wanted, timeout)

    def command(self, address, *args, timeout=5.0):
        """Sends and waits for the /done or /error naming `address`."""
        self.send(address, *args)
        return self.wait_for(
            lambda m: m.address in ("/done", "/error") and m.params and m.params[0] == address, timeout)

    def collect_list(self, address, item_address, timeout=5.0):
        """Sends a list request and returns the params of its items (up to the /reply terminator)."""
        with self.lock:
            stale = [m for m in self.inbox if m.address == item_address]
            for m in stale:
                self.inbox.remove(m)
        self.send(address)
        end = self.wait_for(lambda m: m.address == "/reply" and m.params == [address], timeout)
        if end is None:
            return None
        with self.lock:
            items = [m for m in self.inbox if m.address == item_address]
            for m in items:
                self.inbox.remove(m)
        return [m.params for m in items]

    def sync(self, ident, timeout=10.0):
        """`/sync id` → `/synced id` (every earlier request has taken effect); False on timeout."""
        self.send("/sync", ident)
        return self.wait_for(lambda m: m.address == "/synced" and m.params == [ident], timeout) is not None

    def status(self, timeout=2.0):
        """/status.reply as a dict, or None."""
        m = self.request("/status", reply="/status.reply", timeout=timeout)
        if m is None:
            return None
        p = m.params
        return {"state": p[0], "rate": p[1], "period": p[2], "dsp": p[3], "xruns": p[4], "nodes": p[5],
                "dropped": p[8] if len(p) > 8 else 0, "session": p[9] if len(p) > 9 else ""}

    # Pings

    def ping(self):
        with self.lock:
            ident = self.next_ping
            self.next_ping += 1
            self.pings[ident] = time.monotonic()
        self.send("/ping", ident)

    def overdue_ping(self, timeout):
        """(id, age in s) of the oldest ping unanswered for longer than `timeout`, or None."""
        now = time.monotonic()
        with self.lock:
            for ident, sent in sorted(self.pings.items()):
                if now - sent > timeout:
                    return ident, now - sent
        return None

    def rtt_stats_ms(self):
        with self.lock:
            values = sorted(self.ping_rtts)
        if not values:
            return {"count": 0, "p50": None, "p99": None, "max": None}
        return {"count": len(values), "p50": round(percentile(values, 50) * 1000, 3),
                "p99": round(percentile(values, 99) * 1000, 3), "max": round(values[-1] * 1000, 3)}


# MARK: Measurements


def percentile(sorted_values, p):
    if not sorted_values:
        return None
    k = (len(sorted_values) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (k - lo)


def proc_sample(pid):
    """RSS (VmRSS, kB), open file descriptors and threads of a process, from /proc; None once it is gone."""
    try:
        rss = threads = None
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("Threads:"):
                    threads = int(line.split()[1])
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        return {"rss_kb": rss, "fds": fds, "threads": threads}
    except (OSError, ValueError):
        return None


def slope_per_minute(ts, ys):
    """Least-squares slope of ys over ts (seconds), per minute; None with fewer than 2 points."""
    pts = [(t, y) for t, y in zip(ts, ys) if y is not None]
    if len(pts) < 2:
        return None
    n = len(pts)
    mt = sum(t for t, _ in pts) / n
    my = sum(y for _, y in pts) / n
    den = sum((t - mt) ** 2 for t, _ in pts)
    if den == 0:
        return None
    return 60.0 * sum((t - mt) * (y - my) for t, y in pts) / den


def remove_workdir(path, keep):
    if keep:
        log(f"work folder kept: {path}")
    else:
        shutil.rmtree(path, ignore_errors=True)
