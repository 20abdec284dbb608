"""Drives a running Soundstage OSC service with python-osc (a client nobody here wrote).

Usage: python3 python_osc_client.py PORT
Exits 0 and prints OK when every check passed; raises AssertionError otherwise.
"""
import socket
import sys
import time

from pythonosc import osc_bundle_builder, osc_message_builder, udp_client
from pythonosc.osc_bundle import OscBundle
from pythonosc.osc_message import OscMessage

port = int(sys.argv[1])
c = udp_client.SimpleUDPClient("127.0.0.1", port)


def decode(data):
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


def wait_for(predicate, client=c, timeout=3.0):
    deadline = time.time() + timeout
    seen = []
    while time.time() < deadline:
        data = client.receive(0.2)
        if not data:
            continue
        for m in decode(data):
            seen.append(m)
            if predicate(m):
                return m, seen
    raise AssertionError(f"timed out; saw {[(m.address, m.params) for m in seen]}")


def message(address, *args):
    b = osc_message_builder.OscMessageBuilder(address)
    for a in args:
        b.add_arg(a)
    return b.build()


# Request / reply.
c.send_message("/ping", [1, "a"])
m, _ = wait_for(lambda m: m.address == "/pong")
assert m.params == [1, "a"], m.params

c.send_message("/node/new", ["player", "py1", "volume", 0.5])
m, _ = wait_for(lambda m: m.address in ("/done", "/error"))
assert (m.address, m.params) == ("/done", ["/node/new", "py1"]), (m.address, m.params)

c.send_message("/node/py1/volume", [])
m, _ = wait_for(lambda m: m.address == "/node/py1/volume")
assert abs(m.params[0] - 0.5) < 1e-6, m.params

# Coercion: an int for a float parameter, a bool for a bool, a float for an int.
c.send_message("/node/py1/volume", 0)
c.send_message("/node/py1/loop", True)
c.send_message("/node/py1/start", 480.0)
c.send_message("/node/py1/loop", [])
m, _ = wait_for(lambda m: m.address == "/node/py1/loop")
assert m.params == [True], m.params
c.send_message("/node/py1/start", [])
m, _ = wait_for(lambda m: m.address == "/node/py1/start")
assert m.params == [480], m.params

# Errors carry codes.
c.send_message("/node/py1/volume", 2.0)
m, _ = wait_for(lambda m: m.address == "/error")
assert m.params[:2] == ["/node/py1/volume", 22], m.params
c.send_message("/no/such/thing", [])
m, _ = wait_for(lambda m: m.address == "/error")
assert m.params[1] == 60, m.params

# Lists end with /reply.
c.send_message("/node/list", [])
m, seen = wait_for(lambda m: m.address == "/reply")
assert m.params == ["/node/list"], m.params
names = [x.params[0] for x in seen if x.address == "/node/info"]
assert names == ["main", "output", "py1"], names

# Subscription: another client's change is notified.
c.send_message("/notify", 1)
m, _ = wait_for(lambda m: m.address == "/done" and m.params[0] == "/notify")
assert m.params[2] == 10.0, m.params
other = udp_client.SimpleUDPClient("127.0.0.1", port)
other.send_message("/node/new", ["mixer", "py2"])
m, _ = wait_for(lambda m: m.address == "/node/added")
assert m.params == ["py2", "mixer"], m.params

# A bundle applies its messages together; a future bundle at its time.
b = osc_bundle_builder.OscBundleBuilder(osc_bundle_builder.IMMEDIATELY)
b.add_content(message("/node/py1/pan", -0.5))
b.add_content(message("/node/py2/outputVolume", 0.25))
c.send(b.build())
c.send_message("/node/py2/outputVolume", [])
m, _ = wait_for(lambda m: m.address == "/node/py2/outputVolume")
assert m.params == [0.25], m.params

later = osc_bundle_builder.OscBundleBuilder(time.time() + 0.4)
later.add_content(message("/node/py1/pan", 1.0))
c.send(later.build())
time.sleep(0.1)
c.send_message("/node/py1/pan", [])
m, _ = wait_for(lambda m: m.address == "/node/py1/pan")
assert m.params == [-0.5], m.params
time.sleep(0.5)
c.send_message("/node/py1/pan", [])
m, _ = wait_for(lambda m: m.address == "/node/py1/pan")
assert m.params == [1.0], m.params

# A late bundle applies at once and is reported.
late = osc_bundle_builder.OscBundleBuilder(time.time() - 1.0)
late.add_content(message("/node/py1/pan", 0.0))
c.send(late.build())
m, _ = wait_for(lambda m: m.address == "/late")
assert m.params[0] == "/node/py1/pan" and m.params[1] > 0.9, m.params

# Meters: bundles, each datagram under 4 KB (read with a larger buffer to see the real size).
for i in range(30):
    c.send_message("/node/new", ["mixer", f"wide{i}", "channels", 64])
c.send_message("/meters", [50])
sizes = []
deadline = time.time() + 1.0
c._sock.settimeout(0.2)
while time.time() < deadline:
    try:
        data = c._sock.recv(65536)
    except (socket.timeout, BlockingIOError):
        continue
    if OscBundle.dgram_is_bundle(data) and any(x.address == "/meter" for x in decode(data)):
        sizes.append(len(data))
assert sizes, "no meter bundles"
assert max(sizes) < 4096, max(sizes)
assert len(sizes) > 2, sizes

c.send_message("/notify", 0)
print("OK")
