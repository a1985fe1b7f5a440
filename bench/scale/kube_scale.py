#!/usr/bin/python3
"""One clusterd on the Kubernetes store at scale, against the API-server fixture.

Loads NODES nodes (Node objects and device-info ConfigMaps of NPUS NPUs each, shaped as
restart_to_ready.py writes them) and JOBS jobs (a PodGroup and PODS pods each) into
tests/fixtures/kube_apiserver.py before it serves (--preload), starts a real clusterd with
`--store kube` on a kubeconfig of the fixture, and measures from the fixture's audit log
(every request, with its time and latency):

  start-up     time to /readyz 200 and to clusterd's first cluster-info shard write; a fault
               written right after ready, until it is mapped onto its job; clusterd's API
               requests by verb and resource until ready and until every job is registered
  idle         clusterd's requests per second with nothing happening
  single fault one node's device-info ConfigMap rewritten with a SeparateNPU fault, FAULTS
               times (one after another): write -> the fault mapped onto its job in
               /api/clusterd/v1/faults, and clusterd's requests in the WINDOW seconds after it
  storm        STORM faults written at once on STORM different nodes (WRITERS connections):
               clusterd's writes per second (all, and cluster-info shards), its lists, the
               time until every fault is mapped, and the fixture's request latency meanwhile
  restart      (--restart) clusterd stopped and started again on the same API server: time
               to ready and clusterd's requests until every job was reconciled once (the
               summaries are there already: none of them is written again)

Prints one table and the budget (below) with a verdict per line. Exits 1 when a measurement
fails (a fault never mapped, clusterd not ready, ...), 2 when it completes but breaks the
budget.

  /usr/bin/python3 bench/scale/kube_scale.py --clusterd build/apps/clusterd/clusterd \\
      --nodes 10000 --jobs 1000 --storm 1000

The fixture is single-process Python: its latencies say whether clusterd's own load would put
an API server's SLO at risk only in proportion (a real API server is much faster); the
request counts are what a real API server would see.
"""
import argparse
import collections
import concurrent.futures
import http.client
import json
import os
import secrets
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import restart_to_ready as cluster  # noqa: E402  (the objects' shapes)
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "fixtures"))
from fixture_process import stop_process  # noqa: E402

FIXTURE = os.path.join(HERE, "..", "..", "tests", "fixtures", "kube_apiserver.py")
CLUSTERD_USER = "clusterd"
BENCH_USER = "bench"
FAULT_CODE = "80E3A201"  # SeparateNPU
FAULT_NPU = 5
WRITE_VERBS = ("create", "update", "patch", "delete")
CLUSTER_INFO_PREFIX = "cluster-info-"


class Failure(Exception):
    """A measurement that could not be taken."""


# --- the API-server fixture -------------------------------------------------------------------

