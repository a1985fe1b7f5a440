#!/usr/bin/python3
"""Fidelity of the API-server fixture (tests/fixtures/kube_apiserver.py), judged by a real
kube-apiserver v1.36.3 and etcd (launch.py): every case of CASES sends the same requests to
both, one case per namespace (cluster-scoped names carry the namespace), and their answers must
agree. Per request the comparison takes:
  * the HTTP status;
  * a success: the object without the fields the server assigns (SERVER_ASSIGNED); of the fields
    the real server adds on its own (defaults, admission) only those a request of the case sent
    or DEFAULTED_CHECKED names. A field the fixture has and the real server not is a difference;
  * a list: kind, apiVersion, the item names in order and each item as above, whether there is a
    continue token, remainingItemCount;
  * an error: the Status's code, reason, details (name, group, kind) and the set of
    details.causes[].field; its message where the fixture copies the real text (COPIED_REASONS,
    and steps marked message=True), for Invalid the part before the causes;
  * a watch: the events' types and objects, read until the event the case waits for (the
    ADDED of a sentinel object created last) or until the server ends the watch
    (timeoutSeconds).
ACCEPTED lists the differences the fixture keeps, each with its reason; the steps that meet one
say so, and a step whose accepted difference is gone fails, so that the table stays true.
Skipped when the real binaries are missing.

Run: KUBE_REAL_BIN=build/kube-real /usr/bin/python3 -m unittest -v test_fidelity
     (from tests/kube-real; CTest: python.kube_fidelity)
"""

import copy
import json
import os
import re
import secrets
import shutil
import ssl
import sys
import tempfile
import unittest
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
import fixture_process  # noqa: E402
import real_server  # noqa: E402

MISSING = real_server.missing_binaries()
SKIP_REASON = ("real Kubernetes binaries missing (%s): build them with "
               "`bash tests/kube-real/build.sh` or set KUBE_REAL_BIN" % ", ".join(MISSING))

JSON = "application/json"
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"

CM = "/api/v1/namespaces/{ns}/configmaps"
PODS = "/api/v1/namespaces/{ns}/pods"
NODES = "/api/v1/nodes"
EVENTS = "/api/v1/namespaces/{ns}/events"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"
PG = "/apis/scheduling.volcano.sh/v1beta1/namespaces/{ns}/podgroups"
PG_VERSION = "scheduling.volcano.sh/v1beta1"

# Metadata the server makes up: never equal between two servers. `generation` is one of them
# because the fixture keeps none (docs/compatibility.md) and clusterd reads none.
SERVER_ASSIGNED = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation",
                   "selfLink", "deletionTimestamp")

# Fields the real server sets without a request sending them that are compared all the same:
# clusterd reads them (dotted paths; "*" is any list element).
DEFAULTED_CHECKED = {
    "status.phase",  # a Pod starts Pending: clusterd's pod view reads the phase
}

# Error reasons whose message the fixture copies word for word from the real server.
COPIED_REASONS = {"NotFound", "AlreadyExists", "Conflict", "Forbidden", "Expired"}

# The differences the fixture keeps. A step that meets one names it with the paths (in the
# compared view: "body.<object path>", "events.*.object.<path>"; none: the whole step) where it
# shows; there the step must differ, and nothing else may.
ACCEPTED = {
    "no-namespace-objects":
        "The fixture has no Namespace resource: any DNS-1123 label is a namespace, so a create in "
        "a namespace nobody created succeeds (the real server: 404 namespaces \"x\" not found, "
        "NamespaceLifecycle). The fixture's tests would otherwise create every namespace first; "
        "clusterd never creates namespaces and reads a 404 as 404 either way.",
    "admission-plugins":
        "The fixture runs no admission plugins. The real ServiceAccount plugin adds a token "
        "volume and its volumeMounts to every Pod it admits, so an update that sends the spec as "
        "the client created it changes the (immutable) spec: 422 there, a no-op here; NodeTaint "
        "adds the node.kubernetes.io/not-ready:NoSchedule taint to every Node created, which the "
        "node lifecycle controller of a real cluster removes once the kubelet reports Ready (this "
        "real server runs no controller-manager), so a fixture that added it would be less like a "
        "cluster, not more.",
    "graceful-deletion":
        "The real server deletes a Pod bound to a node that has not ended gracefully: it sets "
        "deletionTimestamp and a grace period of 30 s and keeps the pod until the kubelet "
        "confirms (no kubelet runs here, so for ever); the fixture deletes every pod at once, as "
        "the real server does an unbound or ended one, i.e. as if the kubelet confirmed at once. "
        "clusterd deletes no pods (the simulator's scheduler does, on the fixture).",
    "watch-expiry-text":
        "The text of a watch's 410 depends on who answers it: the watch cache says \"too old "
        "resource version: N (M)\", which the fixture copies; etcd says \"The resourceVersion for "
        "the provided watch is too old.\". The watch cache of a real server keeps its whole "
        "history for at least 75 s, so only etcd (the cache switched off) can be made to expire a "
        "watch within a test. Both contain \"too old\"; code and reason are compared.",
}


# --- the requests of a case, against one server ----------------------------------------------

MISSING_FIELD = object()


