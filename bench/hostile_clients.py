#!/usr/bin/env python3
"""Latency of a legitimate request to `gleaner up` while hostile clients hold
its connections (docs/benchmarks.md, "The API under hostile clients").

  bench/hostile_clients.py [--requests N] BUILD_DIR [BUILD_DIR...]

For each build's gleaner, on simulated GPUs, with a fresh daemon for each
scenario:
  quiet       nobody else;
  slow        20 clients over TCP and 20 on the Unix socket that pipeline
              200 requests each (5 MB of answers) and read the answers slowly
              (512 bytes every 3 s, so a server that waits on them never
              times out);
  idle        20,000 connections from one address (127.0.0.1, two processes
              of 10,000), each asking once and then kept open;
  tls         a TLS port, nobody else (the baseline of the next);
  handshakes  a TLS port, and 6 processes that open connections and shake
              hands as fast as they can.
The legitimate client asks GET /v1/whoami N times (default 50), each on a
new connection: over TCP from another address (127.0.0.2; over TLS in the
handshake scenario, its own handshake included) and over the Unix socket.
It prints the median and the slowest of each, in milliseconds, and what went
wrong (a refused or failed request, the daemon's own errors)."""
import multiprocessing, os, resource, socket, ssl, statistics, subprocess, sys, tempfile, threading
import time

WHOAMI = b"GET /v1/whoami HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def ask(connect):
    """One request on a new connection; its time in ms, or None on failure."""
    start = time.monotonic()
    try:
        with connect() as c:
            c.sendall(WHOAMI)
            answer = b""
            while True:
                got = c.recv(65536)
                if not got:
                    break
                answer += got
        if not answer.startswith(b"HTTP/1.1 "):
            return None
        return (time.monotonic() - start) * 1000
    except OSError:
        return None


def tcp_from(port, source, tls=None):
    def connect():
        c = socket.create_connection(("127.0.0.1", port), timeout=60, source_address=(source, 0))
        return tls.wrap_socket(c, server_hostname="127.0.0.1") if tls else c
    return connect


def unix_at(path):
    def connect():
        c = socket.socket(socket.AF_UNIX)
        c.settimeout(60)
        c.connect(path)
        return c
    return connect


def measure(connect, n):
    times = [ask(connect) for _ in range(n)]
    ok = [t for t in times if t is not None]
    if not ok:
        return "all %d failed" % n
    note = "" if len(ok) == n else ", %d failed" % (n - len(ok))
    return "median %.2f ms, slowest %.1f ms%s" % (statistics.median(ok), max(ok), note)


def slow_reader(connect, keep, stop):
    c = connect()
    c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    c.sendall(b"GET /ui/strings.json HTTP/1.1\r\nHost: x\r\n\r\n" * 200)

    def trickle():
        while not stop.wait(3):
            try:
                if not c.recv(512):
                    return
            except OSError:
                return
    t = threading.Thread(target=trickle)
    t.start()
    keep.extend([c, t])


def hold_idle(port, count, ready, done):
    """A process holding `count` kept-alive connections from 127.0.0.1."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    held, refused = [], 0
    for _ in range(count):
        try:
            c = socket.create_connection(("127.0.0.1", port), timeout=5)
            c.sendall(b"GET /v1/whoami HTTP/1.1\r\nHost: x\r\n\r\n")
            held.append(c)
        except OSError:
            refused += 1
    # What the server kept: a connection it refused or closed reads its end.
    still = 0
    for c in held:
        c.setblocking(False)
        try:
            data = c.recv(65536)
            if data and b"HTTP/1.1 429" not in data and b"HTTP/1.1 503" not in data:
                still += 1
        except BlockingIOError:
            still += 1
        except OSError:
            pass
    ready.put((still, refused))
    done.wait()


def flood(port, stop):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    while not stop.is_set():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as c:
                with ctx.wrap_socket(c, server_hostname="127.0.0.1"):
                    pass
        except OSError:
            pass


def run(build, scenario, n):
    work = tempfile.mkdtemp(prefix="gleaner-hostile-")
    data = work + "/d"
    port = free_port()
    args = [os.path.join(build, "gleaner"), "up", "--fake", "demo", "--data-dir", data,
            "--listen", "127.0.0.1:%d" % port, "--for", "600"]
    tls = None
    if scenario in ("tls", "handshakes"):
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", work + "/key.pem",
                        "-out", work + "/cert.pem", "-subj", "/CN=127.0.0.1", "-addext",
                        "subjectAltName=IP:127.0.0.1", "-days", "1"], check=True,
                       capture_output=True)
        args += ["--tls-cert", work + "/cert.pem", "--tls-key", work + "/key.pem"]
        tls = ssl.create_default_context(cafile=work + "/cert.pem")
    log = open(work + "/daemon.log", "w")
    daemon = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    sock = data + "/gleaner.sock"
    tcp = tcp_from(port, "127.0.0.2", tls)
    try:
        for _ in range(400):
            if os.path.exists(sock) and ask(tcp) is not None:
                break
            time.sleep(0.05)
        note = ""
        keep, procs, stop = [], [], threading.Event()
        if scenario == "slow":
            for _ in range(20):
                slow_reader(tcp_from(port, "127.0.0.1"), keep, stop)
                slow_reader(unix_at(sock), keep, stop)
            time.sleep(0.5)
        elif scenario == "idle":
            ready, done = multiprocessing.Queue(), multiprocessing.Event()
            for _ in range(2):
                p = multiprocessing.Process(target=hold_idle, args=(port, 10000, ready, done))
                p.start()
                procs.append(p)
            kept = [ready.get() for _ in procs]
            note = "; the server kept %d of 20,000 open" % sum(k for k, _ in kept)
            if sum(r for _, r in kept):
                note += ", %d could not connect" % sum(r for _, r in kept)
        elif scenario == "handshakes":
            flooding = multiprocessing.Event()
            procs = [multiprocessing.Process(target=flood, args=(port, flooding))
                     for _ in range(6)]
            for p in procs:
                p.start()
            time.sleep(0.5)
        over_tcp = measure(tcp, n)
        over_socket = measure(unix_at(sock), n)
        if scenario == "idle":
            done.set()
        if scenario == "handshakes":
            flooding.set()
        for p in procs:
            p.join()
        stop.set()
        for k in keep:
            if isinstance(k, socket.socket):
                try:
                    k.shutdown(socket.SHUT_RDWR)  # wakes a trickling reader
                except OSError:
                    pass
                k.close()
        for k in keep:
            if isinstance(k, threading.Thread):
                k.join()
    finally:
        daemon.terminate()
        daemon.wait()
        log.close()
    errors = [l.strip() for l in open(work + "/daemon.log") if
              "Too many open files" in l or "cannot" in l.lower()]
    if errors:
        note += "; the daemon logged %d error(s), first: %s" % (len(errors), errors[0][:120])
    return over_tcp, over_socket, note


def main():
    argv = sys.argv[1:]
    n = 50
    if argv[:1] == ["--requests"]:
        n, argv = int(argv[1]), argv[2:]
    for build in argv:
        print("# %s" % os.path.abspath(build))
        for scenario in ("quiet", "slow", "idle", "tls", "handshakes"):
            over_tcp, over_socket, note = run(build, scenario, n)
            print("%-10s TCP: %s | socket: %s%s" % (scenario, over_tcp, over_socket, note),
                  flush=True)


if __name__ == "__main__":
    main()
