#!/usr/bin/python3
"""Start-up and restart of one clusterd on a large `dir` store, as an SRE meets them.

Writes NODES nodes (Node objects and device-info ConfigMaps of NPUS NPUs each) and JOBS jobs
(a PodGroup and PODS pods each, one pod per node) into a fresh state directory as an outside
program would: plain JSON files without uid or resourceVersion. Then starts clusterd on it
twice (a first start, which adopts every file, and a restart on the same directory) and
reports, from the moment the process was started:

  serving      the listen-info file is written (both listeners up)
  ready        /readyz answers 200
  fault mapped a SeparateNPU fault written into the last job's first node's device-info right
               after `ready` shows in /api/clusterd/v1/faults with that job (the fault centre
               maps it onto the job: what a Fault-service signal to the job needs)
  registered   /api/clusterd/v1/jobs lists every job (job summaries written; paced by
               --job-reconcile-rate)

and the resident memory of clusterd at the end. With --faults N, the restart then subscribes
to the Fault service for N jobs spread over the cluster (Register and SubscribeFaultMsgSignal,
as an AI platform would) and writes one single-NPU fault at a time into the device-info of a
node of each, timing the write until the job's stream carries the fault (5 s at most; a fault
whose signal does not come in time is counted as missed). With --start-faults N, the first start
and the restart each begin, from the moment clusterd is ready, as a real client would while
clusterd still takes in the store: N jobs registered on the Fault service (Register until code
0, then SubscribeFaultMsgSignal), then one fault at a time written, waited for and cleared; the
faults whose signal never comes are the ones a first start loses. With --restarts N, N more restarts on
the same state are each timed to ready (the median of several restarts says more than one).
One run; no assertion (a benchmark).

  bench/scale/restart_to_ready.py --clusterd build/apps/clusterd/clusterd --nodes 10000 \\
      --jobs 1000
"""
import argparse
import hashlib
import json
import os
import queue
import threading
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

NS = "default"
CHIP = "Ascend910"


def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, separators=(",", ":"))


def device_info(node, npus, fault_npu=None, code=None, now_s=None):
    names = ["%s-%d" % (CHIP, i) for i in range(npus)]
    faults = []
    healthy = names
    if fault_npu is not None:
        healthy = [n for n in names if n != fault_npu]
        t = int(now_s * 1000)
        faults = [{"fault_type": "CardUnhealthy", "npu_name": fault_npu,
                   "large_model_fault_level": "SeparateNPU", "fault_level": "SeparateNPU",
                   "fault_handling": "SeparateNPU", "fault_code": code,
                   "fault_time_and_level_map": {code: {"fault_time": t,
                                                       "fault_level": "SeparateNPU"}}}]
    device_list = {
        "huawei.com/" + CHIP: ",".join(healthy),
        "huawei.com/%s-Fault" % CHIP: json.dumps(faults, separators=(",", ":")),
        "huawei.com/%s-NetworkUnhealthy" % CHIP: "",
        "huawei.com/%s-Recovering" % CHIP: "",
        "huawei.com/%s-Unhealthy" % CHIP: fault_npu or "",
    }
    body = json.dumps({"DeviceList": dict(sorted(device_list.items())),
                       "UpdateTime": int(now_s or time.time())}, separators=(",", ":"))
    cfg = '{"DeviceInfo":%s,"SuperPodID":-1,"ServerIndex":-1,"CheckCode":"%s"}' % (
        body, hashlib.sha256(body.encode()).hexdigest())
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "mindx-dl-deviceinfo-" + node, "namespace": "kube-system",
                         "labels": {"mx-consumer-cim": "true"}},
            "data": {"DeviceInfoCfg": cfg, "ManuallySeparateNPU": "",
                     "UpgradeFaultReason": "{}"}}


def node_name(i):
    return "node-%05d" % i