def union(a, b):
    """The fields of `b` added to those of `a`: what the requests of a case sent so far."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = dict(a)
        for k, v in b.items():
            out[k] = union(a[k], v) if k in a else v
        return out
    if isinstance(a, list) and isinstance(b, list):
        return [union(a[i], b[i]) if i < len(a) else b[i] for i in range(len(b))] + a[len(b):]
    return a if b is None else b


def fields_of_json_patch(ops):
    """The fields a JSON patch names, as a merge of nested dicts."""
    out = {}
    for op in ops if isinstance(ops, list) else []:
        if not isinstance(op, dict) or not isinstance(op.get("path"), str):
            continue
        parts = [p for p in op["path"].split("/")[1:] if not p.isdigit() and p != "-"]
        node = out
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        if parts:
            node[parts[-1]] = op.get("value")
    return out


class Step:
    def __init__(self, name, kind, status, body, sent, message, accept):
        self.name, self.kind, self.status, self.body = name, kind, status, body
        self.sent, self.message, self.accept = sent, message, accept


class Trace:
    """One case against one server: its namespace, the requests made and what came back."""

    def __init__(self, server, ns, limited_token):
        self.server, self.ns, self.limited_token = server, ns, limited_token
        self.steps = []
        self.sent = {}  # object name -> the fields the requests of the case sent it

    def name(self, suffix):
        """A cluster-scoped name of this case's own."""
        return "%s-%s" % (self.ns, suffix)

    def call(self, step, method, path, body=None, content_type=JSON, limited=False,
             message=False, accept=None):
        """One request (`{ns}` in the path is the case's namespace); returns (status, body).
        `message`: compare the error message too; `accept`: (ACCEPTED key, paths)."""
        path = path.format(ns=self.ns)
        if method == "POST":
            name = (body.get("metadata") or {}).get("name") if isinstance(body, dict) else None
        else:
            target = urllib.parse.urlsplit(path).path.split("/")
            name = target[-2] if target[-1] == "status" else target[-1]
        fields = fields_of_json_patch(body) if content_type == JSON_PATCH else body
        if name and isinstance(fields, dict):
            self.sent[name] = union(self.sent.get(name, {}), fields)
        status, answer = self.server.api(method, path, body, content_type,
                                         token=self.limited_token if limited else None)
        self.steps.append(Step(step, "call", status, answer, copy.deepcopy(self.sent), message,
                               accept))
        return status, answer

    def watch(self, step, path, until=None, accept=None):
        """A watch (path without ?watch): its events until `until`, an (event type, object
        name), arrives (then closed), or until the server ends it."""
        sep = "&" if "?" in path else "?"
        url = self.server.url + path.format(ns=self.ns) + sep + "watch=1"
        req = urllib.request.Request(url, headers={
            "Authorization": "Bearer " + self.server.token, "Accept": JSON})
        context = ssl.create_default_context(cafile=self.server.ca)
        events = []
        try:
            with urllib.request.urlopen(req, context=context, timeout=60) as resp:
                status = resp.status
                for line in resp:
                    if not line.strip():
                        continue
                    event = json.loads(line)
                    events.append(event)
                    name = ((event.get("object") or {}).get("metadata") or {}).get("name")
                    if (event.get("type"), name) == until:
                        break
        except urllib.error.HTTPError as e:
            status, events = e.code, json.load(e)
        self.steps.append(Step(step, "watch", status, events, copy.deepcopy(self.sent), False,
                               accept))
        return status, events

    def note(self, step, value):
        """A value the case derived (compared as it is)."""
        self.steps.append(Step(step, "note", 0, value, {}, False, None))


def rv(obj):
    return (obj.get("metadata") or {}).get("resourceVersion") if isinstance(obj, dict) else None


# --- comparing the two traces ----------------------------------------------------------------

def dotted(path):
    return ".".join(path)


def strip_assigned(obj):
    """A copy without SERVER_ASSIGNED metadata, in objects, list items and watch events."""
    obj = copy.deepcopy(obj)

    def walk(o):
        if isinstance(o, dict):
            meta = o.get("metadata")
            if isinstance(meta, dict):
                for f in SERVER_ASSIGNED:
                    meta.pop(f, None)
                if meta.get("generateName"):
                    meta.pop("name", None)  # made up by the server too
            details = o.get("details")
            if o.get("kind") == "Status" and isinstance(details, dict):
                details.pop("uid", None)  # of a deleted object
            for item in o.get("items") if isinstance(o.get("items"), list) else []:
                walk(item)
            if isinstance(o.get("object"), dict):  # a watch event's
                walk(o["object"])
        elif isinstance(o, list):
            for x in o:
                walk(x)
    walk(obj)
    return obj


def prune_defaults(real, fixture, sent, path=()):
    """`real` without the fields the real server added on its own: those the fixture does not
    have, no request of the case sent and DEFAULTED_CHECKED does not name."""
    if isinstance(real, dict):
        out = {}
        for k, v in real.items():
            p = path + (k,)
            in_fixture = isinstance(fixture, dict) and k in fixture
            was_sent = sent.get(k, MISSING_FIELD) if isinstance(sent, dict) else MISSING_FIELD
            if not in_fixture and was_sent is MISSING_FIELD and \
                    dotted(p) not in DEFAULTED_CHECKED:
                continue
            out[k] = prune_defaults(v, fixture[k] if in_fixture else None,
                                    None if was_sent is MISSING_FIELD else was_sent, p)
        return out
    if isinstance(real, list) and isinstance(fixture, list) and len(real) == len(fixture):
        return [prune_defaults(r, f, sent[i] if isinstance(sent, list) and i < len(sent)
                               else None, path + ("*",))
                for i, (r, f) in enumerate(zip(real, fixture))]
    return real


UID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
NUMBER = re.compile(r"(?<![\w.-])[0-9]+(?![\w.-])")


def error_view(status, compare_message):
    details = status.get("details") or {}
    view = {"code": status.get("code"), "reason": status.get("reason"),
            "details": {k: details[k] for k in ("name", "group", "kind") if details.get(k)},
            "causes": sorted({c.get("field", "") for c in details.get("causes") or []})}
    # The uids and resourceVersions a message quotes are each server's own.
    message = NUMBER.sub("N", UID.sub("<uid>", status.get("message", "")))
    if compare_message or status.get("reason") in COPIED_REASONS:
        view["message"] = message
    elif status.get("reason") == "Invalid":
        view["message"] = message.split(" is invalid")[0] + " is invalid"
    return view


def is_error(body):
    return isinstance(body, dict) and body.get("kind") == "Status" and \
        body.get("status") == "Failure"


def sent_to(sent, obj):
    name = ((obj or {}).get("metadata") or {}).get("name") if isinstance(obj, dict) else None
    return sent.get(name, {})


def object_views(f, r, sent):
    f, r = strip_assigned(f), strip_assigned(r)
    return f, prune_defaults(r, f, sent_to(sent, f))


def list_views(f, r, sent):
    def head(lst):
        meta = lst.get("metadata") or {}
        return {"kind": lst.get("kind"), "apiVersion": lst.get("apiVersion"),
                "names": [(i.get("metadata") or {}).get("name") for i in lst.get("items", [])],
                "continue": bool(meta.get("continue")),
                "remainingItemCount": meta.get("remainingItemCount")}
    vf, vr = head(f), head(r)
    if vf["names"] == vr["names"]:
        pairs = [object_views(a, b, sent) for a, b in zip(f["items"], r["items"])]
        vf["items"] = [p[0] for p in pairs]
        vr["items"] = [p[1] for p in pairs]
    return vf, vr


