"""A training job's objects as an outside program puts them into clusterd's `dir` store: nodes,
their device-info ConfigMaps, the job's PodGroup, its pods (one per node, D NPUs each, global
rank = pod rank x D + device index) and its reset ConfigMap (docs/store-layout.md,
recovery-protocol.md §9.1, §11).

Shared by the Python wire tests (test_recovery_e2e.py) and bench/peer/.
"""
import hashlib
import json
import os

CHIP = "Ascend910"
INITIALIZING = '{"status":"initializing"}'


def owner(kind, name, uid):
    return [{"apiVersion": "mindxdl.gitee.com/v1", "kind": kind, "name": name, "uid": uid,
             "controller": True}]


def pod_object(ns, job_name, job_uid, pod_name, pod_uid, rank, node, host_ip, device_prefix,
               group_name, npus=8, kind="AscendJob", master_addr=None):
    devices = [{"device_id": str(i), "device_ip": device_prefix + str(10 + i),
                "super_device_id": "0"} for i in range(npus)]
    alloc = {"pod_name": pod_name, "server_id": pod_uid, "host_ip": host_ip, "super_pod_id": -2,
             "devices": devices, "rack_id": -2, "server_index": "-2", "server_ip": host_ip}
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": pod_name, "namespace": ns, "uid": pod_uid, "labels": {"job-name": job_name},
            "annotations": {
                "hccl/rankIndex": str(rank),
                "ascend.kubectl.kubernetes.io/ascend-910-configuration": json.dumps(alloc),
                "scheduling.k8s.io/group-name": group_name,
            },
            "ownerReferences": owner(kind, job_name, job_uid),
        },
        "spec": {"nodeName": node, "containers": [{
            "name": "ascend", "image": "train:latest",
            "resources": {"limits": {"huawei.com/" + CHIP: str(npus)}},
            "env": [{"name": "MASTER_ADDR", "value": master_addr or host_ip}]}]},
        "status": {"phase": "Running", "hostIP": host_ip, "podIP": "172.16.0.1",
                   "containerStatuses": [{"name": "ascend",
                                          "containerID": "containerd://%d" % rank}]},
    }


def pod_group_object(ns, name, job_name, job_uid, strategies, pods, npus_per_pod=8,
                     kind="AscendJob"):
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
        "metadata": {"name": name, "namespace": ns, "uid": "pg-uid-1",
                     "labels": {"framework": "pytorch", "process-recover-enable": "on"},
                     "annotations": {"recover-strategy": strategies},
                     "ownerReferences": owner(kind, job_name, job_uid)},
        "spec": {"minMember": pods,
                 "minResources": {"huawei.com/" + CHIP: str(pods * npus_per_pod)}},
        "status": {"phase": "Running"},
    }


def device_info_config_map(node, npus=8):
    """The device plugin's healthy view of a node's NPUs (mindx-dl-deviceinfo-<node>); the
    fault centre correlates a client's retry report with the job's NPUs through it (§8.3)."""
    device_list = {
        "huawei.com/" + CHIP: ",".join("%s-%d" % (CHIP, i) for i in range(npus)),
        "huawei.com/%s-Fault" % CHIP: "[]",
        "huawei.com/%s-NetworkUnhealthy" % CHIP: "",
        "huawei.com/%s-Recovering" % CHIP: "",
        "huawei.com/%s-Unhealthy" % CHIP: "",
    }
    device_info = json.dumps({"DeviceList": dict(sorted(device_list.items())),
                              "UpdateTime": 1718000001}, separators=(",", ":"))
    cfg = '{"DeviceInfo":%s,"SuperPodID":-1,"ServerIndex":-1,"CheckCode":"%s"}' % (
        device_info, hashlib.sha256(device_info.encode()).hexdigest())
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "mindx-dl-deviceinfo-" + node, "namespace": "kube-system",
                         "labels": {"mx-consumer-cim": "true"}},
            "data": {"DeviceInfoCfg": cfg, "ManuallySeparateNPU": "", "UpgradeFaultReason": "{}"}}


def node_object(name, ip, sn):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "annotations": {"product-serial-number": sn}},
            "status": {"addresses": [{"type": "InternalIP", "address": ip}]}}


def reset_config_map(ns, name):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns},
            "data": {"reset.json": INITIALIZING,
                     "checkCode": hashlib.sha256(INITIALIZING.encode()).hexdigest()}}


def write_object(state_dir, resource, obj):
    """Writes obj as <state>/<resource>/[<ns>/]<name>.json, atomically (temp file, rename)."""
    ns = obj["metadata"].get("namespace", "")
    d = os.path.join(state_dir, resource, ns) if ns else os.path.join(state_dir, resource)
    os.makedirs(d, exist_ok=True)
    tmp = os.path.join(d, "." + obj["metadata"]["name"] + ".tmp")
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=2)
    os.rename(tmp, os.path.join(d, obj["metadata"]["name"] + ".json"))


def write_job(state_dir, ns, job_name, job_uid, pods, npus_per_pod=8,
              strategies="retry,recover,dump"):
    """A job of `pods` pods x `npus_per_pod` ranks, one pod per node (node-0, node-1, ...),
    with the objects the Recover service reads. Returns the reset ConfigMap's name."""
    group = job_name + "-pg"
    for i in range(pods):
        node = "node-%d" % i
        host_ip = "192.168.%d.%d" % (i // 200, 11 + i % 200)
        write_object(state_dir, "nodes", node_object(node, host_ip, "SN%08d" % i))
        write_object(state_dir, "configmaps", device_info_config_map(node, npus_per_pod))
        pod_uid = "00000000-0000-4000-8000-%012d" % i
        write_object(state_dir, "pods", pod_object(
            ns, job_name, job_uid, "%s-%d" % (job_name, i), pod_uid, i, node, host_ip,
            "10.%d.%d." % (1 + i // 200, i % 200), group, npus_per_pod,
            master_addr="192.168.0.11"))
    write_object(state_dir, "podgroups", pod_group_object(
        ns, group, job_name, job_uid, strategies, pods, npus_per_pod))
    reset = "reset-config-" + job_name
    write_object(state_dir, "configmaps", reset_config_map(ns, reset))
    return reset
