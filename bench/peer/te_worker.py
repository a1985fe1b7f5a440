"""One TorchElastic worker for bench/peer/peer_bench.py, started by torchrun.

A gloo process group and a loop of small all-reduces, so that the workers are really in a
collective when one of them dies. The worker writes what happens to it, one line per event, to
<--out>/worker-<pid>.log ("<event> <time.monotonic()> <detail>"; CLOCK_MONOTONIC is
the same clock in every process of the machine):

  start      rank, agent pid, restart count, world size, once the process group exists
  ready      after its first all-reduce (the harness waits for every worker to be ready)
  sigterm    the moment SIGTERM arrived (the agent's "stop" to its workers)
  collective the all-reduce failed (a peer died); the worker then exits 1, as a training
             script without error handling would

SIGTERM is stamped by a thread woken through signal.set_wakeup_fd, which the interpreter writes
from its C-level handler at once, even while the main thread waits inside gloo; the thread then
ends the process with status 143, like the default action would.
"""
import argparse
import os
import signal
import sys
import threading
import time

import torch
import torch.distributed as dist


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="directory for the per-worker event logs")
    p.add_argument("--step-seconds", type=float, default=0.05,
                   help="'compute' between two all-reduces (sleep)")
    p.add_argument("--elements", type=int, default=1024, help="float32 elements per all-reduce")
    return p.parse_args()


class EventLog:
    def __init__(self, path):
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def write(self, event, detail=""):
        line = "%s %.6f %s\n" % (event, time.monotonic(), detail.replace("\n", " "))
        os.write(self.fd, line.encode())


def stamp_sigterm(log):
    """SIGTERM -> 'sigterm' line -> exit 143, without waiting for the main thread."""
    r, w = os.pipe()
    os.set_blocking(w, False)
    signal.set_wakeup_fd(w)
    signal.signal(signal.SIGTERM, lambda *_: None)  # the wakeup fd does the work

    def watch():
        while True:
            data = os.read(r, 16)
            if signal.SIGTERM in data:
                log.write("sigterm")
                os._exit(128 + signal.SIGTERM)

    threading.Thread(target=watch, daemon=True, name="sigterm-stamp").start()


def main():
    args = parse_args()
    rank = int(os.environ["RANK"])
    restart = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    log = EventLog(os.path.join(args.out, "worker-%d.log" % os.getpid()))
    stamp_sigterm(log)
    dist.init_process_group("gloo")
    log.write("start", "rank=%d agent=%d restart=%d world=%d" % (
        rank, os.getppid(), restart, dist.get_world_size()))
    x = torch.ones(args.elements)
    first = True
    while True:
        try:
            dist.all_reduce(x)
        except Exception as err:  # noqa: BLE001 - a dead peer; the script has no recovery
            log.write("collective", repr(err)[:200])
            sys.exit(1)
        if first:
            log.write("ready")
            first = False
        x.fill_(1.0)
        time.sleep(args.step_seconds)


if __name__ == "__main__":
    main()
