"""The TorchElastic half of bench/peer/peer_bench.py.

A job of N = nodes x per_node CPU workers on loopback, launched as a multi-node job would be:
one `torchrun` agent per "node" (python3 -m torch.distributed.run --nnodes A
--nproc_per_node D --rdzv_backend c10d --rdzv_endpoint 127.0.0.1:PORT), agent 0 hosting the
c10d rendezvous store (--rdzv_conf is_host=1; the others is_host=0), as the node whose address
the endpoint names does. Each agent runs its workers (te_worker.py: gloo, small all-reduces).

One measurement kills (SIGKILL) a worker of the last agent (not the rendezvous host) and times
until every other worker has been stopped: its process exited, or it received SIGTERM from its
agent, or its all-reduce failed (a gloo error that ends the worker). The agents then restart
their workers (--max_restarts), so repetitions run on one launch.
"""
import glob
import os
import signal
import subprocess
import sys
import time

from measure import ExitWatch, MeasurementError, free_port, wait_for

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "te_worker.py")

# Debian's torch 1.13 cannot parse its own defaults `--redirects 0 --tee 0` on Python 3.11
# (Std.from_str iterates an IntFlag, which no longer yields the 0 member), so every launch
# fails in start_processes. A mapping for local rank 9 parses and leaves ranks 0-8 alone; our
# workers print nothing, so the redirect of local rank 9's stdout changes nothing either.
STD_WORKAROUND = ["--redirects", "9:1", "--tee", "9:1"]


class Worker:
    def __init__(self, pid):
        self.pid = pid
        self.rank = None
        self.agent = None
        self.start = None
        self.ready = None
        self.sigterm = None
        self.collective = None
        self.collective_error = ""

    def stopped_at(self, exit_time):
        """When the worker was stopped or told to stop (None: still running)."""
        times = [t for t in (self.sigterm, self.collective, exit_time) if t is not None]
        return min(times) if times else None

    def stopped_by(self, exit_time):
        first = self.stopped_at(exit_time)
        if first is None:
            return None
        if first == self.sigterm:
            return "sigterm"
        if first == self.collective:
            return "collective"
        return "exit"


def read_workers(out_dir):
    workers = {}
    for path in glob.glob(os.path.join(out_dir, "worker-*.log")):
        pid = int(os.path.basename(path)[len("worker-"):-len(".log")])
        w = Worker(pid)
        with open(path) as f:
            for line in f:
                parts = line.rstrip("\n").split(" ", 2)
                if len(parts) < 2:
                    continue
                event, at = parts[0], float(parts[1])
                detail = parts[2] if len(parts) > 2 else ""
                if event == "start":
                    w.start = at
                    fields = dict(kv.split("=") for kv in detail.split())
                    w.rank = int(fields["rank"])
                    w.agent = int(fields["agent"])
                elif event == "ready":
                    w.ready = at
                elif event == "sigterm":
                    w.sigterm = at
                elif event == "collective":
                    w.collective = at
                    w.collective_error = detail
        workers[pid] = w
    return workers