def watch_views(f, r, sent):
    if not (isinstance(f, list) and isinstance(r, list)):
        return [error_view(f, False) if is_error(f) else f], \
            [error_view(r, False) if is_error(r) else r]
    vf, vr = [], []
    for i in range(max(len(f), len(r))):
        a = f[i] if i < len(f) else {}
        b = r[i] if i < len(r) else {}
        oa, ob = a.get("object"), b.get("object")
        if is_error(oa) and is_error(ob):
            oa, ob = error_view(oa, True), error_view(ob, True)
        elif isinstance(oa, dict) and isinstance(ob, dict):
            oa, ob = object_views(oa, ob, sent)
        vf.append({"type": a.get("type"), "object": oa})
        vr.append({"type": b.get("type"), "object": ob})
    return vf, vr


def step_views(sf, sr):
    """The comparable views of one step on the fixture (sf) and the real server (sr). What
    counts as sent is what the case sent the fixture: sent to the real server, an object read
    from it carries the real server's defaults."""
    if sf.kind == "note":
        return {"note": sf.body}, {"note": sr.body}
    vf, vr = {"code": sf.status}, {"code": sr.status}
    if sf.kind == "watch":
        vf["events"], vr["events"] = watch_views(sf.body, sr.body, sf.sent)
    elif is_error(sf.body) or is_error(sr.body):
        vf["body"] = error_view(sf.body, sf.message) if is_error(sf.body) else \
            strip_assigned(sf.body)
        vr["body"] = error_view(sr.body, sr.message) if is_error(sr.body) else \
            strip_assigned(sr.body)
    elif isinstance(sf.body, dict) and isinstance(sf.body.get("items"), list) and \
            isinstance(sr.body, dict) and isinstance(sr.body.get("items"), list):
        vf["body"], vr["body"] = list_views(sf.body, sr.body, sf.sent)
    else:
        vf["body"], vr["body"] = object_views(sf.body, sr.body, sf.sent)
    return vf, vr


def differences(f, r, path=""):
    """Human-readable differences between the fixture's view `f` and the real one `r`."""
    if isinstance(f, dict) and isinstance(r, dict):
        out = []
        for k in list(f) + [k for k in r if k not in f]:
            p = path + "." + k if path else k
            if k not in r:
                out.append("%s: the fixture has %s, the real server nothing" % (p, short(f[k])))
            elif k not in f:
                out.append("%s: the real server has %s, the fixture nothing" % (p, short(r[k])))
            else:
                out += differences(f[k], r[k], p)
        return out
    if isinstance(f, list) and isinstance(r, list) and len(f) == len(r):
        out = []
        for i, (a, b) in enumerate(zip(f, r)):
            out += differences(a, b, "%s[%d]" % (path, i))
        return out
    if f != r:
        return ["%s: fixture %s, real %s" % (path or "(value)", short(f), short(r))]
    return []


def short(v, limit=300):
    text = json.dumps(v, sort_keys=True)
    return text if len(text) <= limit else text[:limit] + "..."


def drop_path(view, path):
    """`view` without the field at the dotted `path` ("*": every list element)."""
    view = copy.deepcopy(view)

    def walk(node, parts):
        if not parts:
            return
        head, rest = parts[0], parts[1:]
        if head == "*" and isinstance(node, list):
            for x in node:
                walk(x, rest)
        elif isinstance(node, dict) and head in node:
            if rest:
                walk(node[head], rest)
            else:
                del node[head]
    walk(view, path.split("."))
    return view


def compare(trace_f, trace_r):
    """The differences of two traces of one case, as lines (empty: they agree)."""
    problems = []
    names_f = [s.name for s in trace_f.steps]
    names_r = [s.name for s in trace_r.steps]
    if names_f != names_r:
        return ["the steps differ: fixture %s, real %s" % (names_f, names_r)]
    for sf, sr in zip(trace_f.steps, trace_r.steps):
        vf, vr = step_views(sf, sr)
        if vf.get("code") != vr.get("code"):
            # One line says it: the rest of two different answers differs anyway.
            found = ["code: fixture %s %s, real %s %s" % (vf["code"], short(vf.get("body"), 400),
                                                          vr["code"], short(vr.get("body"), 400))]
        else:
            found = differences(vf, vr)
        if sf.accept:
            key, paths = sf.accept
            assert key in ACCEPTED, key
            if not found:
                problems.append("%s: accepted difference %r no longer shows: remove it" %
                                (sf.name, key))
                continue
            if not paths:
                continue
            for p in paths:
                vf, vr = drop_path(vf, p), drop_path(vr, p)
            found = differences(vf, vr)
        problems += ["%s: %s" % (sf.name, d) for d in found]
    return problems


# --- the cases -------------------------------------------------------------------------------

def cm(name, data=None, labels=None, **fields):
    meta = {"name": name}
    if labels is not None:
        meta["labels"] = labels
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}
    if data is not None:
        body["data"] = data
    body.update(fields)
    return body


def pod(name, node=None, labels=None, containers=None, **fields):
    spec = {"containers": [{"name": "main", "image": "busybox"}] if containers is None
            else containers}
    if node:
        spec["nodeName"] = node
    meta = {"name": name}
    if labels is not None:
        meta["labels"] = labels
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    body.update(fields)
    return body


def podgroup(name, **fields):
    body = {"apiVersion": PG_VERSION, "kind": "PodGroup", "metadata": {"name": name},
            "spec": {"minMember": 2, "queue": "default"}}
    body.update(fields)
    return body


def lease(name, **spec):
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name},
            "spec": spec}


MICRO = "2026-01-01T00:00:00.000000Z"


def case_configmap_create_get(t):
    t.call("create", "POST", CM, cm("a", {"k": "v", "empty": ""}, {"app": "x"},
                                     binaryData={"b": "aGVsbG8="}))
    t.call("get", "GET", CM + "/a")
    t.call("create again", "POST", CM, cm("a", {"k": "v"}))
    t.call("create generateName", "POST", CM,
           {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "gen-"}})
    t.note("generated name has the prefix",
           (t.steps[-1].body.get("metadata") or {}).get("name", "").startswith("gen-"))
    t.call("create without kind and apiVersion", "POST", CM, {"metadata": {"name": "bare"}})
    t.call("create with resourceVersion", "POST", CM,
           {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "with-rv", "resourceVersion": "5"}})
    t.call("create with uid and creationTimestamp", "POST", CM,
           {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "with-uid", "uid": "abc",
                         "creationTimestamp": "2020-01-01T00:00:00Z"}})
    t.note("uid is the server's", (t.steps[-1].body.get("metadata") or {}).get("uid") != "abc")