def node_ip(i):
    return "10.%d.%d.%d" % (i // 65536 % 256, i // 256 % 256, i % 256)


def cluster_objects(nodes, npus, jobs, pods):
    """The cluster's objects as (resource, namespace or "", name, object): per node its Node and
    device-info ConfigMap, per job its PodGroup and pods (one pod per node; pod r of job j on
    node (j * pods + r) % nodes). Shared with kube_scale.py, which loads them into the
    API-server fixture."""
    for i in range(nodes):
        name = node_name(i)
        yield "nodes", "", name, {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "annotations": {"product-serial-number": "SN%06d" % i}},
            "status": {"addresses": [{"type": "InternalIP", "address": node_ip(i)}],
                       "conditions": [{"type": "Ready", "status": "True"}]}}
        yield ("configmaps", "kube-system", "mindx-dl-deviceinfo-" + name,
               device_info(name, npus))
    for j in range(jobs):
        job, uid = "job-%05d" % j, "job-uid-%05d" % j
        owner = [{"apiVersion": "mindxdl.gitee.com/v1", "kind": "AscendJob", "name": job,
                  "uid": uid, "controller": True}]
        yield "podgroups", NS, job + "-pg", {
            "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": job + "-pg", "namespace": NS,
                         "labels": {"framework": "pytorch"}, "ownerReferences": owner},
            "spec": {"minMember": pods}, "status": {"phase": "Running"}}
        for r in range(pods):
            n = (j * pods + r) % nodes
            pod = "%s-worker-%d" % (job, r)
            devices = [{"device_id": str(d), "device_ip": "29.%d.%d.%d" % (n // 256 % 256,
                                                                            n % 256, d),
                        "super_device_id": "0"} for d in range(npus)]
            alloc = {"pod_name": pod, "server_id": node_ip(n), "host_ip": node_ip(n),
                     "super_pod_id": -2, "devices": devices, "rack_id": -2,
                     "server_index": "-2", "server_ip": node_ip(n)}
            yield "pods", NS, pod, {
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": pod, "namespace": NS, "uid": "%s-pod-%d" % (uid, r),
                             "labels": {"job-name": job},
                             "annotations": {
                                 "hccl/rankIndex": str(r),
                                 "ascend.kubectl.kubernetes.io/ascend-910-configuration":
                                     json.dumps(alloc),
                                 "scheduling.k8s.io/group-name": job + "-pg"},
                             "ownerReferences": owner},
                "spec": {"nodeName": node_name(n), "containers": [{
                    "name": "ascend", "image": "train:latest",
                    "resources": {"limits": {"huawei.com/" + CHIP: str(npus)}},
                    "env": [{"name": "MASTER_ADDR", "value": node_ip(0)}]}]},
                "status": {"phase": "Running", "hostIP": node_ip(n), "podIP": "172.16.0.1",
                           "containerStatuses": [{"name": "ascend",
                                                  "containerID": "containerd://%d" % r}]}}


def populate(state, nodes, npus, jobs, pods):
    for resource, ns, name, obj in cluster_objects(nodes, npus, jobs, pods):
        write_json(os.path.join(state, resource, ns, name + ".json"), obj)


def get(url, timeout=2.0):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except OSError:
        return None, b""


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def write_fault(state, node, npus, npu, code):
    path = os.path.join(state, "configmaps", "kube-system", "mindx-dl-deviceinfo-%s.json" % node)
    cm = device_info(node, npus, "%s-%d" % (CHIP, npu), code, time.time())
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(cm, f)
    os.rename(tmp, path)
    return time.monotonic()


def write_healthy(state, node, npus):
    path = os.path.join(state, "configmaps", "kube-system", "mindx-dl-deviceinfo-%s.json" % node)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(device_info(node, npus, now_s=time.time()), f)
    os.rename(tmp, path)


