"""The clusterd half of bench/peer/peer_bench.py.

A real clusterd on a `dir` store in a temporary directory (port 0), holding a job of the same
shape as the TorchElastic one: N/D pods (one per node) of D ranks each (job_objects.write_job).
The job's clients are laid out as TaskD lays them out:

* one TaskD manager per job (taskd_client.TaskdClient + ScriptedAgent, the Python toolkit's
  loop: Init, Register, SubscribeProcessManageSignal, reconnect on a broken stream). clusterd
  keeps one signal stream per job (recovery-protocol.md §2.3: a second Subscribe ends the
  first), so the ranks cannot each subscribe to clusterd;
* one client per rank (taskd_rank.py, a process of its own, like a training process), which
  subscribes to the manager: the manager serves the Recover service's
  SubscribeProcessManageSignal to its ranks (RankRelay) and forwards every signal clusterd
  sends it. Each rank also keeps a channel to clusterd, on which a failing rank reports its own
  fault (ReportProcessFault), as MindIO does.

One measurement: the last rank reports a fault (faultType 1); the time from just before its
ReportProcessFault until every other rank's client has received stopTrain, split into
clusterd's part (report -> the manager holds stopTrain) and the manager's fan-out. The manager
then answers the rest of the cycle like a well-behaved job (ScriptedAgent); the next repetition
starts once the cycle has ended and the manager has subscribed again.
"""
import json
import os
import queue
import selectors
import subprocess
import sys
import threading
import time
import urllib.request
from concurrent import futures

import grpc

import job_objects
import recover_pb2
import recover_pb2_grpc
from clusterd_harness import Clusterd
from measure import MeasurementError, wait_for
from taskd_client import KEEP_ALIVE, ScriptedAgent, TaskdClient

HERE = os.path.dirname(os.path.abspath(__file__))
RANK_CLIENT = os.path.join(HERE, "taskd_rank.py")
NS = "default"
JOB_NAME = "peer-bench"
JOB_UID = "3f0c6a5e-0000-4000-8000-00000000beef"
STOP_TRAIN = "stopTrain"


class RankRelay(recover_pb2_grpc.RecoverServicer):
    """The manager's side of its ranks' streams: every signal broadcast goes to every stream.
    A stream opens with one keep-alive, so that the rank knows it is subscribed."""

    def __init__(self):
        self._lock = threading.Lock()
        self._queues = []

    def SubscribeProcessManageSignal(self, request, context):
        q = queue.Queue()
        with self._lock:
            self._queues.append(q)
        try:
            yield recover_pb2.ProcessManageSignal(jobId=request.jobId, signalType=KEEP_ALIVE)
            while context.is_active():
                try:
                    signal = q.get(timeout=0.5)
                except queue.Empty:
                    continue
                if signal is None:
                    return
                yield signal
        finally:
            with self._lock:
                self._queues.remove(q)

    def broadcast(self, signal):
        with self._lock:
            for q in self._queues:
                q.put(signal)

    def close(self):
        self.broadcast(None)


class Manager(ScriptedAgent):
    """The TaskD manager's policy: stamp each signal, forward it to the ranks, then answer it
    like a well-behaved job. `hook`, when set, runs on a signal before it is forwarded."""

    def __init__(self, job_id, relay):
        super().__init__(job_id)
        self.relay = relay
        self.arrivals = []  # (signalType, uuid, time.monotonic())
        self.hook = None

    def on_signal(self, signal, client):
        if signal.signalType != KEEP_ALIVE:
            self.arrivals.append((signal.signalType, signal.uuid, time.monotonic()))
            if self.hook is not None:
                self.hook(signal)
            self.relay.broadcast(signal)
        super().on_signal(signal, client)

    def first_after(self, mark, signal_type):
        for kind, _, at in self.arrivals[mark:]:
            if kind == signal_type:
                return at
        return None