def case_configmap_empty_maps_omitted(t):
    t.call("create with empty maps", "POST", CM,
           cm("e", {}, {}, binaryData={}) | {"metadata": {"name": "e", "labels": {},
                                                          "annotations": {}}})
    t.call("get", "GET", CM + "/e")
    t.call("create with null data", "POST", CM, cm("n", None) | {"data": None})
    t.call("patch adds data", "PATCH", CM + "/e", {"data": {"k": "v"},
                                                   "metadata": {"labels": {"a": "b"}}}, MERGE)
    t.call("patch null deletes the last key", "PATCH", CM + "/e",
           {"data": {"k": None}, "metadata": {"labels": {"a": None}}}, MERGE)
    t.call("put with empty maps", "PUT", CM + "/e", cm("e", {}, {}))
    t.call("list", "GET", CM)


def case_configmap_update(t):
    _, a = t.call("create", "POST", CM, cm("u", {"k": "1"}))
    t.call("put without resourceVersion", "PUT", CM + "/u", cm("u", {"k": "2"}))
    _, cur = t.call("get", "GET", CM + "/u")
    stale = copy.deepcopy(a)
    stale["data"] = {"k": "stale"}
    t.call("put with a stale resourceVersion", "PUT", CM + "/u", stale)
    _, same = t.call("put unchanged", "PUT", CM + "/u", cur)
    t.note("an unchanged put keeps the resourceVersion", rv(same) == rv(cur))
    t.call("put of a missing object", "PUT", CM + "/nope", cm("nope", {"k": "1"}))
    t.call("put with another name", "PUT", CM + "/u", cm("other", {"k": "1"}))
    t.call("put with another namespace", "PUT", CM + "/u",
           cm("u", {"k": "1"}) | {"metadata": {"name": "u", "namespace": "elsewhere"}},
           message=True)
    uid_changed = copy.deepcopy(cur)
    uid_changed["metadata"]["uid"] = "00000000-0000-0000-0000-000000000000"
    uid_changed["metadata"].pop("resourceVersion")
    t.call("put with another uid", "PUT", CM + "/u", uid_changed)


def case_configmap_merge_patch(t):
    t.call("create", "POST", CM, cm("m", {"a": "1", "b": "2"}, {"x": "1", "y": "2"}))
    t.call("patch sets and deletes keys", "PATCH", CM + "/m",
           {"data": {"a": None, "c": "3"}, "metadata": {"labels": {"x": None},
                                                        "annotations": {"note": "n"}}}, MERGE)
    _, cur = t.call("patch deletes the whole map", "PATCH", CM + "/m", {"data": None}, MERGE)
    _, same = t.call("patch unchanged", "PATCH", CM + "/m", {"metadata": {"labels": {"y": "2"}}},
                     MERGE)
    t.note("an unchanged patch keeps the resourceVersion", rv(same) == rv(cur))
    t.call("patch with a stale resourceVersion", "PATCH", CM + "/m",
           {"metadata": {"resourceVersion": "1"}, "data": {"d": "4"}}, MERGE)
    t.call("patch with the current resourceVersion", "PATCH", CM + "/m",
           {"metadata": {"resourceVersion": rv(cur)}, "data": {"d": "4"}}, MERGE)
    t.call("patch of a missing object", "PATCH", CM + "/nope", {"data": {"a": "1"}}, MERGE)
    t.call("patch of the uid", "PATCH", CM + "/m", {"metadata": {"uid": "x"}}, MERGE)
    t.call("patch of the name", "PATCH", CM + "/m", {"metadata": {"name": "other"}}, MERGE)
    t.call("strategic merge patch", "PATCH", CM + "/m", {"data": {"s": "1"}}, STRATEGIC)
    t.call("get", "GET", CM + "/m")


def case_configmap_json_patch(t):
    t.call("create", "POST", CM, cm("j", {"a": "1"}))
    t.call("add and remove", "PATCH", CM + "/j",
           [{"op": "add", "path": "/data/b", "value": "2"}, {"op": "remove", "path": "/data/a"}],
           JSON_PATCH)
    t.call("replace of a missing key adds it", "PATCH", CM + "/j",
           [{"op": "replace", "path": "/data/c", "value": "3"}], JSON_PATCH)
    t.call("a failing test", "PATCH", CM + "/j",
           [{"op": "test", "path": "/data/b", "value": "9"}], JSON_PATCH)
    t.call("remove of a missing key", "PATCH", CM + "/j",
           [{"op": "remove", "path": "/data/zz"}], JSON_PATCH)
    t.call("get", "GET", CM + "/j")


def case_configmap_delete(t):
    _, a = t.call("create", "POST", CM, cm("d", {"a": "1"}))
    t.call("delete with a stale resourceVersion", "DELETE", CM + "/d",
           {"apiVersion": "v1", "kind": "DeleteOptions",
            "preconditions": {"resourceVersion": "1"}})
    t.call("delete with another uid", "DELETE", CM + "/d",
           {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": "abc"}})
    t.call("delete with the current resourceVersion", "DELETE", CM + "/d",
           {"apiVersion": "v1", "kind": "DeleteOptions",
            "preconditions": {"resourceVersion": rv(a)}})
    t.call("get after delete", "GET", CM + "/d")
    t.call("create again", "POST", CM, cm("d", {"a": "2"}))
    t.call("delete without options", "DELETE", CM + "/d")
    t.call("delete again", "DELETE", CM + "/d")


def case_configmap_validation(t):
    t.call("bad name", "POST", CM, cm("Bad_Name", {"a": "1"}))
    t.call("number as a data value", "POST", CM, cm("num", {"a": 1}))
    t.call("null as a data value", "POST", CM, cm("null-value", {"a": None}))
    t.call("bad data key", "POST", CM, cm("bad-key", {"a b": "1"}))
    t.call("key in data and binaryData", "POST", CM,
           cm("both", {"b": "x"}, binaryData={"b": "aGVsbG8="}))
    t.call("binaryData not base64", "POST", CM, cm("not-b64", binaryData={"b": "!!!"}))
    t.call("1 MiB of values", "POST", CM, cm("mib", {"a": "x" * 1048575, "b": "y"}))
    t.call("1 MiB and a byte", "POST", CM, cm("mib-and-1", {"a": "x" * 1048576, "b": "y"}))
    t.call("bad label key", "POST", CM, cm("bad-label", labels={"a/b/c": "x"}))
    t.call("bad label value", "POST", CM, cm("bad-value", labels={"a": "x y"}))
    t.call("number as a label value", "POST", CM, cm("num-label", labels={"a": 1}))
    t.call("null as a label value", "POST", CM, cm("null-label", labels={"a": None}))
    t.call("bad annotation key", "POST", CM,
           {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "bad-annotation", "annotations": {"a b": "x"}}})
    t.call("annotations over 256 KiB", "POST", CM,
           {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "big-annotation", "annotations": {"a": "x" * 262144}}})
    t.call("unknown fields are dropped", "POST", CM,
           cm("unknown", {"a": "1"}, bogus={"x": 1}) |
           {"metadata": {"name": "unknown", "bogus": "x"}})


