"""Request/reply from python-osc against `soundstage run` on a JACK server: engine queries, nodes, parameters,
lists, audio and JACK connections, errors with their codes, coercion, TCP (OSC 1.0 framing and SLIP),
and /quit.

Usage: python3 ext_requests.py PORT JACK_SERVER JACK_CLIENT
Prints OK and exits 0 when every check passed; raises AssertionError otherwise.
"""
import sys
import time

from pythonosc import tcp_client
from pythonosc.osc_message import OscMessage

sys.dont_write_bytecode = True  # no __pycache__ beside the tests
from osc_session import Client, approx, message

port = int(sys.argv[1])
server_name = sys.argv[2]
client_name = sys.argv[3]
c = Client(port)

# Engine.
assert c.request("/ping", 7, "x", reply="/pong").params == [7, "x"]
assert c.request("/ping", reply="/pong").params == []
v = c.request("/version", reply="/version.reply").params
assert v[0] == "soundstage" and all(isinstance(x, int) for x in v[1:4]) and v[4] == "1.0", v
s = c.request("/status", reply="/status.reply").params
assert s[0] == "running" and s[1] == 48000 and s[2] == 256, s
assert isinstance(s[3], float) and s[3] >= 0 and isinstance(s[4], int) and s[5] >= 4, s
assert s[6] == server_name and s[7] == client_name, s

# Nodes and parameters: create, query, set (no reply), /sync as a barrier, coercion.
assert c.expect_done("/node/new", "player", "p1", "volume", 0.5, "loop", True) == ["/node/new", "p1"]
assert approx(c.request("/node/p1/volume").params[0], 0.5)
assert c.request("/node/p1/loop").params == [True]
c.send("/node/p1/volume", 0.25)
c.send("/node/p1/start", 480.0)   # a whole float for an int parameter
c.send("/node/p1/loop", 0)        # 0/1 for a boolean
c.send("/node/p1/pan", 1)         # an int for a float parameter
c.sync(42)
assert approx(c.request("/node/p1/volume").params[0], 0.25)
assert c.request("/node/p1/start").params == [480]
assert c.request("/node/p1/loop").params == [False]
assert approx(c.request("/node/p1/pan").params[0], 1.0)
c.drain(0.1)
assert not c.take("/done") and not c.take("/error"), "parameter sets answered something"

# /node/<name>/params: one /node/<name>/param per parameter, then /reply.
c.send("/node/p1/params")
c.wait_for(lambda m: m.address == "/reply" and m.params == ["/node/p1/params"], what="/reply /node/p1/params")
params = {m.params[0]: m.params for m in c.take("/node/p1/param")}
assert {"volume", "pan", "buffer", "loop", "playing", "start", "frames", "channels"} <= set(params), sorted(params)
volume = params["volume"]
assert volume[1] == "float" and volume[2] == "linear" and approx(volume[3], 0) and approx(volume[4], 1), volume
assert "smoothed" in volume[7] and "readonly" in params["channels"][7], (volume, params["channels"])

# Lists end with /reply.
c.send("/node/list")
c.wait_for(lambda m: m.address == "/reply" and m.params == ["/node/list"], what="/reply /node/list")
names = [m.params[0] for m in c.take("/node/info")]
assert names == sorted(names) and {"p1", "main", "output", "a", "b"} <= set(names), names

# Audio connections, and JACK connections of our own ports with the same verbs.
c.expect_done("/graph/connect", "p1", "main")
jack_src, jack_dst = f"{client_name}:out_1", "system:playback_1"
assert c.expect_done("/graph/connect", jack_src, jack_dst) == ["/graph/connect", jack_src, jack_dst]
c.send("/graph/list")
c.wait_for(lambda m: m.address == "/reply" and m.params == ["/graph/list"], what="/reply /graph/list")
edges = [tuple(m.params) for m in c.take("/graph/edge")]
# p1 takes the main mixer's next free input bus (a and b hold 0 and 1).
assert ("p1:0", "main:2") in edges and (jack_src, jack_dst) in edges, edges
c.expect_done("/graph/disconnect", jack_src, jack_dst)
c.expect_error("/graph/disconnect", jack_src, jack_dst)
c.expect_error("/graph/connect", jack_src, "nobody:nothing", code=68)
c.expect_error("/graph/connect", "p1", jack_dst, code=61)

# Errors carry their documented codes; nothing changes.
c.expect_error("/node/nope/volume", 1.0, code=10)
c.expect_error("/node/new", "player", "p1", code=11)
c.expect_error("/node/new", "oscillator", "o1", code=13)
c.expect_error("/node/new", "player", "bad name", code=12)
c.expect_error("/node/p1/volume", 2.0, code=22)
c.expect_error("/node/p1/volume", "loud", code=21)
c.expect_error("/node/p1/start", 0.5, code=21)
c.expect_error("/node/p1/channels", 1, code=23)
c.expect_error("/node/p1/nothing", 1, code=20)
c.expect_error("/node/new", code=61)
c.expect_error("/buffer/load", "x", "/etc/passwd", code=64)
c.expect_error("/buffer/free", "nothing", code=40)
c.expect_error("/graph/connect", "p1", "p1", code=30)
c.expect_done("/node/new", "mixer", "mc")
c.expect_done("/graph/connect", "mc", "main")
c.expect_error("/graph/connect", "main", "mc", code=31)
c.expect_error("/no/such/address", code=60)
assert approx(c.request("/node/p1/volume").params[0], 0.25)

# TCP, OSC 1.0 framing (a length before each packet): replies come back on the connection.
with tcp_client.SimpleTCPClient("127.0.0.1", port, mode="1.0", timeout=3) as t:
    t.send(message("/ping", 9))
    replies = [OscMessage(p) for p in t.receive(3)]
    assert [(m.address, m.params) for m in replies] == [("/pong", [9])], replies
    t.send(message("/node/p1/volume"))
    replies = [OscMessage(p) for p in t.receive(3)]
    assert replies and approx(replies[0].params[0], 0.25), replies

# TCP with SLIP (OSC 1.1): the service detects the framing; a reply URL brings answers to UDP.
with tcp_client.SimpleTCPClient("127.0.0.1", port, mode="1.1", timeout=3) as t:
    t.send(message("/notify", 1, f"osc.udp://127.0.0.1:{c.local_port}/"))
    c.wait_for(lambda m: m.address == "/done" and m.params[0] == "/notify", what="/done /notify over SLIP")
    t.send(message("/node/new", "mixer", "slip1"))
    c.wait_for(lambda m: m.address == "/done" and m.params == ["/node/new", "slip1"], what="/done /node/new over SLIP")
    t.send(message("/notify", 0, f"osc.udp://127.0.0.1:{c.local_port}/"))
    time.sleep(0.1)

# /quit stops soundstage run (the Swift side checks the exit status).
c.drain(0.2)
c.pending.clear()
assert c.expect_done("/quit") == ["/quit"]
print("OK")