class RankClients:
    """N taskd_rank.py processes and what each printed ("<event> <time> <detail>")."""

    def __init__(self, n, relay_address, clusterd_address, proto_py_dir, log_dir):
        self.events = [[] for _ in range(n)]
        self._cond = threading.Condition()
        self._selector = selectors.DefaultSelector()
        self.procs = []
        for rank in range(n):
            err = open(os.path.join(log_dir, "rank-%d.err" % rank), "w")
            p = subprocess.Popen(
                [sys.executable, RANK_CLIENT, "--relay", relay_address,
                 "--clusterd", clusterd_address, "--job", JOB_UID, "--rank", str(rank),
                 "--proto-py-dir", proto_py_dir],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True, bufsize=1)
            err.close()
            self.procs.append(p)
            self._selector.register(p.stdout, selectors.EVENT_READ, rank)
        self._open = n
        threading.Thread(target=self._read, daemon=True, name="rank-reader").start()

    def _read(self):
        while self._open:
            for key, _ in self._selector.select(timeout=0.5):
                line = key.fileobj.readline()
                if not line:
                    self._selector.unregister(key.fileobj)
                    self._open -= 1
                    continue
                parts = line.rstrip("\n").split(" ", 2)
                if len(parts) < 2:
                    continue
                with self._cond:
                    self.events[key.data].append(
                        (parts[0], float(parts[1]), parts[2] if len(parts) > 2 else ""))
                    self._cond.notify_all()

    def mark(self):
        with self._cond:
            return [len(e) for e in self.events]

    def first(self, rank, event, detail_prefix="", mark=None):
        with self._cond:
            for kind, at, detail in self.events[rank][(mark or [0] * len(self.events))[rank]:]:
                if kind == event and detail.startswith(detail_prefix):
                    return at, detail
        return None

    def count(self, rank, event, detail_prefix="", mark=None):
        with self._cond:
            return sum(1 for kind, _, detail in
                       self.events[rank][(mark or [0] * len(self.events))[rank]:]
                       if kind == event and detail.startswith(detail_prefix))

    def wait(self, pred, timeout):
        deadline = time.monotonic() + timeout
        with self._cond:
            while not pred():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.2))
        return True

    def fault(self, rank):
        self.procs[rank].stdin.write("fault\n")
        self.procs[rank].stdin.flush()

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            p.stdin.close()


class ClusterdJob:
    """clusterd, the job's objects, the manager, its relay and the rank clients."""

    def __init__(self, ranks, per_node, work_dir, proto_py_dir):
        if ranks % per_node:
            raise MeasurementError("%d ranks are not a whole number of %d-rank nodes"
                                   % (ranks, per_node))
        self.ranks = ranks
        self.work_dir = work_dir
        self.state = os.path.join(work_dir, "state")
        os.makedirs(self.state, exist_ok=True)
        job_objects.write_job(self.state, NS, JOB_NAME, JOB_UID, pods=ranks // per_node,
                              npus_per_pod=per_node)
        self.clusterds = [Clusterd(store="dir:" + self.state, extra_args=["--http-store-mirror"])]
        self.grpc_address = self.clusterd.grpc_address
        self.relay = RankRelay()
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=ranks + 8))
        recover_pb2_grpc.add_RecoverServicer_to_server(self.relay, self.server)
        self.relay_address = "127.0.0.1:%d" % self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()
        self.manager = Manager(JOB_UID, self.relay)
        self.client = TaskdClient(self.grpc_address, JOB_UID, self.manager)
        self.client.start()
        if not self.client.wait_until(lambda: self.client.subscribed, 30):
            raise MeasurementError("clusterd: the manager never subscribed: %s"
                                   % dict(self.client.stats))
        self.rank_clients = RankClients(ranks, self.relay_address, self.grpc_address,
                                        os.environ["PROTO_PY_DIR"], work_dir)
        if not self.rank_clients.wait(
                lambda: all(self.rank_clients.first(r, "subscribed") for r in range(ranks)),
                60 + ranks):
            raise MeasurementError("clusterd: not every rank client subscribed to the manager")

    @property
    def clusterd(self):
        return self.clusterds[-1]

    def idle(self):
        return self.client.subscribed and self.manager.phase == "training"

    def wait_idle(self, timeout):
        if not self.client.wait_until(self.idle, timeout):
            raise MeasurementError("clusterd: the job did not return to training within %.0f s "
                                   "(phase %s, record state %s)"
                                   % (timeout, self.manager.phase, self.record_state()))

    def kill(self):
        """SIGKILL clusterd (a crash: the store stays as the process left it); returns when
        it is dead."""
        self.clusterd.proc.kill()
        self.clusterd.proc.wait()
        return time.monotonic()

    def restart(self):
        """Starts clusterd again on the same store and gRPC port; returns when it serves."""
        self.clusterds.append(Clusterd(store="dir:" + self.state,
                                       extra_args=["--http-store-mirror"],
                                       grpc_listen=self.grpc_address))
        return time.monotonic()

    def _get(self, path):
        url = "http://%s%s" % (self.clusterd.http_address, path)
        with urllib.request.urlopen(url, timeout=5) as r:
            return json.load(r)

    def first_signal_histogram(self):
        """(sum, count) of clusterd_recovery_first_signal_seconds: an event posted to the
        job's controller until the first signal it queues (clusterd's own share)."""
        url = "http://%s/metrics" % self.clusterd.http_address
        with urllib.request.urlopen(url, timeout=5) as r:
            text = r.read().decode()
        values = {}
        for line in text.splitlines():
            for suffix in ("_sum", "_count"):
                name = "clusterd_recovery_first_signal_seconds" + suffix
                if line.startswith(name + " ") or line.startswith(name + "{"):
                    values[suffix] = values.get(suffix, 0.0) + float(line.split()[-1])
        return values.get("_sum", 0.0), values.get("_count", 0.0)

    def recover_status(self):
        """The PodGroup's ProcessRecoverStatus annotation (e.g. "recover-success")."""
        try:
            pg = self._get("/api/v1/namespaces/%s/podgroups/%s-pg" % (NS, JOB_NAME))
        except Exception:  # noqa: BLE001 - not readable yet (restarting)
            return ""
        return pg.get("metadata", {}).get("annotations", {}).get("ProcessRecoverStatus", "")

    def record_state(self):
        try:
            cm = self._get("/api/v1/namespaces/%s/configmaps/clusterd-recovery-%s"
                           % (NS, JOB_UID))
            return json.loads(cm["data"]["record.json"]).get("state", "")
        except Exception as err:  # noqa: BLE001 - reported, not fatal
            return "unreadable (%s)" % err

    def stop(self):
        self.rank_clients.stop() if hasattr(self, "rank_clients") else None
        self.client.stop()
        self.relay.close()
        self.server.stop(grace=1)
        for c in self.clusterds:
            if c.proc.poll() is None:
                c.stop()