def case_kind_mismatch(t):
    t.call("kind Pod to configmaps", "POST", CM, cm("k1") | {"kind": "Pod"})
    t.call("apiVersion v2 to configmaps", "POST", CM, cm("k2") | {"apiVersion": "v2"})
    t.call("kind Job to podgroups", "POST", PG, podgroup("k3") | {"kind": "Job"})
    t.call("apiVersion v1 to podgroups", "POST", PG, podgroup("k4") | {"apiVersion": "v1"},
           message=True)
    t.call("podgroup without kind", "POST", PG, {"metadata": {"name": "k5"}})
    t.call("namespace of the body differs", "POST", CM,
           cm("k6") | {"metadata": {"name": "k6", "namespace": "elsewhere"}}, message=True)
    t.call("a JSON array", "POST", CM, [1, 2])
    t.call("create in a namespace nobody created", "POST",
           "/api/v1/namespaces/%s-none/configmaps" % t.ns, cm("k7"),
           accept=("no-namespace-objects", ()))


def case_pod_validation(t):
    t.call("no spec", "POST", PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1"}})
    t.call("no containers", "POST", PODS, pod("p2", containers=[]))
    t.call("container without image", "POST", PODS, pod("p3", containers=[{"name": "c"}]))
    t.call("container without name", "POST", PODS, pod("p4", containers=[{"image": "i"}]))
    t.call("bad container name", "POST", PODS, pod("p5", containers=[{"name": "C_1",
                                                                        "image": "i"}]))
    t.call("duplicate container names", "POST", PODS,
           pod("p6", containers=[{"name": "c", "image": "i"}, {"name": "c", "image": "j"}]))
    t.call("valid", "POST", PODS, pod("p7"))


def case_pod_status(t):
    _, p = t.call("create with a status", "POST", PODS,
                  pod("s", node="%s-node" % t.ns, labels={"app": "x"},
                      status={"phase": "Running", "podIP": "10.0.0.1"}))
    t.call("get", "GET", PODS + "/s")
    t.call("put status", "PUT", PODS + "/s/status",
           p | {"status": {"phase": "Running", "podIP": "10.0.0.1",
                           "conditions": [{"type": "Ready", "status": "True"}]}})
    t.call("merge-patch status, null deletes", "PATCH", PODS + "/s/status",
           {"status": {"phase": "Failed", "conditions": None}}, MERGE)
    t.call("a patch of the pod ignores its status", "PATCH", PODS + "/s",
           {"metadata": {"annotations": {"a": "b"}}, "status": {"phase": "Succeeded"}}, MERGE)
    t.call("patch status with a stale resourceVersion", "PATCH", PODS + "/s/status",
           {"metadata": {"resourceVersion": rv(p)}, "status": {"phase": "Running"}}, MERGE)
    t.call("status of a missing pod", "PATCH", PODS + "/nope/status",
           {"status": {"phase": "Running"}}, MERGE)


def case_pod_update(t):
    t.call("create", "POST", PODS, pod("u", node="%s-node" % t.ns))
    t.call("patch labels", "PATCH", PODS + "/u", {"metadata": {"labels": {"a": "1"}}}, MERGE)
    _, cur = t.call("get", "GET", PODS + "/u")
    changed = copy.deepcopy(cur)
    changed["metadata"].pop("resourceVersion")
    changed["metadata"]["labels"] = {"a": "2"}
    t.call("put the object read, without resourceVersion", "PUT", PODS + "/u", changed)
    t.call("patch spec.nodeName", "PATCH", PODS + "/u", {"spec": {"nodeName": "elsewhere"}},
           MERGE)
    t.call("patch a container's image", "PATCH", PODS + "/u",
           [{"op": "replace", "path": "/spec/containers/0/image", "value": "busybox:2"}],
           JSON_PATCH)
    t.call("put the spec as created", "PUT", PODS + "/u", pod("u", node="%s-node" % t.ns),
           accept=("admission-plugins", ()))


def case_pod_delete(t):
    t.call("create unscheduled", "POST", PODS, pod("d"))
    t.call("delete", "DELETE", PODS + "/d")
    t.call("get after delete", "GET", PODS + "/d")
    t.call("create bound", "POST", PODS, pod("b", node=t.name("n1")))
    t.call("ended", "PATCH", PODS + "/b/status", {"status": {"phase": "Succeeded"}}, MERGE)
    t.call("delete an ended pod", "DELETE", PODS + "/b")
    t.call("create running", "POST", PODS, pod("r", node=t.name("n1")))
    t.call("running", "PATCH", PODS + "/r/status", {"status": {"phase": "Running"}}, MERGE)
    t.call("delete a running pod", "DELETE", PODS + "/r",
           accept=("graceful-deletion", ("body.metadata.deletionGracePeriodSeconds",)))
    t.call("get after deleting a running pod", "GET", PODS + "/r",
           accept=("graceful-deletion", ()))


def case_pod_field_selectors(t):
    node = t.name("n1")
    t.call("create on the node", "POST", PODS, pod("on", node=node))
    t.call("create unscheduled", "POST", PODS, pod("off"))
    t.call("running", "PATCH", PODS + "/off/status", {"status": {"phase": "Running"}}, MERGE)
    for q in ("spec.nodeName=" + node, "spec.nodeName=", "spec.nodeName!=" + node,
              "status.phase=Running", "status.phase!=Running,spec.nodeName=" + node,
              "metadata.name=on", "metadata.namespace=" + t.ns, "status.podIP=10.9.9.9"):
        t.call("list " + q, "GET", PODS + "?fieldSelector=" + urllib.parse.quote(q))
    t.call("list all namespaces by node", "GET",
           "/api/v1/pods?fieldSelector=" + urllib.parse.quote("spec.nodeName=" + node))
    t.call("unsupported field", "GET", PODS + "?fieldSelector=spec.bogus%3D1", message=True)
    t.call("not a selector", "GET", PODS + "?fieldSelector=metadata.name", message=True)


def case_node(t):
    n = t.name("n")
    path = NODES + "/" + n
    t.call("create", "POST", NODES,
           {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": {"a": "1"}},
            "spec": {"unschedulable": True,
                     "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]},
            "status": {"capacity": {"cpu": "4"},
                       "conditions": [{"type": "Ready", "status": "True"}]}},
           accept=("admission-plugins", ("body.spec.taints",)))
    t.call("patch labels and taints", "PATCH", path,
           {"metadata": {"labels": {"a": None, "b": "2"}},
            "spec": {"unschedulable": None,
                     "taints": [{"key": "clusterd.io/repeat-offender", "value": "true",
                                 "effect": "NoSchedule"}]}}, MERGE)
    t.call("cordon", "PATCH", path, {"spec": {"unschedulable": True}}, MERGE)
    t.call("patch status", "PATCH", path + "/status", {"status": {"capacity": {"cpu": "8"}}},
           MERGE)
    t.call("bad taint effect", "PATCH", path,
           {"spec": {"taints": [{"key": "k", "effect": "Bogus"}]}}, MERGE)
    t.call("bad taint key", "PATCH", path,
           {"spec": {"taints": [{"key": "a b", "effect": "NoSchedule"}]}}, MERGE)
    t.call("list by name", "GET", NODES + "?fieldSelector=metadata.name%3D" + n)
    t.call("list by spec.unschedulable", "GET",
           NODES + "?labelSelector=b%3D2&fieldSelector=spec.unschedulable%3Dtrue")
    t.call("unsupported field", "GET", NODES + "?fieldSelector=metadata.namespace%3Dx",
           message=True)
    t.call("put without resourceVersion", "PUT", path,
           {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n}, "spec": {}})
    t.call("delete", "DELETE", path)
    t.call("get after delete", "GET", path)


def case_podgroup_status(t):
    _, g = t.call("create with a status", "POST", PG,
                  podgroup("g", status={"phase": "Running"}) |
                  {"metadata": {"name": "g", "labels": {}}})
    _, g = t.call("put status", "PUT", PG + "/g/status",
                  g | {"status": {"phase": "Running", "running": 1}, "spec": {"minMember": 9}})
    t.call("merge-patch status, null deletes", "PATCH", PG + "/g/status",
           {"status": {"phase": "Inqueue", "running": None}}, MERGE)
    _, g = t.call("a patch keeps the status", "PATCH", PG + "/g",
                  {"spec": {"minMember": 3}, "status": {"phase": "Ignored"}}, MERGE)
    t.call("a put keeps the status", "PUT", PG + "/g", g | {"status": {"phase": "Ignored"}})
    t.call("status with a stale resourceVersion", "PUT", PG + "/g/status",
           g | {"status": {"phase": "Pending"}})
    t.call("strategic merge patch", "PATCH", PG + "/g", {"spec": {"minMember": 4}}, STRATEGIC,
           message=True)
    t.call("get", "GET", PG + "/g")
    t.call("list", "GET", PG)


def case_podgroup_update(t):
    _, g = t.call("create", "POST", PG, podgroup("g"))
    t.call("put without resourceVersion", "PUT", PG + "/g", podgroup("g"))
    t.call("put status without resourceVersion", "PUT", PG + "/g/status",
           podgroup("g", status={"phase": "Running"}))
    _, g2 = t.call("put", "PUT", PG + "/g", g | {"spec": {"minMember": 5}})
    t.call("put with a stale resourceVersion", "PUT", PG + "/g", g | {"spec": {"minMember": 6}})
    t.call("merge-patch with null", "PATCH", PG + "/g", {"spec": {"queue": None}}, MERGE)
    t.call("get of a missing one", "GET", PG + "/nope")
    t.call("delete with a stale resourceVersion", "DELETE", PG + "/g",
           {"apiVersion": "v1", "kind": "DeleteOptions",
            "preconditions": {"resourceVersion": rv(g)}})
    uid_changed = copy.deepcopy(g2)
    uid_changed["metadata"]["uid"] = "00000000-0000-0000-0000-000000000000"
    t.call("put with another uid", "PUT", PG + "/g", uid_changed)
    t.call("delete", "DELETE", PG + "/g")
    t.call("create again", "POST", PG, podgroup("g"))


def case_lease(t):
    _, a = t.call("create with MicroTime", "POST", LEASES,
                  lease("l", holderIdentity="a", leaseDurationSeconds=15, acquireTime=MICRO,
                        renewTime=MICRO, leaseTransitions=0))
    renewed = copy.deepcopy(a)
    renewed["spec"]["renewTime"] = "2026-01-01T00:00:02.500000Z"
    t.call("renew", "PUT", LEASES + "/l", renewed)
    t.call("renew with a stale resourceVersion", "PUT", LEASES + "/l", renewed)
    t.call("put without resourceVersion", "PUT", LEASES + "/l",
           lease("l", holderIdentity="b", leaseDurationSeconds=15))
    t.call("time without microseconds", "POST", LEASES,
           lease("l2", holderIdentity="a", renewTime="2026-01-01T00:00:00Z"))
    t.call("time with nanoseconds", "POST", LEASES,
           lease("l3", holderIdentity="a", renewTime="2026-01-01T00:00:00.123456789Z"))
    t.call("time with an offset", "POST", LEASES,
           lease("l4", holderIdentity="a", renewTime="2026-01-01T08:00:00.500000+08:00"))
    t.call("zero duration", "POST", LEASES, lease("l5", holderIdentity="a",
                                                   leaseDurationSeconds=0))
    t.call("negative transitions", "POST", LEASES, lease("l6", holderIdentity="a",
                                                          leaseTransitions=-1))
    t.call("duration as a string", "POST", LEASES, lease("l7", holderIdentity="a",
                                                          leaseDurationSeconds="15"))
    t.call("get of a missing one", "GET", LEASES + "/nope")
    t.call("create existing", "POST", LEASES, lease("l", holderIdentity="a"))
    t.call("release", "PATCH", LEASES + "/l",
           {"spec": {"holderIdentity": None, "leaseDurationSeconds": 1}}, MERGE)
    t.call("delete", "DELETE", LEASES + "/l")


def clusterd_event(t, name, **fields):
    # As src/agent/kube_event.cc writes it.
    body = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": t.ns},
            "involvedObject": {"kind": "Pod", "namespace": "mindx-dl", "name": "worker-0"},
            "reason": "Occur", "message": "device fault, nodeName:node-1",
            "source": {"component": "device-plugin", "host": "node-1"},
            "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:00:00Z",
            "count": 1, "type": "Warning", "eventTime": "2026-01-01T00:00:00.123000Z",
            "action": "RestartRequest", "reportingComponent": "device-plugin",
            "reportingInstance": "worker-0"}
    body.update(fields)
    return body


