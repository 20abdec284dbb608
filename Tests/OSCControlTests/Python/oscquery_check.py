"""OSCQuery as a controller speaks it: urllib for the namespace, the websockets package for LISTEN,
PATH_ADDED/PATH_REMOVED and OSC over the WebSocket, python-osc over UDP for changes made elsewhere.

usage: oscquery_check.py HTTP_PORT OSC_PORT [--read-only]
Prints OK and exits 0 when every check holds; otherwise names the first that failed.
"""
import json
import socket
import sys
import time
import urllib.error
import urllib.request

from pythonosc.osc_message_builder import OscMessageBuilder
from pythonosc.osc_packet import OscPacket
from pythonosc.udp_client import SimpleUDPClient
from websockets.sync.client import connect
from websockets.exceptions import InvalidStatus

HTTP, OSC = int(sys.argv[1]), int(sys.argv[2])
READ_ONLY = "--read-only" in sys.argv
BASE = f"http://127.0.0.1:{HTTP}"


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def get(path, headers=None):
    request = urllib.request.Request(BASE + path, headers=headers or {"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            body = response.read()
            return response.status, (json.loads(body) if body else None)
    except urllib.error.HTTPError as error:
        return error.code, None


def osc(address, *args):
    builder = OscMessageBuilder(address=address)
    for arg in args:
        builder.add_arg(arg)
    return builder.build().dgram


def messages(frame):
    """The OSC messages in a binary frame (a message or a bundle)."""
    return [(m.message.address, list(m.message.params)) for m in OscPacket(frame).messages]


def receive_until(ws, predicate, seconds=3.0):
    """Frames until one satisfies predicate (given the decoded frame); returns it or None."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            frame = ws.recv(timeout=max(0.01, deadline - time.monotonic()))
        except TimeoutError:
            return None
        decoded = json.loads(frame) if isinstance(frame, str) else messages(frame)
        if predicate(decoded):
            return decoded
    return None


udp = SimpleUDPClient("127.0.0.1", OSC)

# --- The namespace over HTTP -------------------------------------------------------------------
status, root = get("/")
check(status == 200 and root["FULL_PATH"] == "/", f"GET / answered {status}")
node = root["CONTENTS"]["node"]["CONTENTS"]
check({"tone", "env", "verb"} <= set(node), f"nodes in the tree: {sorted(node)}")
tone = node["tone"]
check(tone.get("KIND") == "player" and "player" in tone["DESCRIPTION"], f"tone node: {tone.get('DESCRIPTION')}")
volume = tone["CONTENTS"]["volume"]
for key in ("FULL_PATH", "TYPE", "RANGE", "VALUE", "ACCESS", "DESCRIPTION"):
    check(key in volume, f"/node/tone/volume has no {key}: {volume}")
check(volume["FULL_PATH"] == "/node/tone/volume" and volume["TYPE"] == "f", f"volume: {volume}")
check(volume["RANGE"] == [{"MIN": 0, "MAX": 1}], f"volume range: {volume['RANGE']}")
check(volume["ACCESS"] == 3 and abs(volume["VALUE"][0] - 0.5) < 1e-6, f"volume value/access: {volume}")
preset = node["verb"]["CONTENTS"]["preset"]
check("VALS" in preset["RANGE"][0] and "largeHall" in preset["RANGE"][0]["VALS"], f"a choice's range: {preset}")
check(node["tone"]["CONTENTS"]["play"]["ACCESS"] == 2, "a method is write-only")
listener = node["env"]["CONTENTS"]["listener"]["CONTENTS"]["position"]
check(listener["TYPE"] == "fff", f"listener/position: {listener}")
session = root["CONTENTS"]["session"]["CONTENTS"]
check(session["category"]["TYPE"] == "s" and "playback" in session["category"]["RANGE"][0]["VALS"], "session category")
check(session["state"]["ACCESS"] == 1, "session state is read-only")
check("DESCRIPTION" in root["CONTENTS"]["status"], "/status is in the tree")

status, sub = get("/node/tone")
check(status == 200 and sub["FULL_PATH"] == "/node/tone" and "volume" in sub["CONTENTS"], "GET /node/tone")
status, value = get("/node/tone/volume?VALUE")
check(status == 200 and value == {"VALUE": [0.5]}, f"GET /node/tone/volume?VALUE → {status} {value}")
status, _ = get("/node/nobody")
check(status == 404, f"an unknown address answers 404, not {status}")
status, info = get("/?HOST_INFO")
check(status == 200 and info["OSC_PORT"] == OSC and info["OSC_TRANSPORT"] == "UDP", f"HOST_INFO: {info}")
check(info["EXTENSIONS"]["LISTEN"] and info["EXTENSIONS"]["PATH_ADDED"], f"extensions: {info['EXTENSIONS']}")

# A browser asking for / is sent to the view; another site's name for this machine is refused.
request = urllib.request.Request(BASE + "/", headers={"Accept": "text/html,application/xhtml+xml"})
with urllib.request.urlopen(request, timeout=5) as response:
    check(response.url.endswith("/view") and b"<html" in response.read().lower(), "text/html → the view")
status, _ = get("/", headers={"Host": "attacker.example:80"})
check(status == 403, f"a request for another host name answers 403, not {status}")
try:
    connect(f"ws://127.0.0.1:{HTTP}/", origin="http://attacker.example", open_timeout=5).close()
    fail("a WebSocket from another origin was accepted")
except InvalidStatus as error:
    check(error.response.status_code == 403, f"cross-origin WebSocket: {error.response.status_code}")

# Requests whose head has no bound are refused before the server reads them, and it goes on serving.
def raw_request(data, seconds=5.0):
    sock = socket.create_connection(("127.0.0.1", HTTP), timeout=seconds)
    try:
        sock.sendall(data)
        answer = b""
        while b"\r\n" not in answer:
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
        return answer.split(b"\r\n", 1)[0].decode("latin-1")
    except (socket.timeout, ConnectionResetError, BrokenPipeError) as error:
        return f"no answer ({error})"
    finally:
        sock.close()


start = time.monotonic()
for _ in range(3):
    line = raw_request(b"GET /" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    check(line.startswith("HTTP/1.1 414"), f"a 100 kB URL: {line}")
line = raw_request(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"b" * 1_000_000 + b"\r\n\r\n")
check(line.startswith("HTTP/1.1 431"), f"a 1 MB header: {line}")
status, info = get("/?HOST_INFO")
check(status == 200 and info["OSC_PORT"] == OSC, f"served after the long requests: {status}")
check(time.monotonic() - start < 10, f"the long requests took {time.monotonic() - start:.1f} s")

# --- The WebSocket -----------------------------------------------------------------------------
with connect(f"ws://127.0.0.1:{HTTP}/", open_timeout=5, max_size=None) as ws:
    ws.send(json.dumps({"COMMAND": "LISTEN", "DATA": "/node/tone/volume"}))
    first = receive_until(ws, lambda m: isinstance(m, list) and m and m[0][0] == "/node/tone/volume")
    check(first is not None and abs(first[0][1][0] - 0.5) < 1e-6, f"LISTEN sends the value at once: {first}")
    udp.send_message("/node/tone/volume", 0.25)  # changed by another controller
    changed = receive_until(ws, lambda m: isinstance(m, list) and m and m[0][0] == "/node/tone/volume")
    check(changed is not None and abs(changed[0][1][0] - 0.25) < 1e-6, f"a change reaches the listener: {changed}")

    # OSC over the WebSocket: the same address space, replies come back on the socket.
    ws.send(osc("/node/list"))
    listed = []
    done = receive_until(ws, lambda m: isinstance(m, list) and (listed.extend(m) or any(a == "/reply" for a, _ in m)))
    names = sorted(args[0] for address, args in listed if address == "/node/info")
    check(done is not None and {"tone", "env", "verb"} <= set(names), f"/node/list over the socket: {names}")

    if READ_ONLY:
        ws.send(osc("/node/tone/volume", 0.75))
        refused = receive_until(ws, lambda m: isinstance(m, list) and m and m[0][0] == "/error")
        check(refused is not None and refused[0][1][1] == 14, f"read-only: a set is refused with 14: {refused}")
        ws.send(osc("/node/tone/play"))
        refused = receive_until(ws, lambda m: isinstance(m, list) and m and m[0][0] == "/error")
        check(refused is not None and refused[0][1][1] == 14, f"read-only: play is refused: {refused}")
        status, value = get("/node/tone/volume?VALUE")
        check(value == {"VALUE": [0.25]}, f"read-only: the value did not change: {value}")
        ws.send(osc("/node/tone/volume"))
        got = receive_until(ws, lambda m: isinstance(m, list) and m and m[0][0] == "/node/tone/volume")
        check(got is not None, "read-only: a get is answered")
        print("OK")
        sys.exit(0)

    ws.send(osc("/node/tone/volume", 0.125))
    mine = receive_until(ws, lambda m: isinstance(m, list) and m and m[0][0] == "/node/tone/volume")
    check(mine is not None and abs(mine[0][1][0] - 0.125) < 1e-6, f"a set over the socket applies: {mine}")

    ws.send(json.dumps({"COMMAND": "IGNORE", "DATA": "/node/tone/volume"}))
    time.sleep(0.1)
    udp.send_message("/node/tone/volume", 0.5)
    quiet = receive_until(ws, lambda m: isinstance(m, list) and m and m[0][0] == "/node/tone/volume", 0.5)
    check(quiet is None, "IGNORE stops the values")

    # Nodes that come and go are announced; the tree follows.
    udp.send_message("/node/new", ["mixer", "fresh"])
    added = receive_until(ws, lambda m: isinstance(m, dict) and m.get("COMMAND") == "PATH_ADDED")
    check(added == {"COMMAND": "PATH_ADDED", "DATA": "/node/fresh"}, f"PATH_ADDED: {added}")
    status, fresh = get("/node/fresh")
    check(status == 200 and fresh["KIND"] == "mixer", f"the tree has the new node: {status}")
    udp.send_message("/node/free", "fresh")
    removed = receive_until(ws, lambda m: isinstance(m, dict) and m.get("COMMAND") == "PATH_REMOVED")
    check(removed == {"COMMAND": "PATH_REMOVED", "DATA": "/node/fresh"}, f"PATH_REMOVED: {removed}")
    status, _ = get("/node/fresh")
    check(status == 404, "the freed node left the tree")

    # Subscriptions and meters reach the socket.
    ws.send(osc("/notify", 1))
    ws.send(osc("/meters", 50))
    meters = []
    start = time.monotonic()
    while time.monotonic() - start < 1.0:
        got = receive_until(ws, lambda m: isinstance(m, list) and any(a == "/meter" for a, _ in m), 0.5)
        if got:
            meters.append(time.monotonic())
    check(len(meters) >= 15, f"meters over the socket: {len(meters)} bundles in 1 s")

    # Bad input gets /error and the socket stays usable.
    ws.send(b"not osc at all")
    bad = receive_until(ws, lambda m: isinstance(m, list) and m and m[0][0] == "/error")
    check(bad is not None and bad[0][1][1] == 62, f"a malformed packet: {bad}")
    ws.send("{not json")
    bad = receive_until(ws, lambda m: isinstance(m, list) and m and m[0][0] == "/error")
    check(bad is not None and bad[0][1][1] == 61, f"a malformed command: {bad}")
    ws.send(json.dumps({"COMMAND": "LISTEN", "DATA": "/node/nobody/volume"}))
    bad = receive_until(ws, lambda m: isinstance(m, list) and m and m[0][0] == "/error")
    check(bad is not None and bad[0][1][1] == 60, f"LISTEN to nothing: {bad}")
    # A page may not point notifications at another address (UDP reflection): they come on the socket.
    ws.send(osc("/notify", 1, "osc.udp://127.0.0.1:9/"))
    bad = receive_until(ws, lambda m: isinstance(m, list) and m and m[0][0] == "/error")
    check(bad is not None and bad[0][1][0] == "/notify" and bad[0][1][1] == 61, f"a URL from a socket: {bad}")
    ws.send(osc("/ping", 7))
    pong = receive_until(ws, lambda m: isinstance(m, list) and m and m[0][0] == "/pong")
    check(pong is not None and pong[0][1] == [7], "the socket still works after errors")

print("OK")
