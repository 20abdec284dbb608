"""Helpers shared by the python-osc test scripts (ext_*.py) and the OSC benchmark.

Everything that speaks OSC here is python-osc (PyPI): messages and bundles are built with its builders and
decoded with its parsers, so the service is checked against an implementation nobody here wrote.
"""
import threading
import time

from pythonosc import osc_bundle_builder, osc_message_builder, udp_client
from pythonosc.osc_bundle import OscBundle
from pythonosc.osc_message import OscMessage


def decode(data):
    """Every message in a datagram (bundles flattened, nested ones included)."""
    out = []

    def walk(bundle):
        for item in bundle:
            if isinstance(item, OscBundle):
                walk(item)
            else:
                out.append(item)

    if OscBundle.dgram_is_bundle(data):
        walk(OscBundle(data))
    else:
        out.append(OscMessage(data))
    return out


def message(address, *args):
    builder = osc_message_builder.OscMessageBuilder(address)
    for a in args:
        builder.add_arg(a)
    return builder.build()


def bundle(timetag, *contents):
    """A bundle of messages and bundles; timetag in seconds since the Unix epoch, or IMMEDIATELY."""
    builder = osc_bundle_builder.OscBundleBuilder(timetag)
    for c in contents:
        builder.add_content(c)
    return builder.build()


IMMEDIATELY = osc_bundle_builder.IMMEDIATELY


def show(messages):
    return [(m.address, m.params) for m in messages]


class Client:
    """A python-osc UDP client that keeps what it received, so a test can wait for one reply and later
    look at the others."""

    def __init__(self, port, host="127.0.0.1"):
        self.udp = udp_client.SimpleUDPClient(host, port)
        self.pending = []

    @property
    def local_port(self):
        return self.udp._sock.getsockname()[1]

    def send(self, address, *args):
        self.udp.send_message(address, list(args))

    def send_packet(self, packet):
        self.udp.send(packet)

    def _read(self, timeout):
        data = self.udp.receive(timeout)
        if data:
            self.pending.extend(decode(data))
            return True
        return False

    def drain(self, seconds):
        """Collects everything that arrives within `seconds`."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            self._read(max(0.01, deadline - time.time()))

    def wait_for(self, predicate, timeout=3.0, what="a reply"):
        """Removes and returns the first received message matching `predicate`; fails on timeout."""
        deadline = time.time() + timeout
        while True:
            for i, m in enumerate(self.pending):
                if predicate(m):
                    return self.pending.pop(i)
            remaining = deadline - time.time()
            if remaining <= 0:
                raise AssertionError(f"timed out waiting for {what}; pending: {show(self.pending)[-20:]}")
            self._read(min(0.2, remaining))

    def take(self, address):
        hits = [m for m in self.pending if m.address == address]
        self.pending = [m for m in self.pending if m.address != address]
        return hits

    def request(self, address, *args, reply=None, timeout=3.0):
        """Sends and returns the first message on `reply` (default: the same address)."""
        self.send(address, *args)
        wanted = reply or address
        return self.wait_for(lambda m: m.address == wanted, timeout, what=wanted)

    def outcome(self, address, timeout=5.0):
        """The /done or /error whose first argument is `address`."""
        return self.wait_for(
            lambda m: m.address in ("/done", "/error") and m.params and m.params[0] == address,
            timeout, what=f"/done or /error for {address}")

    def command(self, address, *args, timeout=5.0):
        self.send(address, *args)
        return self.outcome(address, timeout)

    def expect_done(self, address, *args, timeout=5.0):
        m = self.command(address, *args, timeout=timeout)
        assert m.address == "/done", (address, args, m.address, m.params)
        return m.params

    def expect_error(self, address, *args, code=None, timeout=5.0):
        m = self.command(address, *args, timeout=timeout)
        assert m.address == "/error", (address, args, m.address, m.params)
        if code is not None:
            assert m.params[1] == code, (address, args, m.params)
        return m.params

    def sync(self, ident=1, timeout=5.0):
        m = self.request("/sync", ident, reply="/synced", timeout=timeout)
        assert m.params == [ident], m.params


class Renewer:
    """Renews a client's subscription in the background (`/renew`) until stopped."""

    def __init__(self, client, interval):
        self.client = client
        self.interval = interval
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stopped.wait(self.interval):
            self.client.send("/renew")

    def stop(self):
        self.stopped.set()
        self.thread.join()


def approx(a, b, tolerance=1e-6):
    return abs(a - b) <= tolerance