def case_event(t):
    t.call("create as clusterd does", "POST", EVENTS, clusterd_event(t, "e1"))
    t.call("get", "GET", EVENTS + "/e1")
    t.call("list by involvedObject.name", "GET",
           EVENTS + "?fieldSelector=involvedObject.name%3Dworker-0")
    t.call("eventTime without reporting fields", "POST", EVENTS,
           clusterd_event(t, "e2", reportingComponent="", reportingInstance="", action=""))
    legacy = clusterd_event(t, "e3")
    for f in ("eventTime", "action", "reportingComponent", "reportingInstance"):
        legacy.pop(f)
    t.call("legacy event of another namespace", "POST", EVENTS, legacy)
    legacy["involvedObject"]["namespace"] = t.ns
    t.call("legacy event", "POST", EVENTS, legacy)
    t.call("a message over 1024 characters", "POST", EVENTS,
           clusterd_event(t, "e4", message="m" * 1025))
    t.call("count as a string", "POST", EVENTS, clusterd_event(t, "e5", count="1"))
    t.call("fractional seconds in a Time", "POST", EVENTS,
           clusterd_event(t, "e6", firstTimestamp="2026-01-01T00:00:00.5Z"))
    t.call("put without resourceVersion", "PUT", EVENTS + "/e1",
           clusterd_event(t, "e1", count=2))
    t.call("delete", "DELETE", EVENTS + "/e1")


