"""A session manager written with python-osc, launching `soundstage run` as nsmd would: NSM_URL in the
environment, no arguments but the server options. It follows the messages of NSM API 1.1.2 (New Session
Manager 1.6): it answers the announce from the socket it listens on, opens a session, asks for a save and
ends the client with SIGTERM. Everything on the wire is built and parsed by python-osc.

Usage: python3 ext_nsm_server.py SOUNDSTAGE_BIN JACK_SERVER SESSION_ROOT LOG
Prints OK and exits 0 when every check passed; raises AssertionError otherwise.
"""
import os
import signal
import socket
import subprocess
import sys
import time

from pythonosc import osc_message_builder
from pythonosc.osc_message import OscMessage

binary, jack_server, root, log_path = sys.argv[1:5]

sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.bind(("127.0.0.1", 0))
url = "osc.udp://127.0.0.1:%d/" % sock.getsockname()[1]
client_address = None
pending = []


def send(address, *args):
    builder = osc_message_builder.OscMessageBuilder(address=address)
    for a in args:
        builder.add_arg(a)
    sock.sendto(builder.build().dgram, client_address)


def wait(predicate, what, timeout=20.0):
    """The first message matching `predicate` (earlier ones stay pending)."""
    global client_address
    deadline = time.time() + timeout
    while True:
        for i, m in enumerate(pending):
            if predicate(m):
                return pending.pop(i)
        remaining = deadline - time.time()
        assert remaining > 0, "no %s within %.0f s; got %s\n%s" % (
            what, timeout, [(m.address, m.params) for m in pending], open(log_path).read()[-2000:])
        sock.settimeout(remaining)
        try:
            data, source = sock.recvfrom(65536)
        except socket.timeout:
            continue
        m = OscMessage(data)
        if m.address == "/nsm/server/announce":
            client_address = source  # nsmd tells clients apart by the announce's source
        pending.append(m)


def answer(path):
    return wait(lambda m: m.address in ("/reply", "/error") and m.params[:1] == [path], "answer to " + path)


def jack_clients():
    out = subprocess.run(["jack_lsp", "-s", jack_server], capture_output=True, text=True, timeout=10).stdout
    return {line.split(":")[0] for line in out.splitlines() if ":" in line}


env = dict(os.environ, NSM_URL=url, JACK_NO_START_SERVER="1")
with open(log_path, "w") as log:
    child = subprocess.Popen(
        [binary, "run", "--server", jack_server, "--no-start-server", "--osc-port", "0"],
        env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
try:
    announce = wait(lambda m: m.address == "/nsm/server/announce", "/nsm/server/announce")
    name, caps, exe, major, minor, pid = announce.params
    assert (name, caps, major, minor, pid) == ("Soundstage", ":switch:dirty:message:", 1, 1, child.pid), announce.params
    assert exe == binary, exe
    time.sleep(0.3)
    assert "Soundstage.nPYTH" not in jack_clients(), "a JACK client before open"
    send("/reply", "/nsm/server/announce", "Welcome", "python-osc NSM", ":server-control:broadcast:optional-gui:")

    path = os.path.join(root, "PySession", "Soundstage.nPYTH")
    send("/nsm/client/open", path, "PySession", "Soundstage.nPYTH")
    reply = answer("/nsm/client/open")
    assert reply.address == "/reply" and isinstance(reply.params[1], str), reply.params
    assert "Soundstage.nPYTH" in jack_clients(), jack_clients()
    assert os.path.isfile(os.path.join(path, "patch.yaml"))
    wait(lambda m: m.address == "/nsm/client/is_clean", "/nsm/client/is_clean")

    send("/nsm/client/session_is_loaded")
    send("/nsm/client/save")
    saved = answer("/nsm/client/save")
    assert saved.address == "/reply", saved.params

    child.send_signal(signal.SIGTERM)
    assert child.wait(timeout=10) == 0, open(log_path).read()[-2000:]
    assert "Soundstage.nPYTH" not in jack_clients()
finally:
    if child.poll() is None:
        child.kill()
        child.wait()
print("OK")