class Fixture:
    """kube_apiserver.py with the cluster preloaded; `put_config_map` writes as the npu-agents
    do (a whole device-info ConfigMap, one keep-alive connection per calling thread)."""

    def __init__(self, work, preload, history_limit):
        self.dir = work
        self.pki = os.path.join(work, "pki")
        self.audit_path = os.path.join(work, "audit.jsonl")
        self.clusterd_token = secrets.token_hex(16)
        self.bench_token = secrets.token_hex(16)
        ready = os.path.join(work, "fixture-ready.json")
        self.log = open(os.path.join(work, "fixture.log"), "w")
        # The clusterd token first: kubeconfig-token.yaml is written for it.
        self.proc = subprocess.Popen(
            ["/usr/bin/python3", FIXTURE, "--pki-dir", self.pki, "--ready-file", ready,
             "--token", "%s=%s" % (self.clusterd_token, CLUSTERD_USER),
             "--token", "%s=%s" % (self.bench_token, BENCH_USER),
             "--control-token", secrets.token_hex(16), "--history-limit", str(history_limit),
             "--audit-log", self.audit_path, "--preload", preload],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 600
        while not os.path.exists(ready):
            if self.proc.poll() is not None:
                raise Failure("the fixture exited (%s/fixture.log)" % work)
            if time.monotonic() > deadline:
                raise Failure("the fixture did not load the cluster within 600 s")
            time.sleep(0.05)
        with open(ready) as f:
            info = json.load(f)
        self.host, self.port = "127.0.0.1", info["port"]
        self.kubeconfig = os.path.join(self.pki, "kubeconfig-token.yaml")
        self.ssl = ssl.create_default_context(cafile=os.path.join(self.pki, "ca.crt"))
        self.local = threading.local()

    def put_config_map(self, obj):
        """PUT of a whole ConfigMap (unconditional); returns the HTTP status."""
        meta = obj["metadata"]
        path = "/api/v1/namespaces/%s/configmaps/%s" % (meta["namespace"], meta["name"])
        body = json.dumps(obj, separators=(",", ":")).encode()
        for attempt in range(2):
            conn = getattr(self.local, "conn", None)
            if conn is None:
                conn = http.client.HTTPSConnection(self.host, self.port, context=self.ssl,
                                                   timeout=30)
                self.local.conn = conn
            try:
                conn.request("PUT", path, body, {"Authorization": "Bearer " + self.bench_token,
                                                 "Content-Type": "application/json"})
                resp = conn.getresponse()
                resp.read()
                return resp.status
            except (OSError, http.client.HTTPException):
                conn.close()
                self.local.conn = None
                if attempt == 1:
                    raise
        return None

    def close(self):
        stop_process(self.proc)
        self.log.close()


class Audit:
    """The fixture's audit log, read as it grows: every request with "time" (start, epoch
    seconds) and "seconds" (latency)."""

    def __init__(self, path):
        self.path, self.offset, self.entries = path, 0, []

    def refresh(self):
        with open(self.path) as f:
            f.seek(self.offset)
            data = f.read()
        end = data.rfind("\n") + 1  # a line being written is read next time
        self.offset += len(data[:end].encode())
        self.entries.extend(json.loads(line) for line in data[:end].splitlines() if line)
        return self.entries

    def between(self, start, end, user=None):
        return [e for e in self.refresh() if "time" in e and start <= e["time"] < end
                and (user is None or e["user"] == user)]


def write_preload(path, args):
    """The cluster as JSON lines for the fixture's --preload; returns (objects, seconds)."""
    t = time.monotonic()
    count = 0
    with open(path, "w") as f:
        for _, _, _, obj in cluster.cluster_objects(args.nodes, args.npus, args.jobs, args.pods):
            f.write(json.dumps(obj, separators=(",", ":")) + "\n")
            count += 1
    return count, time.monotonic() - t


# --- clusterd ---------------------------------------------------------------------------------

class Clusterd:
    def __init__(self, binary, work, kubeconfig, label=""):
        self.info = os.path.join(work, "listen-info%s.json" % label)
        self.log_path = os.path.join(work, "clusterd%s.log" % label)
        self.log = open(self.log_path, "w")
        self.started = time.time()
        self.proc = subprocess.Popen(
            [binary, "--store", "kube", "--kubeconfig", kubeconfig,
             "--grpc-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0",
             "--listen-info-file", self.info, "--log-level", "info"],
            stdout=self.log, stderr=subprocess.STDOUT)
        self.http = None

    def wait_ready(self, deadline_s):
        """Seconds from the start until /readyz answers 200."""
        end = time.monotonic() + deadline_s
        while self.http is None:
            self.check_alive(end)
            if os.path.exists(self.info):
                try:
                    with open(self.info) as f:
                        self.http = "http://" + json.load(f)["http"]
                except (OSError, ValueError, KeyError):
                    pass
            time.sleep(0.01)
        while cluster.get(self.http + "/readyz", timeout=5.0)[0] != 200:
            self.check_alive(end)
            time.sleep(0.01)
        return time.time() - self.started

    def check_alive(self, end):
        if self.proc.poll() is not None:
            raise Failure("clusterd exited with %s (%s)" % (self.proc.returncode, self.log_path))
        if time.monotonic() > end:
            raise Failure("clusterd was not ready in time (%s)" % self.log_path)

    def faults(self, node=None):
        """{(node, NPU name, code): jobs} of the fault centre's view."""
        url = self.http + "/api/clusterd/v1/faults" + ("?node=" + node if node else "")
        status, body = cluster.get(url, timeout=10)
        if status != 200:
            return {}
        return {(it["node"], it["npu"], it["code"].upper()): it.get("jobs", [])
                for it in json.loads(body).get("items", [])}

    def job_count(self):
        status, body = cluster.get(self.http + "/api/clusterd/v1/jobs", timeout=10)
        return len(json.loads(body).get("items", [])) if status == 200 else 0

    def rss_mib(self):
        return cluster.rss_mib(self.proc.pid)

    def stop(self):
        stop_process(self.proc, timeout=30)
        self.log.close()


# --- the cluster's faults ---------------------------------------------------------------------

def job_uid(j):
    return "job-uid-%05d" % j


def pod_node(args, j, r):
    return cluster.node_name((j * args.pods + r) % args.nodes)


def fault_targets(args):
    """(single-fault targets, storm targets), each a list of (node, job uid or None): single
    faults on the first pod's node of the last jobs, the storm on the other pods' nodes (one
    per job first), then on nodes without pods."""
    singles = [(pod_node(args, j, 0), job_uid(j))
               for j in range(args.jobs - 1, max(0, args.jobs - 1 - args.faults), -1)]
    storm = [(pod_node(args, j, r), job_uid(j)) for r in range(1, args.pods)
             for j in range(args.jobs)]
    storm += [(cluster.node_name(i), None) for i in range(args.jobs * args.pods, args.nodes)]
    if len(singles) < args.faults or len(storm) < args.storm:
        raise Failure("the cluster is too small for %d single faults and a storm of %d"
                      % (args.faults, args.storm))
    return singles, storm[:args.storm]


def faulty_config_map(args, node):
    return cluster.device_info(node, args.npus, "%s-%d" % (cluster.CHIP, FAULT_NPU), FAULT_CODE,
                               time.time())


def mapped(view, node, job):
    jobs = view.get((node, "%s-%d" % (cluster.CHIP, FAULT_NPU), FAULT_CODE))
    return jobs is not None and (job is None or job in jobs)


# --- measurements -----------------------------------------------------------------------------

def count_by(entries, verbs=None):
    """{"verb resource": n} of `entries` (watches included), optionally only these verbs."""
    c = collections.Counter()
    for e in entries:
        if verbs is None or e["verb"] in verbs:
            c["%s %s" % (e["verb"], e["resource"] or "-")] += 1
    return c


def fmt_counts(c):
    return ", ".join("%s %d" % kv for kv in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))) \
        or "none"


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))] if values else float("nan")