def case_label_selectors(t):
    for name, labels in (("s1", {"app": "a", "tier": "x"}), ("s2", {"app": "b"}), ("s3", {})):
        t.call("create " + name, "POST", CM, cm(name, labels=labels))
    for q in ("app=a", "app==a", "app!=a", "app", "!app", "app in (a,b)", "app notin (a)",
              "tier,app=a", "app=a,app=b", "app=", "!app,tier"):
        t.call("list " + q, "GET", CM + "?labelSelector=" + urllib.parse.quote(q))
    t.call("list all namespaces", "GET", "/api/v1/configmaps?labelSelector=" +
           urllib.parse.quote("app in (a,b)"))
    for q in ("bad key=", "app=a b", "=a"):
        t.call("malformed " + q, "GET", CM + "?labelSelector=" + urllib.parse.quote(q))


def case_field_selectors(t):
    for name in ("f1", "f2"):
        t.call("create " + name, "POST", CM, cm(name))
    for q in ("metadata.name=f1", "metadata.name!=f1", "metadata.namespace=" + t.ns,
              "metadata.namespace=other", "metadata.name=f1,metadata.name=f2"):
        t.call("list " + q, "GET", CM + "?fieldSelector=" + urllib.parse.quote(q))
    for q in ("data.x=1", "metadata.labels=x"):
        t.call("unsupported " + q, "GET", CM + "?fieldSelector=" + urllib.parse.quote(q),
               message=True)
    t.call("unsupported on leases", "GET", LEASES + "?fieldSelector=spec.holderIdentity%3Da",
           message=True)
    t.call("unsupported on podgroups", "GET", PG + "?fieldSelector=spec.queue%3Da",
           message=True)
    t.call("metadata.namespace on podgroups", "GET", PG + "?fieldSelector=metadata.namespace%3D"
           + t.ns)


def case_list_paging(t):
    for i in range(5):
        t.call("create %d" % i, "POST", CM, cm("p%d" % i))
    _, page = t.call("page 1", "GET", CM + "?limit=2")
    cont = (page.get("metadata") or {}).get("continue", "")
    _, page = t.call("page 2", "GET", CM + "?limit=2&continue=" + urllib.parse.quote(cont))
    cont = (page.get("metadata") or {}).get("continue", "")
    t.call("page 3", "GET", CM + "?limit=2&continue=" + urllib.parse.quote(cont))
    t.call("limit larger than the list", "GET", CM + "?limit=10")
    t.call("limit 0", "GET", CM + "?limit=0")
    t.call("a continue token that is not one", "GET", CM + "?limit=2&continue=garbage")
    t.call("paged with a selector", "GET", CM + "?limit=1&fieldSelector=metadata.name%3Dp3")


def case_watch(t):
    _, a = t.call("create", "POST", CM, cm("w", {"n": "0"}, {"app": "w"}))
    t.call("update", "PUT", CM + "/w", cm("w", {"n": "1"}, {"app": "w"}))
    t.call("relabel", "PATCH", CM + "/w", {"metadata": {"labels": {"app": "other"}}}, MERGE)
    t.call("create another", "POST", CM, cm("w2", {"n": "0"}, {"app": "w"}))
    t.call("delete", "DELETE", CM + "/w")
    t.call("create the sentinel", "POST", CM, cm("zz-end", labels={"app": "w"}))
    t.watch("watch from the first version", CM + "?resourceVersion=%s" % rv(a),
            until=("ADDED", "zz-end"))
    t.watch("watch with a label selector", CM + "?resourceVersion=%s&labelSelector=app%%3Dw"
            % rv(a), until=("ADDED", "zz-end"))
    t.watch("watch by name", CM + "?resourceVersion=%s&fieldSelector=metadata.name%%3Dw"
            % rv(a), until=("DELETED", "w"))
    _, last = t.call("get the sentinel", "GET", CM + "/zz-end")
    t.watch("a quiet watch ends at timeoutSeconds",
            CM + "?resourceVersion=%s&timeoutSeconds=2" % rv(last))


def case_watch_pods_by_node(t):
    node = t.name("n1")
    _, a = t.call("create on the node", "POST", PODS, pod("a", node=node))
    t.call("create elsewhere", "POST", PODS, pod("b", node=t.name("n2")))
    # Ended: a pod bound to a node and still running is deleted gracefully by the real
    # server (see pod_delete).
    t.call("status of the one on the node", "PATCH", PODS + "/a/status",
           {"status": {"phase": "Failed"}}, MERGE)
    t.call("delete the one on the node", "DELETE", PODS + "/a")
    t.call("the sentinel", "POST", PODS, pod("zz-end", node=node))
    t.watch("watch by spec.nodeName across namespaces", "/api/v1/pods?resourceVersion=%s&"
            "fieldSelector=spec.nodeName%%3D%s" % (rv(a), node), until=("ADDED", "zz-end"))


def case_forbidden(t):
    t.call("create as the admin", "POST", CM, cm("f"))
    t.call("get allowed", "GET", CM + "/f", limited=True)
    t.call("list in the namespace", "GET", CM, limited=True)
    t.call("list across namespaces", "GET", "/api/v1/configmaps", limited=True)
    t.call("get a lease", "GET", LEASES + "/x", limited=True)
    t.call("patch pods/status", "PATCH", PODS + "/x/status", {"status": {}}, MERGE,
           limited=True)
    t.call("get a node", "GET", NODES + "/x", limited=True)
    t.call("create a podgroup", "POST", PG, podgroup("f"), limited=True)


