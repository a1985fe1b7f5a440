"""What both halves of bench/peer/peer_bench.py share: percentiles, a free loopback port, the
moment processes exit (pidfd), and a guard that stops a run before the machine runs out of
memory."""
import math
import os
import select
import socket
import threading
import time


class MeasurementError(Exception):
    """A measurement could not be taken (the harness exits non-zero)."""


def percentile(values, q):
    """Nearest-rank percentile of a non-empty list."""
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, math.ceil(q / 100.0 * len(ordered)) - 1))
    return ordered[k]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mem_available_bytes():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    raise MeasurementError("/proc/meminfo has no MemAvailable")


def load_average():
    return os.getloadavg()


class ExitWatch:
    """Stamps the moment each watched process exits (time.monotonic(), via pidfd_open and poll:
    the processes need not be our children)."""

    def __init__(self, pids):
        self.exits = {}
        self._cond = threading.Condition()
        self._poll = select.poll()
        self._fds = {}
        for pid in pids:
            try:
                fd = os.pidfd_open(pid)
            except ProcessLookupError:
                self.exits[pid] = time.monotonic()
                continue
            self._fds[fd] = pid
            self._poll.register(fd, select.POLLIN)
        self._thread = threading.Thread(target=self._run, daemon=True, name="exit-watch")
        self._thread.start()

    def _run(self):
        while self._fds:
            for fd, _ in self._poll.poll(200):
                now = time.monotonic()
                pid = self._fds.pop(fd)
                self._poll.unregister(fd)
                os.close(fd)
                with self._cond:
                    self.exits[pid] = now
                    self._cond.notify_all()

    def exited(self, pid):
        with self._cond:
            return self.exits.get(pid)


class MemoryGuard:
    """Calls `on_low` once, from its own thread, when MemAvailable drops below `floor` bytes."""

    def __init__(self, floor, on_low, period=0.5):
        self.floor = floor
        self.on_low = on_low
        self.period = period
        self.tripped = False
        self.lowest = mem_available_bytes()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="memory-guard")
        self._thread.start()

    def _run(self):
        while not self._stop.wait(self.period):
            available = mem_available_bytes()
            self.lowest = min(self.lowest, available)
            if available < self.floor and not self.tripped:
                self.tripped = True
                self.on_low(available)

    def stop(self):
        self._stop.set()
        self._thread.join()


def wait_for(pred, timeout, period=0.05):
    """Polls pred() until it is true or `timeout` seconds pass; returns its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = pred()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(period)