def per_second(entries, start, end):
    """Counts per whole second from `start` (a list covering [start, end))."""
    bins = [0] * max(1, int(end - start + 0.999))
    for e in entries:
        i = int(e["time"] - start)
        if 0 <= i < len(bins):
            bins[i] += 1
    return bins


def is_shard_write(e):
    return e["verb"] in WRITE_VERBS and e["resource"] == "configmaps" and \
        (e["name"] or "").startswith(CLUSTER_INFO_PREFIX)


def startup(args, fx, audit, cd):
    r = {}
    r["ready_s"] = cd.wait_ready(args.deadline)
    ready_at = cd.started + r["ready_s"]
    end = time.monotonic() + args.deadline
    # A fault right after ready, while the job summaries are still being written.
    node, job = pod_node(args, 0, 0), job_uid(0)
    r["ready_fault_s"] = map_one(args, fx, cd, node, job)
    while cd.job_count() < args.jobs:
        cd.check_alive(end)
        time.sleep(0.2)
    registered_at = time.time()
    r["registered_s"] = registered_at - cd.started
    shard = [e for e in audit.between(cd.started, registered_at + 1, CLUSTERD_USER)
             if is_shard_write(e)]
    if not shard:
        # The first shard may come after the jobs: wait for it.
        while not shard:
            cd.check_alive(end)
            time.sleep(0.2)
            shard = [e for e in audit.between(cd.started, time.time(), CLUSTERD_USER)
                     if is_shard_write(e)]
    r["first_shard_s"] = min(e["time"] for e in shard) - cd.started
    r["until_ready"] = count_by(audit.between(cd.started, ready_at, CLUSTERD_USER))
    time.sleep(args.window)  # what start-up left in flight
    r["settled_at"] = time.time()
    r["until_registered"] = count_by(audit.between(cd.started, r["settled_at"], CLUSTERD_USER))
    return r