CASES = [(name[len("case_"):], fn) for name, fn in sorted(globals().items())
         if name.startswith("case_") and callable(fn)]


def namespace_of(case):
    return "fid-" + case.replace("_", "-")


FORBIDDEN_NS = namespace_of("forbidden")
LIMITED_USER = "system:serviceaccount:%s:limited" % FORBIDDEN_NS
LIMITED_RULES = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]


def limited_token_on_real(server):
    """A TokenRequest token of a ServiceAccount allowed LIMITED_RULES in FORBIDDEN_NS."""
    ns = FORBIDDEN_NS
    rbac = "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/" % ns
    for path, body in (
            ("/api/v1/namespaces/%s/serviceaccounts" % ns,
             {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "limited"}}),
            (rbac + "roles", {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                              "metadata": {"name": "limited"}, "rules": LIMITED_RULES}),
            (rbac + "rolebindings", {
                "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": {"name": "limited"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                            "name": "limited"},
                "subjects": [{"kind": "ServiceAccount", "name": "limited", "namespace": ns}]})):
        status, answer = server.api("POST", path, body, token=server.admin_token)
        if status != 201:
            raise RuntimeError("POST %s: %s %s" % (path, status, answer))
    status, answer = server.api(
        "POST", "/api/v1/namespaces/%s/serviceaccounts/limited/token" % ns,
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
         "spec": {"expirationSeconds": 3600}}, token=server.admin_token)
    if status != 201:
        raise RuntimeError("TokenRequest: %s %s" % (status, answer))
    token = answer["status"]["token"]
    # The RBAC authorizer learns of the binding through its informers: wait for it.
    fixture_process.wait_until(
        lambda: server.api("GET", "/api/v1/namespaces/%s/configmaps/none" % ns,
                           token=token)[0] == 404,
        timeout=30, what="the RoleBinding of %s to take effect" % LIMITED_USER)
    return token


class Side:
    """A server with the attributes Trace uses: url, ca, token, api()."""

    def __init__(self, server):
        self.server = server
        self.url, self.ca, self.token = server.url, server.ca, server.token

    def api(self, method, path, body=None, content_type=JSON, token=None):
        return self.server.api(method, path, body, content_type, token=token)


@unittest.skipIf(MISSING, SKIP_REASON)
class FixtureAgainstRealServer(unittest.TestCase):
    """Each test is one case of CASES, on both servers."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="kube-fidelity-")
        fixture_limited = secrets.token_hex(16)
        policy = os.path.join(cls.dir, "policy.json")
        with open(policy, "w") as f:
            json.dump({LIMITED_USER: LIMITED_RULES}, f)
        try:
            cls.fixture = fixture_process.FixtureProcess(extra_args=(
                "--token", "%s=%s" % (fixture_limited, LIMITED_USER), "--policy", policy))
        except BaseException:
            shutil.rmtree(cls.dir, ignore_errors=True)
            raise
        try:
            cls.real = real_server.RealServer(namespaces=[namespace_of(c) for c, _ in CASES])
        except BaseException:
            cls.fixture.close()
            shutil.rmtree(cls.dir, ignore_errors=True)
            raise
        try:
            real_limited = limited_token_on_real(cls.real)
        except BaseException:
            cls.tearDownClass()
            raise
        cls.sides = ((Side(cls.fixture), fixture_limited), (Side(cls.real), real_limited))
        print("\nreal server ready in %.1fs" % cls.real.start_seconds, file=sys.stderr)

    @classmethod
    def tearDownClass(cls):
        cls.fixture.close()
        cls.real.close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def run_case(self, case, fn):
        traces = []
        for side, limited in self.sides:
            trace = Trace(side, namespace_of(case), limited)
            fn(trace)
            traces.append(trace)
        problems = compare(*traces)
        self.assertFalse(problems, "the fixture differs from the real server in case %s:\n  %s"
                         % (case, "\n  ".join(problems)))


def add_case_tests():
    for case, fn in CASES:
        def test(self, case=case, fn=fn):
            self.run_case(case, fn)
        test.__doc__ = (fn.__doc__ or case.replace("_", " ")).strip().split("\n")[0]
        setattr(FixtureAgainstRealServer, "test_" + case, test)


add_case_tests()


@unittest.skipIf(MISSING, SKIP_REASON)
class ExpiryAgainstRealServer(unittest.TestCase):
    """410 Expired for a watch and a continued list from before a compaction. Its own real
    server runs without the watch cache: the cache keeps its whole history for at least 75 s,
    so only etcd can be made to expire a version within a test."""

    NS = "fid-expiry"

    @classmethod
    def setUpClass(cls):
        cls.fixture = fixture_process.FixtureProcess()
        try:
            cls.real = real_server.RealServer(
                namespaces=[cls.NS], extra_args=["--apiserver-arg=--watch-cache=false"])
        except BaseException:
            cls.fixture.close()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.fixture.close()
        cls.real.close()

    def test_watch_and_continue_from_before_a_compaction(self):
        def case(t, compact):
            _, a = t.call("create", "POST", CM, cm("x", {"n": "0"}))
            for i in range(1, 3):
                t.call("update %d" % i, "PUT", CM + "/x", cm("x", {"n": str(i)}))
            for i in range(3):
                t.call("create %d" % i, "POST", CM, cm("y%d" % i))
            _, page = t.call("page 1", "GET", CM + "?limit=2")
            t.call("one more write", "POST", CM, cm("z"))
            compact()
            t.watch("watch from before the compaction",
                    CM + "?resourceVersion=%s&timeoutSeconds=5" % rv(a),
                    accept=("watch-expiry-text", ("events.*.object.message",)))
            t.call("continue from before the compaction", "GET", CM + "?limit=2&continue=" +
                   urllib.parse.quote((page.get("metadata") or {}).get("continue", "")))
            t.call("a new list", "GET", CM + "?limit=2")
        fixture_trace = Trace(Side(self.fixture), self.NS, None)
        case(fixture_trace, lambda: self.fixture.fault("compact"))
        real_trace = Trace(Side(self.real), self.NS, None)
        case(real_trace, self.real.compact)
        for trace in (fixture_trace, real_trace):
            events = trace.steps[-3].body
            self.assertIn("too old", str(events).lower(), events)
        problems = compare(fixture_trace, real_trace)
        self.assertFalse(problems, "the fixture differs from the real server:\n  " +
                         "\n  ".join(problems))


if __name__ == "__main__":
    unittest.main()