def measure_stop(job, reporter, timeout=30.0):
    """One fault report; returns the times of its stopTrain to every other rank."""
    rc = job.rank_clients
    mark = rc.mark()
    mgr_mark = len(job.manager.arrivals)
    subscribes = job.client.stats["subscribes"]
    resumed = job.manager.resumed
    others = [r for r in range(job.ranks) if r != reporter]
    before = job.first_signal_histogram()
    rc.fault(reporter)
    if not rc.wait(lambda: all(rc.first(r, "signal", STOP_TRAIN, mark) for r in others),
                   timeout):
        missing = [r for r in others if not rc.first(r, "signal", STOP_TRAIN, mark)]
        raise MeasurementError("clusterd: ranks %s got no stopTrain within %.0f s (reported: "
                               "%s)" % (missing[:8], timeout,
                                        rc.first(reporter, "reported", "", mark)))
    t_report = rc.first(reporter, "report", "", mark)[0]
    stops = [rc.first(r, "signal", STOP_TRAIN, mark)[0] for r in others]
    t_mgr = job.manager.first_after(mgr_mark, STOP_TRAIN)
    after = job.first_signal_histogram()
    controller = (after[0] - before[0]) / (after[1] - before[1]) if after[1] > before[1] \
        else None
    return {"controller": controller, "seconds": max(stops) - t_report,
            "in_clusterd": t_mgr - t_report, "fan_out": max(stops) - t_mgr,
            "first": min(stops) - t_report,
            "report": t_report, "subscribes": subscribes, "resumed": resumed}


def wait_cycle_end(job, m, timeout=120.0):
    """The rest of a measured cycle (StopComplete, globalFault, changeStrategy, the result) and
    the manager's new subscription (known at its first keep-alive, 5 s on): seconds from the
    report, or None."""
    ended = job.client.wait_until(
        lambda: job.manager.resumed > m["resumed"] and job.client.subscribed and
        job.client.stats["subscribes"] > m["subscribes"], timeout)
    return (time.monotonic() - m["report"]) if ended else None