def restart(args, audit, cd):
    """A second clusterd on the same API server: ready, and its requests until every job was
    reconciled once (at the registry's default 100 a second)."""
    r = {"ready_s": cd.wait_ready(args.deadline)}
    end = time.monotonic() + args.deadline
    while cd.job_count() < args.jobs:
        cd.check_alive(end)
        time.sleep(0.2)
    time.sleep(args.jobs / 100.0 + args.window)
    entries = audit.between(cd.started, time.time(), CLUSTERD_USER)
    r["settled_s"] = time.time() - cd.started
    r["counts"] = count_by(entries)
    r["summary_writes"] = sum(1 for e in entries if e["verb"] in WRITE_VERBS and
                              (e["name"] or "").startswith("job-summary-"))
    return r


def idle(args, audit, cd):
    start = time.time()
    time.sleep(args.window)
    entries = [e for e in audit.between(start, time.time(), CLUSTERD_USER)
               if e["verb"] != "watch"]
    return {"per_s": len(entries) / args.window, "counts": count_by(entries)}


def map_one(args, fx, cd, node, job):
    """Writes a fault into `node`'s device-info; seconds until it is mapped onto `job`."""
    written = time.time()
    status = fx.put_config_map(faulty_config_map(args, node))
    if status != 200:
        raise Failure("writing the fault into %s's device-info: HTTP %s" % (node, status))
    deadline = time.monotonic() + args.map_timeout
    while not mapped(cd.faults(node), node, job):
        if time.monotonic() > deadline:
            raise Failure("the fault on %s was not mapped onto %s within %.0f s"
                          % (node, job, args.map_timeout))
        time.sleep(0.005)
    return time.time() - written


def single_faults(args, fx, audit, cd, targets):
    latencies, counts, totals = [], collections.Counter(), []
    for node, job in targets:
        written = time.time()
        latencies.append(map_one(args, fx, cd, node, job))
        time.sleep(max(0.0, written + args.window - time.time()))
        entries = [e for e in audit.between(written, written + args.window, CLUSTERD_USER)
                   if e["verb"] != "watch"]
        counts.update(count_by(entries))
        totals.append(len(entries))
    return {"latencies": latencies, "counts": counts, "totals": totals}


