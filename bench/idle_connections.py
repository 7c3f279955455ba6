#!/usr/bin/env python3
"""Latency of a request to `gleaner up` while other clients hold idle
connections open (they connect and send nothing, or half a request).

  bench/idle_connections.py BUILD_DIR [IDLE] [REQUESTS]

Starts gleaner up on simulated GPUs on a free loopback port, measures
REQUESTS sequential GET / with no idle connections (the baseline), then the
same with IDLE idle connections held open, and prints the median and the
maximum of each in milliseconds."""
import os, socket, statistics, subprocess, sys, tempfile, time

build = sys.argv[1]
idle_count = int(sys.argv[2]) if len(sys.argv) > 2 else 100
requests = int(sys.argv[3]) if len(sys.argv) > 3 else 50

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close(); return port

def request_ms(port):
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as c:
        c.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        while c.recv(65536):
            pass
    return (time.monotonic() - start) * 1000

def measure(port):
    times = [request_ms(port) for _ in range(requests)]
    return statistics.median(times), max(times)

port = free_port()
data = tempfile.mkdtemp(prefix="gleaner-idle-")
daemon = subprocess.Popen([os.path.join(build, "gleaner"), "up", "--fake", "demo", "--data-dir",
                           data + "/d", "--listen", "127.0.0.1:%d" % port, "--for", "120"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    for _ in range(200):
        try:
            request_ms(port); break
        except OSError:
            time.sleep(0.05)
    base = measure(port)
    idle = []
    for i in range(idle_count):
        c = socket.create_connection(("127.0.0.1", port))
        if i % 2:
            c.sendall(b"GET /v1/jo")  # half a request line, then nothing
        idle.append(c)
    time.sleep(0.2)
    loaded = measure(port)
    print("requests: %d; idle connections: %d" % (requests, idle_count))
    print("no idle connections:   median %.2f ms, max %.2f ms" % base)
    print("with idle connections: median %.2f ms, max %.2f ms" % loaded)
    print("ratio of medians: %.2f" % (loaded[0] / base[0]))
finally:
    daemon.terminate(); daemon.wait()