class ElasticJob:
    def __init__(self, ranks, per_node, monitor_interval, max_restarts, work_dir,
                 step_seconds=0.1, abort=None):
        if ranks % per_node:
            raise MeasurementError("%d ranks are not a whole number of %d-rank nodes"
                                   % (ranks, per_node))
        self.ranks = ranks
        self.per_node = per_node
        self.nodes = ranks // per_node
        self.monitor_interval = monitor_interval
        self.max_restarts = max_restarts
        self.work_dir = work_dir
        self.out_dir = os.path.join(work_dir, "workers")
        os.makedirs(self.out_dir, exist_ok=True)
        self.step_seconds = step_seconds
        self.port = free_port()
        self.agents = []  # subprocess.Popen, agent 0 hosts the rendezvous store
        self.abort = abort or (lambda: False)

    def check(self):
        if self.abort():
            raise MeasurementError("TorchElastic: stopped: the machine ran low on memory")

    def start(self):
        for node in range(self.nodes):
            log = open(os.path.join(self.work_dir, "agent-%d.log" % node), "w")
            cmd = [sys.executable, "-m", "torch.distributed.run",
                   "--nnodes", str(self.nodes), "--nproc_per_node", str(self.per_node),
                   "--rdzv_backend", "c10d", "--rdzv_endpoint", "127.0.0.1:%d" % self.port,
                   "--rdzv_id", "peer-bench", "--rdzv_conf", "is_host=%d" % (node == 0),
                   "--max_restarts", str(self.max_restarts),
                   "--monitor_interval", str(self.monitor_interval),
                   *STD_WORKAROUND,
                   WORKER, "--out", self.out_dir, "--step-seconds", str(self.step_seconds)]
            # Own session: the agent and its workers are one process group to clean up.
            self.agents.append(subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                                start_new_session=True))
            log.close()
            if node == 0:
                time.sleep(0.5)  # the host's store first, as a real host usually is

    def host(self):
        return self.agents[0]

    def agent_log(self, node):
        with open(os.path.join(self.work_dir, "agent-%d.log" % node)) as f:
            return f.read()

    def generation(self, since):
        """The workers started after `since` (one restart round of every agent)."""
        return {pid: w for pid, w in read_workers(self.out_dir).items()
                if w.start is not None and w.start >= since}

    def wait_ready(self, since, timeout):
        """Every rank of a new generation has done an all-reduce; returns the generation."""
        def ready():
            self.check()
            gen = self.generation(since)
            done = [w for w in gen.values() if w.ready is not None]
            return gen if len({w.rank for w in done}) == self.ranks else None
        gen = wait_for(ready, timeout, period=0.2)
        if not gen:
            raise MeasurementError(
                "TorchElastic: %d ranks did not all reach their first all-reduce in %.0f s "
                "(agents alive: %s)" % (self.ranks, timeout,
                                        [a.poll() is None for a in self.agents]))
        return {pid: w for pid, w in gen.items() if w.ready is not None}

    def kill_worker(self, gen, agent_index=-1):
        """SIGKILLs one worker of agent `agent_index`; returns (victim pid, kill time, watch of
        the others' exits)."""
        agent_pid = self.agents[agent_index].pid
        victims = sorted((w.rank, pid) for pid, w in gen.items() if w.agent == agent_pid)
        if not victims:
            raise MeasurementError("TorchElastic: agent %d has no worker" % agent_pid)
        victim = victims[0][1]
        watch = ExitWatch([pid for pid in gen if pid != victim])
        t_kill = time.monotonic()
        os.kill(victim, signal.SIGKILL)
        return victim, t_kill, watch

    def stop(self):
        """Ends every agent and every worker this job started (its process groups, then any
        worker still alive, e.g. one orphaned by a killed agent)."""
        for a in self.agents:
            if a.poll() is None:
                try:
                    os.killpg(a.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for a in self.agents:
            try:
                a.wait(timeout=40)
            except subprocess.TimeoutExpired:
                os.killpg(a.pid, signal.SIGKILL)
                a.wait()
        for pid in read_workers(self.out_dir):
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def measure_stop(job, gen, timeout):
    """Kills a worker of the last agent; returns a dict with the time until every other worker
    was stopped and how they were stopped."""
    victim, t_kill, watch = job.kill_worker(gen)
    others = [pid for pid in gen if pid != victim]

    def all_stopped():
        job.check()
        now = job.generation(0)
        return all(now[pid].stopped_at(watch.exited(pid)) is not None for pid in others)
    if not wait_for(all_stopped, timeout, period=0.02):
        raise MeasurementError("TorchElastic: not every worker stopped within %.0f s of the "
                               "kill" % timeout)
    now = job.generation(0)
    stops = {pid: now[pid].stopped_at(watch.exited(pid)) for pid in others}
    by = {}
    for pid in others:
        how = now[pid].stopped_by(watch.exited(pid))
        by[how] = by.get(how, 0) + 1
    last_pid = max(stops, key=stops.get)
    sigterms = [now[pid].sigterm for pid in others if now[pid].sigterm is not None]
    return {"seconds": stops[last_pid] - t_kill, "kill": t_kill,
            "first": min(stops.values()) - t_kill, "by": by,
            "last_by": now[last_pid].stopped_by(watch.exited(last_pid)),
            "first_sigterm": (min(sigterms) - t_kill) if sigterms else None}


def run_latency(ranks, per_node, monitor_interval, reps, work_dir, log, abort=None,
                step_seconds=0.1):
    """`reps` kills on one launch; returns the list of measurements."""
    job = ElasticJob(ranks, per_node, monitor_interval, max_restarts=reps + 3,
                     work_dir=work_dir, step_seconds=step_seconds, abort=abort)
    results = []
    try:
        job.start()
        since = 0.0
        for rep in range(reps):
            gen = job.wait_ready(since, timeout=120 + 5 * ranks)
            time.sleep(1.0)  # a few steps of steady training
            m = measure_stop(job, gen, timeout=10 * monitor_interval + 60)
            log("  TorchElastic N=%d monitor %gs rep %d: %.3f s (first %.3f s, first SIGTERM "
                "%s, last by %s; %s)" % (
                    ranks, monitor_interval, rep + 1, m["seconds"], m["first"],
                    "-" if m["first_sigterm"] is None else "%.3f s" % m["first_sigterm"],
                    m["last_by"], ", ".join("%s %d" % kv for kv in sorted(m["by"].items()))))
            results.append(m)
            since = m["kill"]
    finally:
        job.stop()
    return results


def run_host_kill(ranks, per_node, monitor_interval, work_dir, log, kill_host,
                  observe=150.0, step_seconds=0.1):
    """Kills a worker; once every other worker has been stopped (the agents are between
    stopping their workers and the next rendezvous round: the middle of the recovery),
    optionally SIGKILLs the agent hosting the c10d rendezvous store. Then watches for `observe`
    seconds whether a new generation reaches its first all-reduce (recovered) or the remaining
    agents all exit (died)."""
    job = ElasticJob(ranks, per_node, monitor_interval, max_restarts=3, work_dir=work_dir,
                     step_seconds=step_seconds)
    outcome = {"kill_host": kill_host}
    try:
        job.start()
        gen = job.wait_ready(0.0, timeout=120 + 5 * ranks)
        time.sleep(1.0)
        stop = measure_stop(job, gen, timeout=10 * monitor_interval + 60)
        t_kill = stop["kill"]
        outcome["stopped_after"] = stop["seconds"]
        if kill_host:
            job.host().send_signal(signal.SIGKILL)
            job.host().wait()
            outcome["host_killed_at"] = time.monotonic() - t_kill
        survivors = job.agents[1:] if kill_host else job.agents

        def settled():
            g = job.generation(t_kill)
            ready = {w.rank for w in g.values() if w.ready is not None}
            if len(ready) == ranks:
                return "recovered"
            if all(a.poll() is not None for a in survivors):
                return "died"
            return None
        result = wait_for(settled, observe, period=0.1)
        outcome["result"] = result or "neither within %.0f s" % observe
        outcome["seconds"] = time.monotonic() - t_kill
        outcome["agent_exit_codes"] = [a.poll() for a in job.agents]
        outcome["host_workers_alive"] = len([
            pid for pid, w in job.generation(0).items()
            if w.agent == job.host().pid and _alive(pid)])
        if kill_host:
            errors = [ln for ln in job.agent_log(1).splitlines()
                      if "Error" in ln or "error" in ln]
            outcome["survivor_error"] = errors[-1].strip()[:200] if errors else ""
        log("  TorchElastic N=%d, %s: %s %.1f s after the worker kill (agents' exit codes %s)"
            % (ranks, "rendezvous host killed mid-recovery" if kill_host else "no host kill",
               outcome["result"], outcome["seconds"], outcome["agent_exit_codes"]))
    finally:
        job.stop()
    return outcome


def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False