def storm(args, fx, audit, cd, targets):
    r = {}
    cms = [faulty_config_map(args, node) for node, _ in targets]
    start = time.time()
    with concurrent.futures.ThreadPoolExecutor(args.writers) as pool:
        statuses = list(pool.map(fx.put_config_map, cms))
    r["written_s"] = time.time() - start
    bad = [s for s in statuses if s != 200]
    if bad:
        raise Failure("%d of %d storm writes failed (HTTP %s)" % (len(bad), len(cms), bad[0]))
    waiting = list(targets)
    deadline = time.monotonic() + args.map_timeout
    while waiting:
        if time.monotonic() > deadline:
            raise Failure("%d of %d storm faults not mapped within %.0f s (e.g. %s)"
                          % (len(waiting), len(targets), args.map_timeout, waiting[0][0]))
        time.sleep(0.1)
        view = cd.faults()
        waiting = [(n, j) for n, j in waiting if not mapped(view, n, j)]
    mapped_at = time.time()
    r["mapped_s"] = mapped_at - start
    # What the storm left behind: clusterd's writes until it has been quiet for a window.
    quiet_deadline = time.monotonic() + args.deadline
    while time.monotonic() < quiet_deadline:
        time.sleep(1)
        now = time.time()
        recent = [e for e in audit.between(now - args.window, now, CLUSTERD_USER)
                  if e["verb"] in WRITE_VERBS]
        if not recent:
            break
    end = time.time() - args.window if time.monotonic() < quiet_deadline else time.time()
    end = max(end, mapped_at)
    r["end_s"] = end - start
    ours = [e for e in audit.between(start, end, CLUSTERD_USER) if e["verb"] != "watch"]
    writes = [e for e in ours if e["verb"] in WRITE_VERBS]
    shards = [e for e in writes if is_shard_write(e)]
    r["counts"] = count_by(ours)
    r["writes"] = len(writes)
    r["writes_per_s"] = per_second(writes, start, end)
    r["requests_per_s"] = per_second(ours, start, end)
    r["shard_writes"] = len(shards)
    r["shard_per_s"] = per_second(shards, start, end)
    r["lists"] = sum(1 for e in ours if e["verb"] == "list")
    everyone = [e for e in audit.between(start, mapped_at) if e["verb"] != "watch"]
    r["all_latency"] = [e["seconds"] for e in everyone]
    r["clusterd_latency"] = [e["seconds"] for e in everyone if e["user"] == CLUSTERD_USER]
    r["fixture_requests"] = len(everyone)
    return r


# --- report -----------------------------------------------------------------------------------

def ms(v):
    return "%.0f ms" % (v * 1000) if v < 10 else "%.1f s" % v


def report(args, load, up, quiet, single, st, rss):
    rows = [
        ("cluster", "%d nodes x %d NPUs, %d jobs x %d pods; load average %s" % (
            args.nodes, args.npus, args.jobs, args.pods, load)),
        ("start-up: ready / first cluster-info shard / every job registered",
         "%.2f s / %.2f s / %.2f s" % (up["ready_s"], up["first_shard_s"], up["registered_s"])),
        ("start-up: a fault written at ready -> mapped onto its job", ms(up["ready_fault_s"])),
        ("start-up requests until ready", fmt_counts(up["until_ready"])),
        ("start-up requests until registered + %.0f s" % args.window,
         fmt_counts(up["until_registered"])),
        ("idle requests", "%.1f/s (%s)" % (quiet["per_s"], fmt_counts(quiet["counts"]))),
    ]
    if single["latencies"]:
        n = len(single["latencies"])
        rows += [
            ("single fault: write -> mapped onto its job (n=%d)" % n,
             "p50 %s, max %s" % (ms(percentile(single["latencies"], 0.5)),
                                 ms(max(single["latencies"])))),
            ("single fault: clusterd's requests in the %.0f s after it" % args.window,
             "%.1f per fault, max %d (%s, over %d faults)" % (
                 sum(single["totals"]) / n, max(single["totals"]),
                 fmt_counts(single["counts"]), n)),
        ]
    if st:
        rows += [
            ("storm: %d faults written by %d connections" % (args.storm, args.writers),
             "in %.2f s" % st["written_s"]),
            ("storm: every fault mapped onto its job", "%.2f s after the first write"
             % st["mapped_s"]),
            ("storm: clusterd's writes (until %.0f s quiet, %.1f s)" % (args.window, st["end_s"]),
             "%d, max %d/s; per second %s" % (st["writes"], max(st["writes_per_s"]),
                                                 st["writes_per_s"][:30])),
            ("storm: of which cluster-info shards", "%d, max %d/s" % (
                st["shard_writes"], max(st["shard_per_s"]))),
            ("storm: clusterd's requests", "%s (max %d/s)" % (
                fmt_counts(st["counts"]), max(st["requests_per_s"]))),
            ("storm: fixture latency, all %d requests until mapped" % st["fixture_requests"],
             "p50 %s, p99 %s, max %s" % (ms(percentile(st["all_latency"], 0.5)),
                                         ms(percentile(st["all_latency"], 0.99)),
                                         ms(max(st["all_latency"] or [0])))),
            ("storm: fixture latency, clusterd's %d requests" % len(st["clusterd_latency"]),
             "p50 %s, p99 %s" % (ms(percentile(st["clusterd_latency"], 0.5)),
                                 ms(percentile(st["clusterd_latency"], 0.99)))),
        ]
    rows.append(("clusterd RSS at the end", "%.0f MiB" % rss))
    width = max(len(k) for k, _ in rows)
    print()
    for k, v in rows:
        print("%-*s  %s" % (width, k, v))


