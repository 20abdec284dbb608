"""Bundles built by python-osc: atomic application, nested bundles with their own time tags, future, late
(applied or refused) and refused time tags.

Usage: python3 ext_bundles.py PORT
The service has a one-channel buffer "clk" (a click at frame 0). This script creates players "a" (hard
left) and "b" (hard right) and plays them twice: first from one immediate bundle (the Swift test checks
both clicks land on the same frame), then from one bundle holding two nested bundles 0.25 s apart (the
Swift test checks 12000 frames at 48 kHz). Prints OK and exits 0 when its own checks passed.
"""
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the tests
from osc_session import IMMEDIATELY, Client, approx, bundle, message

port = int(sys.argv[1])
c = Client(port)

for name, pan in (("a", -1.0), ("b", 1.0)):
    c.expect_done("/node/new", "player", name, "buffer", "clk", "pan", pan)
    c.expect_done("/graph/connect", name, "main")

# Atomic: 24 parameter sets on 8 mixers in one immediate bundle (nested one level) are all applied.
for k in range(8):
    c.expect_done("/node/new", "mixer", f"mx{k}")
sets = []
for k in range(8):
    sets.append(message(f"/node/mx{k}/outputVolume", 0.125 * k))
    sets.append(message(f"/node/mx{k}/pan", -0.5))
inner = bundle(IMMEDIATELY, *[message(f"/node/mx{k}/volume", 0.25) for k in range(8)])
c.send_packet(bundle(IMMEDIATELY, *sets, inner))
c.sync(11)
for k in range(8):
    assert approx(c.request(f"/node/mx{k}/outputVolume").params[0], 0.125 * k)
    assert approx(c.request(f"/node/mx{k}/pan").params[0], -0.5)
    assert approx(c.request(f"/node/mx{k}/volume").params[0], 0.25)

# Atomic in the audio: both players start in the same cycle (checked by the Swift side).
c.send_packet(bundle(IMMEDIATELY, message("/node/a/play"), message("/node/b/play")))
time.sleep(0.3)
c.send_packet(bundle(IMMEDIATELY, message("/node/a/stop"), message("/node/b/stop")))
c.sync(12)

# Nested bundles with their own time tags, 0.25 s apart, 0.3 s ahead (checked by the Swift side).
t0 = time.time() + 0.3
c.send_packet(bundle(t0, bundle(t0, message("/node/a/play")), bundle(t0 + 0.25, message("/node/b/play"))))
time.sleep(0.8)
c.send_packet(bundle(IMMEDIATELY, message("/node/a/stop"), message("/node/b/stop")))

# A future bundle waits for its time tag.
tf = time.time() + 0.5
c.send_packet(bundle(tf, message("/node/mx1/outputVolume", 0.75)))
time.sleep(0.15)
assert approx(c.request("/node/mx1/outputVolume").params[0], 0.125), "applied before its time tag"
time.sleep(max(0.0, tf - time.time()) + 0.15)
assert approx(c.request("/node/mx1/outputVolume").params[0], 0.75), "not applied after its time tag"

# A late bundle applies at once and its sender hears /late with the lateness in seconds.
c.send_packet(bundle(time.time() - 0.5, message("/node/mx2/outputVolume", 0.5)))
m = c.wait_for(lambda m: m.address == "/late", what="/late")
assert m.params[0] == "/node/mx2/outputVolume" and 0.4 < m.params[1] < 2.0, m.params
c.sync(13)
assert approx(c.request("/node/mx2/outputVolume").params[0], 0.5)

# A late bundle refused whole applied neither late nor on time: only its /error arrives.
c.send_packet(
    bundle(time.time() - 0.5, message("/node/mx2/outputVolume", 0.25), message("/node/nobody/outputVolume", 0.25)))
m = c.wait_for(lambda m: m.address == "/error", what="/error for a refused late bundle")
c.sync(15)
c.drain(0.2)
assert not c.take("/late"), "a refused bundle was reported late"
assert approx(c.request("/node/mx2/outputVolume").params[0], 0.5)

# A time tag beyond the horizon (one hour) is refused and nothing in the bundle applies.
c.send_packet(bundle(time.time() + 7200, message("/node/mx3/outputVolume", 0.0)))
m = c.wait_for(lambda m: m.address == "/error", what="/error 65")
assert m.params[1] == 65, m.params
# Just past the hour, the message says a time beyond the limit (it read "3600 s ahead" once).
c.send_packet(bundle(time.time() + 3601, message("/node/mx3/outputVolume", 0.0)))
m = c.wait_for(lambda m: m.address == "/error", what="/error 65 at 3601 s")
ahead = float(m.params[2].split("time tag is ")[1].split(" s ahead")[0])
assert m.params[1] == 65 and 3600 < ahead <= 3601.1, m.params
c.sync(14)
assert approx(c.request("/node/mx3/outputVolume").params[0], 0.375)

# Only the deliberate /late and /error arrived.
c.drain(0.2)
assert not c.take("/late") and not c.take("/error"), c.pending
print("OK")