def fault_signals(args, state, grpc_address, count, t0=None):
    """Subscribes to the Fault service for `count` jobs spread over the cluster (Register and
    SubscribeFaultMsgSignal, as an AI platform would), then writes one single-NPU SeparateNPU
    fault at a time into the device-info of a node of each job and times the write until the
    job's stream carries it (5 s at most; later counts as missed).

    With `t0` (the start of clusterd), as a client behaves from the moment clusterd is ready:
    Register is called until it answers code 0, the faults follow at once, and each fault is
    cleared after its wait. Returns (latencies in ms, missed, seconds from t0 until every
    sampled job was registered, or None)."""
    sys.path.insert(0, args.pygen)
    import grpc
    import fault_pb2
    import fault_pb2_grpc
    # The server takes at most 64 concurrent streams per connection (recovery-protocol.md §1.2):
    # 32 subscriptions per channel, each channel its own connection.
    channels = [grpc.insecure_channel(grpc_address, options=[("grpc.channel_id", i)])
                for i in range((count + 31) // 32)]
    jobs = sorted({i * args.jobs // count for i in range(count)})
    arrivals = {}  # job uid -> queue of (monotonic time, node names in the signal)
    streams = []

    def read(uid, stream):
        try:
            for message in stream:
                arrivals[uid].put((time.monotonic(), {
                    (n.nodeName, d.deviceId, code) for n in message.nodeFaultInfo
                    for d in n.faultDevice for code in d.faultCodes}))
        except grpc.RpcError:
            pass

    def register(stub, info):
        while True:
            try:
                answer = stub.Register(info, timeout=10)
                if answer.code == 0:
                    return
            except grpc.RpcError as e:
                if t0 is None:
                    raise
                answer = e
            if t0 is None or time.monotonic() - t0 > args.deadline:
                raise RuntimeError("Fault/Register %s: %s" % (info.jobId, answer))
            time.sleep(0.05)

    for k, j in enumerate(jobs):
        uid = "job-uid-%05d" % j
        stub = fault_pb2_grpc.FaultStub(channels[k // 32])
        info = fault_pb2.ClientInfo(jobId=uid, role="platform")
        register(stub, info)
        arrivals[uid] = queue.Queue()
        stream = stub.SubscribeFaultMsgSignal(info)
        streams.append(stream)
        threading.Thread(target=read, args=(uid, stream), daemon=True).start()
    all_registered = None
    if t0 is None:
        time.sleep(1)  # the subscriptions' first (current-state) signals
    else:
        all_registered = time.monotonic() - t0
    latencies, missed = [], 0
    for j in jobs:
        uid = "job-uid-%05d" % j
        while not arrivals[uid].empty():
            arrivals[uid].get_nowait()
        node = node_name((j * args.pods) % args.nodes)
        written = write_fault(state, node, args.npus, 5, "80E3A201")
        deadline = written + 5
        seen = None
        while seen is None and time.monotonic() < deadline:
            try:
                at, faults = arrivals[uid].get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if any(n == node and d == "5" and c.upper() == "80E3A201" for n, d, c in faults):
                seen = at
        if seen is None:
            missed += 1
        else:
            latencies.append((seen - written) * 1000)
        if t0 is not None:
            write_healthy(state, node, args.npus)
    for stream in streams:
        stream.cancel()
    for channel in channels:
        channel.close()
    return latencies, missed, all_registered


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))] if values else float("nan")


def start_until_ready(args, state, label, deadline_s, log):
    """Starts clusterd on `state` and waits for /readyz. Returns the process, its listen-info
    file, its HTTP base URL, the start time and the marks `serving` and `ready`."""
    info = os.path.join(state, "..", "listen-%s.json" % label)
    if os.path.exists(info):
        os.remove(info)
    t0 = time.monotonic()
    proc = subprocess.Popen([args.clusterd, "--store", "dir:" + state,
                             "--grpc-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0",
                             "--listen-info-file", info, "--log-level", "info"],
                            stdout=log, stderr=subprocess.STDOUT)
    marks = {}
    try:
        while not os.path.exists(info):
            if proc.poll() is not None or time.monotonic() - t0 > deadline_s:
                raise RuntimeError("clusterd did not start (see clusterd-%s.log)" % label)
            time.sleep(0.002)
        marks["serving"] = time.monotonic() - t0
        with open(info) as f:
            http = "http://" + json.load(f)["http"]
        while get(http + "/readyz")[0] != 200:
            if time.monotonic() - t0 > deadline_s:
                raise RuntimeError("not ready")
            time.sleep(0.002)
        marks["ready"] = time.monotonic() - t0
    except BaseException:
        stop(proc)
        raise
    return proc, info, http, t0, marks


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def run_once(args, state, label, fault_code, deadline_s, faults=0):
    log = open(os.path.join(state, "..", "clusterd-%s.log" % label), "w")
    try:
        proc, info, http, t0, marks = start_until_ready(args, state, label, deadline_s, log)
    except BaseException:
        log.close()
        raise
    try:
        if args.start_faults:
            with open(info) as f:
                grpc_address = json.load(f)["grpc"]
            latencies, missed, registered = fault_signals(args, state, grpc_address,
                                                          args.start_faults, t0)
            print("  %s: %d sampled jobs registered after %.2f s; %d faults written from then "
                  "on: missed %d; write -> Fault-service signal p50 %.1f ms, p99 %.1f ms, "
                  "max %.1f ms" % (label, args.start_faults, registered, args.start_faults,
                                   missed, percentile(latencies, 0.5),
                                   percentile(latencies, 0.99),
                                   max(latencies or [float("nan")])))
        # A fault on the last job's first node, right after ready.
        last_job = args.jobs - 1
        node = node_name((last_job * args.pods) % args.nodes)
        job_uid = "job-uid-%05d" % last_job
        path = os.path.join(state, "configmaps", "kube-system",
                            "mindx-dl-deviceinfo-%s.json" % node)
        cm = device_info(node, args.npus, "%s-3" % CHIP, fault_code, time.time())
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(cm, f)
        os.rename(tmp, path)
        written = time.monotonic()
        while True:
            status, body = get(http + "/api/clusterd/v1/faults?node=" + node)
            if status == 200 and any(fault_code == it.get("code") and job_uid in it.get("jobs", [])
                                     for it in json.loads(body).get("items", [])):
                break
            if time.monotonic() - t0 > deadline_s:
                raise RuntimeError("the fault was never mapped onto its job")
            time.sleep(0.005)
        marks["fault mapped"] = time.monotonic() - t0
        marks["fault mapped after its write"] = time.monotonic() - written
        while True:
            status, body = get(http + "/api/clusterd/v1/jobs", timeout=10)
            if status == 200 and len(json.loads(body).get("items", [])) >= args.jobs:
                break
            if time.monotonic() - t0 > deadline_s:
                raise RuntimeError("the jobs were never all registered")
            time.sleep(0.05)
        marks["registered"] = time.monotonic() - t0
        if faults:
            with open(info) as f:
                grpc_address = json.load(f)["grpc"]
            latencies, missed, _ = fault_signals(args, state, grpc_address, faults)
            print("  %d faults written one after another: missed %d; write -> Fault-service "
                  "signal p50 %.1f ms, p99 %.1f ms, max %.1f ms" % (
                      faults, missed, percentile(latencies, 0.5), percentile(latencies, 0.99),
                      max(latencies or [float("nan")])))
        marks["rss_mib"] = rss_mib(proc.pid)
    finally:
        stop(proc)
        log.close()
    return marks


def repeated_restarts(args, state, count):
    """`count` more restarts on the same state, each timed from exec to /readyz answering 200,
    a SIGTERM and a 1 s pause between them."""
    times = []
    for i in range(count):
        with open(os.path.join(state, "..", "clusterd-restart-%d.log" % (i + 2)), "w") as log:
            proc, _, _, _, marks = start_until_ready(args, state, "restart-%d" % (i + 2),
                                                     args.deadline, log)
            stop(proc)
        times.append(marks["ready"])
        time.sleep(1)
    return times


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--clusterd", default="build/apps/clusterd/clusterd")
    p.add_argument("--nodes", type=int, default=10000)
    p.add_argument("--npus", type=int, default=16)
    p.add_argument("--jobs", type=int, default=1000)
    p.add_argument("--pods", type=int, default=4, help="pods per job")
    p.add_argument("--state-parent", default="/dev/shm" if os.path.isdir("/dev/shm") else None)
    p.add_argument("--deadline", type=float, default=600, help="seconds per start")
    p.add_argument("--keep", action="store_true", help="keep the state directory")
    p.add_argument("--faults", type=int, default=0,
                   help="after the restart, time this many faults to their Fault-service signal")
    p.add_argument("--start-faults", type=int, default=0,
                   help="at the first start and the restart, from ready on: register this many "
                        "jobs on the Fault service as a client does (until accepted), then write "
                        "one fault at a time and count those whose signal never comes")
    p.add_argument("--pygen", default="build/tests/python/gen",
                   help="directory of the generated Python gRPC stubs (for --faults)")
    p.add_argument("--restarts", type=int, default=0,
                   help="then restart clusterd this many more times on the same state, timing "
                        "each to ready, and print the times and their median")
    args = p.parse_args()
    if args.jobs * args.pods > args.nodes:
        p.error("--jobs x --pods must not exceed --nodes (one pod per node)")
    if args.state_parent:
        os.makedirs(args.state_parent, exist_ok=True)
    work = tempfile.mkdtemp(prefix="clusterd-restart-", dir=args.state_parent)
    state = os.path.join(work, "state")
    try:
        t = time.monotonic()
        populate(state, args.nodes, args.npus, args.jobs, args.pods)
        files = sum(len(fs) for _, _, fs in os.walk(state))
        print("%d nodes x %d NPUs, %d jobs x %d pods: %d files written in %.1f s (%s)" % (
            args.nodes, args.npus, args.jobs, args.pods, files, time.monotonic() - t, work))
        print("load average before: %.2f %.2f %.2f" % os.getloadavg())
        for label, code in (("first start", "80E3A201"), ("restart", "8C084E00")):
            marks = run_once(args, state, label.replace(" ", "-"), code, args.deadline,
                             args.faults if label == "restart" else 0)
            print("%-12s " % label + "  ".join(
                "%s %.2f s" % (k, v) if k != "rss_mib" else "RSS %.0f MiB" % v
                for k, v in marks.items()))
        if args.restarts > 0:
            times = repeated_restarts(args, state, args.restarts)
            print("%d more restarts, ready after: %s s; median %.3f s" % (
                len(times), " ".join("%.3f" % t for t in times), percentile(times, 0.5)))
        print("load average after: %.2f %.2f %.2f" % os.getloadavg())
    finally:
        if args.keep:
            print("state kept in", work)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