def lists_of(counts):
    return sum(n for k, n in counts.items() if k.startswith("list "))


def writes_of(counts):
    return sum(n for k, n in counts.items() if k.split()[0] in WRITE_VERBS)


def budget(args, up, single, st, again=None):
    """(line, met) per budget item."""
    # Each resource listed once (its pages), plus a few small label-selected lists.
    pages = {r: (n + args.page_size - 1) // args.page_size for r, n in (
        ("nodes", args.nodes), ("configmaps", args.nodes), ("pods", args.jobs * args.pods),
        ("podgroups", args.jobs))}
    allowed_lists = sum(pages.values()) + args.startup_extra_lists
    # Each job's summary once, the cluster-info shards (about 1,100 nodes each) and a few more.
    allowed_writes = args.jobs + args.nodes // 500 + args.startup_extra_writes
    out = [
        ("ready within %.0f s" % args.budget_ready_s, up["ready_s"] <= args.budget_ready_s),
        ("start-up: every resource listed once: list pages at most %d (+%d selected)" % (
            allowed_lists, args.startup_extra_lists),
         lists_of(up["until_registered"]) <= allowed_lists),
        ("start-up: one write per job summary: writes at most %d (+%d others)" % (
            allowed_writes, allowed_writes - args.jobs),
         writes_of(up["until_registered"]) <= allowed_writes),
    ]
    if single["totals"]:
        out += [
            ("single fault: at most %d requests in the %.0f s after it, no list" % (
                args.budget_per_fault, args.window),
             max(single["totals"]) <= args.budget_per_fault and
             lists_of(single["counts"]) == 0),
            ("single fault: mapped within %.0f ms" % (args.budget_map_s * 1000),
             max(single["latencies"]) <= args.budget_map_s),
        ]
    if st:
        out += [
            ("storm: cluster-info shard writes at most %d in any second" % args.budget_shard_per_s,
             max(st["shard_per_s"]) <= args.budget_shard_per_s),
            ("storm: clusterd's writes at most %d in any second" % args.budget_writes_per_s,
             max(st["writes_per_s"]) <= args.budget_writes_per_s),
            ("storm: no list", st["lists"] == 0),
            ("storm: every fault mapped within %.0f s" % args.budget_storm_s,
             st["mapped_s"] <= args.budget_storm_s),
            ("storm: fixture p99 latency under %.0f ms" % (args.budget_p99_s * 1000),
             percentile(st["all_latency"], 0.99) < args.budget_p99_s),
        ]
    if again:
        allowed = args.nodes // 500 + args.startup_extra_writes
        out += [
            ("restart: ready within %.0f s" % args.budget_ready_s,
             again["ready_s"] <= args.budget_ready_s),
            ("restart: no job summary written again, writes at most %d" % allowed,
             again["summary_writes"] == 0 and writes_of(again["counts"]) <= allowed),
        ]
    return out


