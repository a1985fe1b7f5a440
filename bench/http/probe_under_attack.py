#!/usr/bin/python3
"""Times GET /healthz on clusterd's HTTP port while other connections attack it.

Starts `clusterd --store memory --http-listen 127.0.0.1:0` (or uses --address), then
  * opens --idle connections that send nothing,
  * opens --slowloris connections that send one header byte every second,
and times --probes GET /healthz requests (one new connection each, 5 s timeout), printing
p50/p99/max and how many failed. With --bodies N it then sends N request bodies of --body-mib
MiB each (Content-Length announced, bytes streamed) and prints the daemon's VmRSS before/after.

  bench/http/probe_under_attack.py --clusterd build/apps/clusterd/clusterd --idle 100 --slowloris 100
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time


def vm_rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def probe(host, port, timeout=5.0):
    start = time.monotonic()
    try:
        s = socket.create_connection((host, port), timeout=timeout)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        s.close()
        ok = data.startswith(b"HTTP/1.1 200")
    except OSError:
        ok = False
    return ok, (time.monotonic() - start) * 1000.0


def percentile(values, p):
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clusterd", help="binary to start (memory store, port 0)")
    ap.add_argument("--extra", default="", help="extra clusterd flags")
    ap.add_argument("--address", help="host:port of a running clusterd instead")
    ap.add_argument("--idle", type=int, default=0)
    ap.add_argument("--slowloris", type=int, default=0)
    ap.add_argument("--attack-host", default="127.0.0.2",
                    help="source address of the attacking connections (probes use 127.0.0.1)")
    ap.add_argument("--warmup", type=float, default=3.0, help="seconds of attack before probing")
    ap.add_argument("--probes", type=int, default=50)
    ap.add_argument("--bodies", type=int, default=0)
    ap.add_argument("--body-mib", type=int, default=400)
    args = ap.parse_args()

    proc = None
    if args.address:
        host, port = args.address.rsplit(":", 1)
        port = int(port)
        pid = None
    else:
        tmp = tempfile.mkdtemp()
        info = os.path.join(tmp, "listen.json")
        proc = subprocess.Popen([args.clusterd, "--store", "memory", "--grpc-listen", "127.0.0.1:0",
                                 "--http-listen", "127.0.0.1:0", "--listen-info-file", info,
                                 "--log-level", "error"] + args.extra.split(),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(300):
            if os.path.exists(info) and os.path.getsize(info) > 0:
                break
            time.sleep(0.1)
        host, port = json.load(open(info))["http"].rsplit(":", 1)
        port = int(port)
        pid = proc.pid

    stop = threading.Event()
    socks = []

    def connect():
        s = socket.socket()
        s.bind((args.attack_host, 0))
        s.settimeout(2)
        s.connect((host, port))
        return s

    refused = 0
    for _ in range(args.idle):
        try:
            socks.append(connect())
        except OSError:
            refused += 1
    loris = []
    for _ in range(args.slowloris):
        try:
            s = connect()
            s.sendall(b"GET /healthz HTTP/1.1\r\n")
            loris.append(s)
        except OSError:
            refused += 1

    def drip():
        while not stop.is_set():
            for s in list(loris):
                try:
                    s.send(b"X")
                except OSError:
                    loris.remove(s)
            stop.wait(1.0)

    t = threading.Thread(target=drip, daemon=True)
    t.start()
    time.sleep(args.warmup)
    lat, failed = [], 0
    for _ in range(args.probes):
        ok, ms = probe(host, port)
        lat.append(ms)
        failed += 0 if ok else 1
        time.sleep(0.05)
    print("attack: idle=%d slowloris=%d (refused at connect: %d)" % (args.idle, args.slowloris, refused))
    print("healthz: n=%d failed=%d p50=%.1fms p99=%.1fms max=%.1fms" %
          (len(lat), failed, percentile(lat, 50), percentile(lat, 99), max(lat)))
    stop.set()
    for s in socks + loris:
        s.close()

    if args.bodies and pid:
        before = vm_rss_kib(pid)
        chunk = b"x" * (1 << 20)
        threads = []
        results = []

        def send_body():
            try:
                s = socket.create_connection((host, port), timeout=30)
                s.sendall(("POST /api/v1/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: "
                           "application/json\r\nContent-Length: %d\r\n\r\n" %
                           (args.body_mib << 20)).encode())
                sent = 0
                for _ in range(args.body_mib):
                    try:
                        s.sendall(chunk)
                        sent += 1
                    except OSError:
                        break
                s.settimeout(5)
                try:
                    head = s.recv(100).split(b"\r\n")[0].decode(errors="replace")
                except OSError as e:
                    head = "no answer (%s)" % e
                results.append((sent, head))
                s.close()
            except OSError as e:
                results.append((0, "error %s" % e))

        for _ in range(args.bodies):
            th = threading.Thread(target=send_body)
            th.start()
            threads.append(th)
        peak = before
        while any(th.is_alive() for th in threads):
            peak = max(peak, vm_rss_kib(pid))
            time.sleep(0.05)
        after = vm_rss_kib(pid)
        print("bodies: %d x %d MiB: answers %s" % (args.bodies, args.body_mib, results))
        print("VmRSS: before=%d KiB peak=%d KiB after=%d KiB" % (before, peak, after))

    if proc:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    sys.exit(main())
