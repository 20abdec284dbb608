"""Subscriptions seen from python-osc: /notify, the lease, /renew, reply URLs served by a python-osc server,
and notifications of nodes added and removed, connections, and players finishing.

Usage: python3 ext_subscriptions.py PORT LEASE_SECONDS CLICK_WAV
(the service runs with that lease; CLICK_WAV is a short mono file inside its file roots).
Prints OK and exits 0 when every check passed; raises AssertionError otherwise.
"""
import sys
import threading
import time

from pythonosc.dispatcher import Dispatcher
from pythonosc.osc_server import BlockingOSCUDPServer

sys.dont_write_bytecode = True  # no __pycache__ beside the tests
from osc_session import Client, Renewer, approx

port = int(sys.argv[1])
lease = float(sys.argv[2])
click_path = sys.argv[3]

sub = Client(port)     # subscribes and renews
other = Client(port)   # changes things, never subscribes
lazy = Client(port)    # subscribes and never renews


def added(name):
    return lambda m: m.address == "/node/added" and m.params[0] == name


# /notify 1 answers /done /notify i:id f:lease.
done = sub.expect_done("/notify", 1)
assert done[1] >= 1 and approx(done[2], lease), done
renewer = Renewer(sub, lease / 4)
done = lazy.expect_done("/notify", True)  # T counts as 1
assert approx(done[2], lease), done

# A reply URL served by python-osc's own UDP server: the /done, later replies and notifications go there.
received = []
arrived = threading.Condition()


def collect(address, *args):
    with arrived:
        received.append((address, list(args)))
        arrived.notify_all()


dispatcher = Dispatcher()
dispatcher.set_default_handler(collect)
server = BlockingOSCUDPServer(("127.0.0.1", 0), dispatcher)
threading.Thread(target=server.serve_forever, daemon=True).start()
url = f"osc.udp://127.0.0.1:{server.server_address[1]}/"


def served(predicate, timeout=3.0):
    deadline = time.time() + timeout
    with arrived:
        while True:
            for item in received:
                if predicate(item):
                    return item
            if time.time() >= deadline:
                raise AssertionError(f"the python-osc server did not receive it; got {received[-10:]}")
            arrived.wait(0.1)


routed = Client(port)
routed.send("/notify", 1, url)
served(lambda r: r[0] == "/done" and r[1][0] == "/notify")
routed.send("/ping", 5, "routed")
assert served(lambda r: r[0] == "/pong")[1] == [5, "routed"]
routed.drain(0.2)
assert not routed.take("/pong"), "a routed reply also went to the sender"
routed.send("/renew", url)
served(lambda r: r[0] == "/done" and r[1][0] == "/renew")

# Node added / removed and connections, caused by another client.
other.expect_done("/node/new", "mixer", "m1")
for c in (sub, lazy):
    m = c.wait_for(added("m1"), what="/node/added m1")
    assert m.params == ["m1", "mixer"], m.params
served(lambda r: r[0] == "/node/added" and r[1] == ["m1", "mixer"])
other.expect_done("/graph/connect", "m1", "main")
m = sub.wait_for(lambda m: m.address == "/graph/connected", what="/graph/connected")
assert m.params == ["m1:0", "main:0"], m.params
other.expect_done("/node/free", "m1")
m = sub.wait_for(lambda m: m.address == "/node/removed", what="/node/removed")
assert m.params == ["m1"], m.params
m = sub.wait_for(lambda m: m.address == "/graph/disconnected", what="/graph/disconnected")
assert m.params == ["m1:0", "main:0"], m.params
assert not other.take("/node/added") and not other.take("/node/removed"), "an unsubscribed client was notified"

# Player finished: a non-looping click plays to its end (completed = 1), a looping one is stopped (0).
done = other.expect_done("/buffer/load", "clk", click_path)
assert done[1:3] == ["clk", 4800] and done[3] == 1 and approx(done[4], 48000.0), done
other.expect_done("/node/new", "player", "once", "buffer", "clk")
other.expect_done("/graph/connect", "once", "main")
other.expect_done("/node/once/play")
m = sub.wait_for(lambda m: m.address == "/player/finished" and m.params[0] == "once", what="/player/finished once")
assert m.params[1] == 1 and isinstance(m.params[2], int) and m.params[2] > 0, m.params
m = sub.wait_for(lambda m: m.address == "/buffer/consumed", what="/buffer/consumed")
assert m.params[:2] == ["once", "clk"], m.params
finished_at = m.params[2]
other.expect_done("/node/new", "player", "looping", "buffer", "clk", "loop", True)
other.expect_done("/graph/connect", "looping", "main")
other.expect_done("/node/looping/play")
time.sleep(0.2)
other.expect_done("/node/looping/stop")
m = sub.wait_for(lambda m: m.address == "/player/stopped" and m.params[0] == "looping",
                 what="/player/stopped looping")
assert m.params[1] > finished_at, m.params
assert not sub.take("/player/finished"), "a stop is not a finish"
assert not other.take("/player/finished")

# The lease: `sub` renews every lease/4 and keeps hearing; `lazy` stops hearing once its lease ran out.
time.sleep(lease * 1.6)
other.expect_done("/node/new", "mixer", "m2")
sub.wait_for(added("m2"), what="/node/added m2 after renewing")
lazy.drain(0.4)
expired = [m for m in lazy.pending if m.address == "/node/added" and m.params[0] == "m2"]
assert not expired, "expired lease still notified"
lazy.expect_error("/renew", code=66)
# Resubscribing works again.
lazy.expect_done("/notify", 1)
other.expect_done("/node/new", "mixer", "m3")
lazy.wait_for(added("m3"), what="/node/added m3 after resubscribing")

# /renew answers with the lease.
renewer.stop()
sub.drain(0.1)
sub.take("/done")
done = sub.expect_done("/renew")
assert approx(done[1], lease), done

# /notify 0 unsubscribes: nothing more arrives.
assert sub.expect_done("/notify", 0) == ["/notify", 0]
sub.drain(0.1)
sub.pending.clear()
other.expect_done("/node/new", "mixer", "m4")
sub.drain(0.5)
notified = [m for m in sub.pending if m.address == "/node/added"]
assert not notified, f"notified after /notify 0: {notified}"
sub.expect_error("/renew", code=66)
lazy.expect_done("/notify", 0)
routed.send("/notify", 0, url)
server.shutdown()
print("OK")