def stop_on_signal(signum, frame):
    raise Failure("stopped by signal %d" % signum)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--clusterd", default="build/apps/clusterd/clusterd")
    p.add_argument("--nodes", type=int, default=10000)
    p.add_argument("--npus", type=int, default=16)
    p.add_argument("--jobs", type=int, default=1000)
    p.add_argument("--pods", type=int, default=4, help="pods per job, one per node")
    p.add_argument("--faults", type=int, default=5, help="single faults, one after another")
    p.add_argument("--storm", type=int, default=1000, help="faults written at once")
    p.add_argument("--writers", type=int, default=32, help="connections writing the storm")
    p.add_argument("--window", type=float, default=3.0,
                   help="seconds of requests counted after a fault (and of quiet to settle)")
    p.add_argument("--map-timeout", type=float, default=120.0,
                   help="seconds a fault (or the whole storm) may take to be mapped")
    p.add_argument("--deadline", type=float, default=600.0, help="seconds for start-up")
    p.add_argument("--history-limit", type=int, default=100000,
                   help="the fixture's watch history (a real API server's watch cache)")
    p.add_argument("--page-size", type=int, default=500, help="the kube store's list page")
    p.add_argument("--work-parent", default=None, help="where the work directory goes")
    p.add_argument("--keep", action="store_true", help="keep the work directory")
    p.add_argument("--restart", action="store_true",
                   help="then restart clusterd on the same API server and count its requests")
    b = p.add_argument_group("budget")
    b.add_argument("--budget-ready-s", type=float, default=30.0)
    b.add_argument("--startup-extra-lists", type=int, default=5,
                   help="label-selected LISTs allowed at start-up besides one per resource")
    b.add_argument("--startup-extra-writes", type=int, default=20,
                   help="writes allowed at start-up besides the job summaries and shards")
    b.add_argument("--budget-per-fault", type=int, default=10)
    b.add_argument("--budget-map-s", type=float, default=1.0)
    b.add_argument("--budget-shard-per-s", type=int, default=10)
    b.add_argument("--budget-writes-per-s", type=int, default=100)
    b.add_argument("--budget-storm-s", type=float, default=30.0)
    b.add_argument("--budget-p99-s", type=float, default=1.0)
    args = p.parse_args()
    if args.jobs * args.pods > args.nodes:
        p.error("--jobs x --pods must not exceed --nodes (one pod per node)")
    if not os.access(args.clusterd, os.X_OK):
        p.error("--clusterd %s: not an executable" % args.clusterd)
    if args.work_parent:
        os.makedirs(args.work_parent, exist_ok=True)
    work = tempfile.mkdtemp(prefix="clusterd-kube-scale-", dir=args.work_parent)
    signal.signal(signal.SIGTERM, stop_on_signal)
    fx = cd = None
    code = 0
    try:
        singles, storm_targets = fault_targets(args)
        preload = os.path.join(work, "cluster.jsonl")
        count, took = write_preload(preload, args)
        t = time.monotonic()
        fx = Fixture(work, preload, args.history_limit)
        print("%d objects generated in %.1f s, loaded into the fixture in %.1f s (%s)" % (
            count, took, time.monotonic() - t, work), flush=True)
        audit = Audit(fx.audit_path)
        load = "%.2f %.2f %.2f" % os.getloadavg()
        cd = Clusterd(args.clusterd, work, fx.kubeconfig)
        up = startup(args, fx, audit, cd)
        print("ready %.2f s, every job registered %.2f s" % (up["ready_s"], up["registered_s"]),
              flush=True)
        quiet = idle(args, audit, cd)
        single = single_faults(args, fx, audit, cd, singles)
        st = storm(args, fx, audit, cd, storm_targets) if args.storm else None
        rss = cd.rss_mib()
        load += " -> %.2f %.2f %.2f" % os.getloadavg()
        report(args, load, up, quiet, single, st, rss)
        again = None
        if args.restart:
            cd.stop()
            cd = Clusterd(args.clusterd, work, fx.kubeconfig, label="-restart")
            again = restart(args, audit, cd)
            print("\nrestart: ready %.2f s; in the %.1f s until every job was reconciled once: "
                  "%s; job summaries written %d" % (again["ready_s"], again["settled_s"],
                                                    fmt_counts(again["counts"]),
                                                    again["summary_writes"]), flush=True)
        print("\nbudget:")
        for line, met in budget(args, up, single, st, again):
            print("  %-4s %s" % ("met" if met else "BROKEN", line))
            if not met:
                code = 2
    except Failure as e:
        print("kube_scale: %s" % e, file=sys.stderr)
        code = 1
    finally:
        if cd is not None:
            cd.stop()
        if fx is not None:
            fx.close()
        if args.keep or code == 1:
            print("work directory kept: %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
