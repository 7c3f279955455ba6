#!/usr/bin/env python3
"""What a long queue costs other users of `gleaner up`: one user queues an
array of TASKS jobs, then another's request is timed on its own and while a
client pages through the whole queue without pause.

  bench/queue_flood.py BUILD_DIR [TASKS] [REQUESTS]

Talks to the daemon's Unix socket as the user running it. Prints the
submit's time, a page's and the whole walk's, and the median and maximum
of each probe alone (the baseline) and during the walk, in ms."""
import json, os, socket, statistics, subprocess, sys, tempfile, threading, time

build = sys.argv[1]
tasks = int(sys.argv[2]) if len(sys.argv) > 2 else 9999
requests = int(sys.argv[3]) if len(sys.argv) > 3 else 50

def call(sock, method, target, body=b""):
    """(status, JSON body, milliseconds) of one request."""
    start = time.monotonic()
    with socket.socket(socket.AF_UNIX) as c:
        c.settimeout(120)
        c.connect(sock)
        c.sendall(b"%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s"
                  % (method.encode(), target.encode(), len(body), body))
        data = b""
        while chunk := c.recv(1 << 20):
            data += chunk
    ms = (time.monotonic() - start) * 1000
    head, _, text = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(text or b"null"), ms

def latencies(sock, n, target):
    times = [call(sock, "GET", target)[2] for _ in range(n)]
    return statistics.median(times), max(times)

def walk(sock):
    """Every page of the queue; (jobs, pages, ms)."""
    start, after, jobs, pages = time.monotonic(), 0, 0, 0
    while True:
        status, page, _ = call(sock, "GET", "/v1/jobs?limit=1000" + ("&after=%d" % after if after else ""))
        assert status == 200, page
        jobs, pages = jobs + len(page["jobs"]), pages + 1
        if "next" not in page:
            return jobs, pages, (time.monotonic() - start) * 1000
        after = page["next"]

data = tempfile.mkdtemp(prefix="gleaner-flood-")
os.chmod(data, 0o700)
sock = data + "/d/gleaner.sock"
daemon = subprocess.Popen([os.path.join(build, "gleaner"), "up", "--fake", "demo", "--data-dir",
                           data + "/d", "--for", "600"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    for _ in range(200):
        if os.path.exists(sock):
            break
        time.sleep(0.05)
    time.sleep(0.5)
    base = latencies(sock, requests, "/v1/whoami")
    spec = {"command": ["sleep", "3600"], "array": "1-%d" % tasks}
    status, answer, submit_ms = call(sock, "POST", "/v1/jobs", json.dumps(spec).encode())
    assert status == 201, answer
    over = call(sock, "POST", "/v1/jobs", json.dumps({"command": ["true"], "array": "1-20000"}).encode())
    read_base = latencies(sock, requests, "/v1/jobs/1")
    page_ms = statistics.median(call(sock, "GET", "/v1/jobs")[2] for _ in range(20))
    jobs, pages, walk_ms = walk(sock)
    stop = threading.Event()
    def pager():
        while not stop.is_set():
            walk(sock)
    t = threading.Thread(target=pager); t.start()
    time.sleep(0.2)
    loaded = latencies(sock, requests, "/v1/whoami")
    read_loaded = latencies(sock, requests, "/v1/jobs/1")
    stop.set(); t.join()
    call(sock, "POST", "/v1/jobs/%d/cancel?array=1" % answer["id"])  # stops what runs
    time.sleep(2)
    print("an array of %d tasks queued in %.0f ms; 20,000 more refused with %d" % (tasks, submit_ms, over[0]))
    print("GET /v1/jobs (a page of 500): median %.1f ms" % page_ms)
    print("every page, %d jobs in %d pages: %.0f ms" % (jobs, pages, walk_ms))
    print("whoami alone:               median %.2f ms, max %.2f ms" % base)
    print("whoami while pages are read: median %.2f ms, max %.2f ms" % loaded)
    print("ratio of medians: %.2f" % (loaded[0] / base[0]))
    print("GET /v1/jobs/1 alone:               median %.2f ms, max %.2f ms" % read_base)
    print("GET /v1/jobs/1 while pages are read: median %.2f ms, max %.2f ms" % read_loaded)
    print("ratio of medians: %.2f" % (read_loaded[0] / read_base[0]))
finally:
    daemon.terminate(); daemon.wait()
