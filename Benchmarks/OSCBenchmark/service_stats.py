"""What the OSC benchmarks read about a running `soundstage run`: its /status, its CPU time from /proc,
and the datagrams the kernel dropped on its socket."""
import os


def status(c):
    s = c.request("/status", reply="/status.reply", timeout=5).params
    return {"state": s[0], "rate": s[1], "period": s[2], "dsp": s[3], "xruns": s[4]}


def process_ticks(pid):
    """utime + stime (clock ticks) of the whole process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def thread_ticks(pid):
    """utime + stime (clock ticks) per thread of the process. (Foundation's Thread.name does not reach the
    kernel on Linux, so the OSC thread is found as the busiest thread during a flood.)"""
    ticks = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            ticks[tid] = int(fields[11]) + int(fields[12])
        except OSError:
            continue
    return ticks


def kernel_drops(port):
    """The `drops` column of /proc/net/udp for the socket bound to 127.0.0.1:port."""
    wanted = "0100007F:%04X" % port
    with open("/proc/net/udp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if fields[1] == wanted:
                return int(fields[12])
    return None