def run_latency(ranks, per_node, reps, work_dir, log):
    job = ClusterdJob(ranks, per_node, work_dir, os.environ["PROTO_PY_DIR"])
    results = []
    try:
        for rep in range(reps):
            job.wait_idle(30)
            time.sleep(0.5)
            m = measure_stop(job, reporter=ranks - 1)
            log("  clusterd N=%d rep %d: %.2f ms (report -> manager %.2f ms, of which the "
                "controller %s; fan-out %.2f ms)"
                % (ranks, rep + 1, 1e3 * m["seconds"], 1e3 * m["in_clusterd"],
                   "%.2f ms" % (1e3 * m["controller"]) if m["controller"] is not None else "?",
                   1e3 * m["fan_out"]))
            if rep + 1 < reps:  # the next repetition needs the job back in training
                m["cycle"] = wait_cycle_end(job, m)
                if m["cycle"] is None:
                    raise MeasurementError("clusterd: the recovery cycle did not end (record "
                                           "state %s)" % job.record_state())
                log("    cycle ended, manager subscribed again %.1f s after the report"
                    % m["cycle"])
            results.append(m)
    finally:
        job.stop()
    return results


def run_crash(ranks, per_node, work_dir, log, kill_point, observe=120.0):
    """SIGKILLs clusterd in the middle of a recovery and restarts it on the same store and
    port. kill_point "after-report": as soon as the reporting rank has its answer;
    "on-stoptrain": when the manager holds stopTrain, before it forwards it to the ranks.
    Returns what happened: whether every other rank got stopTrain, when, and whether the cycle
    went on to its end once the manager had reconnected."""
    job = ClusterdJob(ranks, per_node, work_dir, os.environ["PROTO_PY_DIR"])
    rc = job.rank_clients
    reporter = ranks - 1
    others = [r for r in range(ranks) if r != reporter]
    out = {"kill_point": kill_point}
    times = {}
    try:
        job.wait_idle(60)
        time.sleep(0.5)
        mark = rc.mark()
        mgr_mark = len(job.manager.arrivals)
        if kill_point == "on-stoptrain":
            def hook(signal):
                if signal.signalType == STOP_TRAIN and "kill" not in times:
                    times["kill"] = time.monotonic()
                    times["dead"] = job.kill()
            job.manager.hook = hook
        rc.fault(reporter)
        if kill_point == "after-report":
            if not rc.wait(lambda: rc.first(reporter, "reported", "", mark), 10):
                raise MeasurementError("clusterd: the fault report got no answer")
            times["kill"] = time.monotonic()
            times["dead"] = job.kill()
            out["stoptrain_before_kill"] = job.manager.first_after(mgr_mark, STOP_TRAIN) \
                is not None
        else:
            if not wait_for(lambda: "dead" in times, 30):
                raise MeasurementError("clusterd: no stopTrain reached the manager")
            out["stoptrain_before_kill"] = True
        times["up"] = job.restart()
        t_report = rc.first(reporter, "report", "", mark)[0]
        out["report_answer"] = rc.first(reporter, "reported", "", mark)[1]
        out["restart_seconds"] = times["up"] - times["dead"]
        got_all = rc.wait(lambda: all(rc.first(r, "signal", STOP_TRAIN, mark) for r in others),
                          observe)
        out["all_ranks_stopped"] = got_all
        if got_all:
            last = max(rc.first(r, "signal", STOP_TRAIN, mark)[0] for r in others)
            out["stop_after_report"] = last - t_report
            out["stop_after_kill"] = last - times["kill"]
        ended = wait_for(lambda: job.recover_status() == "recover-success", observe, 0.05)
        out["cycle_ended"] = bool(ended)
        out["cycle_seconds"] = (time.monotonic() - t_report) if ended else None
        out["stoptrain_per_rank"] = max(rc.count(r, "signal", STOP_TRAIN, mark) for r in others)
        out["signals"] = [kind for kind, _, _ in job.manager.arrivals]
        out["replies"] = [r for r in job.manager.replies]
        out["record_state"] = job.record_state()
        log("  clusterd N=%d, SIGKILL %s: every rank stopTrain %s; cycle %s; manager saw %s"
            % (ranks, kill_point,
               "%.2f s after the report" % out["stop_after_report"] if got_all else "NO",
               "ended after %.1f s" % out["cycle_seconds"] if ended else
               "did not end (record state %s)" % out["record_state"],
               ",".join(out["signals"])))
    finally:
        job.stop()
    return out
