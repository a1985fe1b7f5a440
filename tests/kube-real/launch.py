#!/usr/bin/python3
"""Starts a real Kubernetes API server (kube-apiserver + etcd, built by build.sh) on 127.0.0.1
for tests, the way tests/fixtures/kube_apiserver.py starts its stand-in.

Everything lives in --dir: pki/ (a throw-away CA, the serving certificate for 127.0.0.1 and
localhost, the service-account signing key pair, an admin client certificate in
system:masters, the static token file, kubeconfigs), etcd/ (etcd's data) and logs/. Ports are
free loopback ports. The API server runs without controller-manager or scheduler, with:
  * --authorization-mode=Node,RBAC; a static token file with one token for user "admin" and
    one for user "test-user" (both in system:masters); client certificates signed by the CA;
  * service-account token issuing (--service-account-issuer/-key-file/-signing-key-file);
  * the default admission plugins (ServiceAccount included): once ready, the namespaces
    default, kube-system, mindx-dl, cluster-system (and any --namespace) exist with their
    `default` ServiceAccount, which a real server needs before it admits a Pod there;
  * the CustomResourceDefinitions clusterd uses, each Established before the ready file is
    written: scheduling.volcano.sh/v1beta1 podgroups, batch.volcano.sh/v1alpha1 jobs and
    mindxdl.gitee.com/v1 ascendjobs (namespaced, status subresource, any content);
  * --etcd-compaction-interval from the flag of the same name (default 5m; 0 disables).

When ready it writes --ready-file (JSON): url, ca, kubeconfig (admin, bearer token),
kubeconfig_token (test-user, bearer token, inline CA: the format of the fixture's
kubeconfig-token.yaml), kubeconfig_cert (admin client certificate), admin_token, token,
etcd_url, pid (this launcher's), dir, seconds (start to ready).

SIGUSR1 takes kube-apiserver down with SIGKILL (a crash: its open connections reset, its port
refuses new ones; etcd and every object stay);
SIGUSR2 starts it again on the same port and waits for its /readyz (RealServer.set_down): an
outage and a restart, for the tests of what clusterd does meanwhile.

--preload FILE: one JSON object a line (apiVersion and kind of a served resource), created as
the admin after readiness and before the ready file: Namespace and CustomResourceDefinition
objects first, one by one, then the namespaces the others name (with their default
ServiceAccount), then the others in file order by 8 threads (so only roughly in order).
uid, resourceVersion and creationTimestamp are the server's. An object's status is then
written through the status subresource where the resource has one (a create drops it there).

It stops both children (SIGTERM, kube-apiserver first) on SIGTERM/SIGINT and when its own
parent dies; the children get PR_SET_PDEATHSIG (SIGKILL) so that they die with the launcher
even when it is SIGKILLed.

Usage:
  launch.py --dir DIR --ready-file FILE [--bin DIR] [--etcd-compaction-interval 5m]
            [--namespace NS ...] [--preload FILE] [--token TOKEN] [--admin-token TOKEN]
            [--timeout SECONDS] [--apiserver-arg ARG ...] [-v N]
"""

import argparse
import base64
import concurrent.futures
import ctypes
import http.client
import json
import os
import secrets
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import traceback
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BIN = os.environ.get("KUBE_REAL_BIN") or os.path.join(HERE, "bin")
DEFAULT_NAMESPACES = ["default", "kube-system", "mindx-dl", "cluster-system"]

# (group, version, kind, plural, singular, shortNames): all namespaced, status subresource.
CRDS = [
    ("scheduling.volcano.sh", "v1beta1", "PodGroup", "podgroups", "podgroup", ["pg"]),
    ("batch.volcano.sh", "v1alpha1", "Job", "jobs", "job", ["vcjob", "vj"]),
    ("mindxdl.gitee.com", "v1", "AscendJob", "ascendjobs", "ascendjob", []),
]

PR_SET_PDEATHSIG = 1


def log(msg):
    sys.stderr.write("launch.py: %s\n" % msg)
    sys.stderr.flush()


def free_ports(n):
    """n distinct free loopback TCP ports (bound and released together)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def die_with_parent():
    """preexec_fn: the child gets SIGKILL when the launcher (its parent) dies. SIGKILL, not
    SIGTERM: both servers shut down gracefully on SIGTERM, which takes etcd ~7 s and
    kube-apiserver longer once etcd is gone, and the data is thrown away anyway. (The signal
    follows the thread that forked: children are started from the main thread only.)"""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except Exception:
        pass
    os.setpgrp()  # no terminal signals straight to the children: the launcher stops them


def openssl(*args):
    r = subprocess.run(["openssl", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise RuntimeError("openssl %s failed: %s" % (" ".join(args), r.stderr.decode()))


def make_pki(d):
    """CA, serving certificate, service-account key pair, admin client certificate."""
    os.makedirs(d, exist_ok=True)
    p = lambda name: os.path.join(d, name)
    if os.path.exists(p("admin.crt")):
        return
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", p("ca.key"),
            "-out", p("ca.crt"), "-days", "3650", "-subj", "/CN=kube-real-ca",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature")
    with open(p("server.ext"), "w") as f:
        f.write("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=serverAuth\n"
                "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,"
                "DNS:kubernetes.default,DNS:kubernetes.default.svc,"
                "DNS:kubernetes.default.svc.cluster.local\n")
    with open(p("client.ext"), "w") as f:
        f.write("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=clientAuth\n")
    for name, subj, ext in (("apiserver", "/CN=kube-apiserver", "server.ext"),
                            ("admin", "/O=system:masters/CN=admin", "client.ext")):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", p(name + ".key"),
                "-out", p(name + ".csr"), "-subj", subj)
        openssl("x509", "-req", "-in", p(name + ".csr"), "-CA", p("ca.crt"), "-CAkey",
                p("ca.key"), "-CAcreateserial", "-out", p(name + ".crt"), "-days", "3650",
                "-extfile", p(ext))
    openssl("genrsa", "-out", p("sa.key"), "2048")
    openssl("rsa", "-in", p("sa.key"), "-pubout", "-out", p("sa.pub"))


def dump(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def token_kubeconfig(url, ca, user, token):
    """The format of tests/fixtures/kube_apiserver.py's kubeconfig-token.yaml."""
    with open(ca, "rb") as f:
        ca_data = base64.b64encode(f.read()).decode()
    return """apiVersion: v1
kind: Config
clusters:
- name: kube-real
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    token: %s
contexts:
- name: kube-real-token
  context: {cluster: kube-real, user: %s}
current-context: kube-real-token
""" % (url, ca_data, user, token, user)


def cert_kubeconfig(url, pki):
    return """apiVersion: v1
kind: Config
clusters:
- name: kube-real
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: admin
  user:
    client-certificate: %s
    client-key: %s
contexts:
- name: kube-real-cert
  context: {cluster: kube-real, user: admin, namespace: default}
current-context: kube-real-cert
""" % (url, os.path.join(pki, "ca.crt"), os.path.join(pki, "admin.crt"),
       os.path.join(pki, "admin.key"))


class Client:
    """A small JSON client with one keep-alive HTTPS connection per thread."""

    def __init__(self, url, ca, token):
        u = urllib.parse.urlsplit(url)
        self.host, self.port, self.token = u.hostname, u.port, token
        self.ctx = ssl.create_default_context(cafile=ca)
        self.local = threading.local()

    def request(self, method, path, body=None, timeout=30,
                content_type="application/json"):
        headers = {"Authorization": "Bearer " + self.token, "Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = content_type
        for attempt in range(3):
            conn = getattr(self.local, "conn", None)
            if conn is None:
                conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx,
                                                   timeout=timeout)
                self.local.conn = conn
            try:
                conn.request(method, path, body=data, headers=headers)
                resp = conn.getresponse()
                raw = resp.read()
            except (OSError, http.client.HTTPException):
                conn.close()
                self.local.conn = None
                if attempt == 2:
                    raise
                time.sleep(0.2)
                continue
            try:
                return resp.status, json.loads(raw) if raw else None
            except ValueError:
                return resp.status, raw.decode(errors="replace")


class Launcher:
    def __init__(self, args):
        self.args = args
        self.dir = os.path.abspath(args.dir)
        self.pki = os.path.join(self.dir, "pki")
        self.logs = os.path.join(self.dir, "logs")
        self.children = []  # (name, Popen), in start order
        self.stopping = threading.Event()
        # SIGUSR1 takes kube-apiserver down (an outage: its port refuses connections), SIGUSR2
        # brings it up again on the same port (a restart); etcd keeps running.
        self.want_apiserver_up = True
        self.apiserver_argv = None

    # --- children ---------------------------------------------------------------------------
    def spawn(self, name, argv):
        logf = open(os.path.join(self.logs, name + ".log"), "ab")
        proc = subprocess.Popen(argv, stdout=logf, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, preexec_fn=die_with_parent)
        logf.close()
        self.children.append((name, proc))
        return proc

    def check_children(self):
        for name, proc in self.children:
            if proc.poll() is not None:
                tail = ""
                try:
                    with open(os.path.join(self.logs, name + ".log"), "rb") as f:
                        f.seek(0, 2)
                        f.seek(max(0, f.tell() - 4000))
                        tail = f.read().decode(errors="replace")
                except OSError:
                    pass
                raise RuntimeError("%s exited with %s; end of its log:\n%s"
                                   % (name, proc.returncode, tail))

    def stop(self):
        for name, proc in reversed(self.children):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    log("%s did not stop in 15 s: SIGKILL" % name)
                    proc.kill()
                    proc.wait()

    def binary(self, name):
        path = os.path.join(os.path.abspath(self.args.bin), name)
        if not os.access(path, os.X_OK):
            raise RuntimeError("%s not found; build it with: bash %s [DIR] (and set "
                               "KUBE_REAL_BIN=DIR or --bin DIR)"
                               % (path, os.path.join(HERE, "build.sh")))
        return path

    # --- start ------------------------------------------------------------------------------
    def start_etcd(self):
        client_port, peer_port = free_ports(2)
        self.etcd_url = "http://127.0.0.1:%d" % client_port
        peer = "http://127.0.0.1:%d" % peer_port
        argv = [self.binary("etcd"), "--name", "kube-real",
                "--data-dir", os.path.join(self.dir, "etcd"),
                "--listen-client-urls", self.etcd_url, "--advertise-client-urls", self.etcd_url,
                "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                "--initial-cluster", "kube-real=" + peer, "--initial-cluster-state", "new",
                "--log-level", "warn"]
        if not self.args.etcd_fsync:
            argv.append("--unsafe-no-fsync")
        self.spawn("etcd", argv)
        self.wait_for("etcd health", self.etcd_healthy, self.args.timeout)

    def etcd_healthy(self):
        u = urllib.parse.urlsplit(self.etcd_url)
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=2)
        try:
            conn.request("GET", "/health")
            resp = conn.getresponse()
            return resp.status == 200 and json.loads(resp.read()).get("health") == "true"
        except (OSError, ValueError, http.client.HTTPException):
            return False
        finally:
            conn.close()

    def start_apiserver(self):
        (port,) = free_ports(1)
        self.url = "https://127.0.0.1:%d" % port
        p = lambda name: os.path.join(self.pki, name)
        dump(p("tokens.csv"), '%s,admin,admin,"system:masters"\n%s,test-user,test-user,'
             '"system:masters"\n' % (self.admin_token, self.token))
        argv = [self.binary("kube-apiserver"),
                "--bind-address=127.0.0.1", "--secure-port=%d" % port,
                "--advertise-address=127.0.0.1",
                "--endpoint-reconciler-type=none",
                "--etcd-servers=" + self.etcd_url,
                "--etcd-compaction-interval=" + self.args.etcd_compaction_interval,
                "--tls-cert-file=" + p("apiserver.crt"),
                "--tls-private-key-file=" + p("apiserver.key"),
                "--client-ca-file=" + p("ca.crt"),
                "--token-auth-file=" + p("tokens.csv"),
                "--authorization-mode=Node,RBAC",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                "--service-account-key-file=" + p("sa.pub"),
                "--service-account-signing-key-file=" + p("sa.key"),
                "--service-cluster-ip-range=10.0.0.0/24",
                "--cert-dir=" + p("generated"),
                "--profiling=false",
                "--v=%d" % self.args.v,
                *self.args.apiserver_arg]
        self.apiserver_argv = argv
        self.spawn("kube-apiserver", argv)
        self.client = Client(self.url, p("ca.crt"), self.admin_token)
        self.wait_apiserver_ready()

    def wait_apiserver_ready(self):
        def ready():
            try:
                status, _ = self.client.request("GET", "/readyz", timeout=5)
                return status == 200
            except OSError:
                return False
        self.wait_for("kube-apiserver /readyz", ready, self.args.timeout)

    def follow_apiserver_switch(self):
        """Takes kube-apiserver down or up as the last SIGUSR1/SIGUSR2 asked."""
        running = [(n, p) for n, p in self.children if n == "kube-apiserver"]
        if not self.want_apiserver_up and running:
            _, proc = running[0]
            self.children = [(n, p) for n, p in self.children if n != "kube-apiserver"]
            # SIGKILL: an outage as a crash makes it, at once. (On SIGTERM kube-apiserver drains
            # its requests first, and with watches open that took the full 15 s here.)
            proc.kill()
            proc.wait()
            log("kube-apiserver is down (SIGUSR1)")
        elif self.want_apiserver_up and not running and self.apiserver_argv is not None:
            self.spawn("kube-apiserver", self.apiserver_argv)
            self.wait_apiserver_ready()
            log("kube-apiserver is up again (SIGUSR2)")

    def wait_for(self, what, predicate, timeout):
        deadline = time.monotonic() + timeout
        while not predicate():
            self.check_children()
            if self.stopping.is_set():
                raise RuntimeError("stopped while waiting for " + what)
            if time.monotonic() > deadline:
                raise RuntimeError("timed out after %ss waiting for %s (logs in %s)"
                                   % (timeout, what, self.logs))
            time.sleep(0.1)

    def must(self, method, path, body=None, ok=(200, 201), also_ok=()):
        status, obj = self.client.request(method, path, body)
        if status not in ok and status not in also_ok:
            raise RuntimeError("%s %s: %s %s" % (method, path, status, obj))
        return status, obj

    # --- contents ---------------------------------------------------------------------------
    def ensure_namespace(self, ns):
        self.must("POST", "/api/v1/namespaces",
                  {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
                  also_ok=(409,))
        # the Namespace admission may not see a just-created namespace at once: retry briefly
        deadline = time.monotonic() + 10
        while True:
            status, obj = self.client.request(
                "POST", "/api/v1/namespaces/%s/serviceaccounts" % ns,
                {"apiVersion": "v1", "kind": "ServiceAccount",
                 "metadata": {"name": "default", "namespace": ns}})
            if status in (200, 201, 409):
                return
            if time.monotonic() > deadline:
                raise RuntimeError("creating %s/default ServiceAccount: %s %s"
                                   % (ns, status, obj))
            time.sleep(0.1)

    def create_crds(self):
        for group, version, kind, plural, singular, short in CRDS:
            crd = {
                "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "metadata": {"name": "%s.%s" % (plural, group)},
                "spec": {
                    "group": group, "scope": "Namespaced",
                    "names": {"kind": kind, "listKind": kind + "List", "plural": plural,
                              "singular": singular, "shortNames": short},
                    "versions": [{
                        "name": version, "served": True, "storage": True,
                        "schema": {"openAPIV3Schema": {
                            "type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                        "subresources": {"status": {}},
                    }],
                },
            }
            self.must("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd,
                      also_ok=(409,))
        for group, version, kind, plural, singular, short in CRDS:
            self.wait_established("%s.%s" % (plural, group))

    def wait_established(self, name):
        """Until the CRD is Established and its resource answers a list."""
        def established():
            status, obj = self.client.request(
                "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + name)
            if status != 200:
                return False
            conditions = (obj.get("status") or {}).get("conditions") or []
            if not any(c.get("type") == "Established" and c.get("status") == "True"
                       for c in conditions):
                return False
            spec = obj["spec"]
            version = next(v["name"] for v in spec["versions"] if v.get("storage"))
            status, _ = self.client.request("GET", "/apis/%s/%s/%s?limit=1" % (
                spec["group"], version, spec["names"]["plural"]))
            return status == 200
        self.wait_for("CRD %s Established" % name, established, 60)

    # --- preload ----------------------------------------------------------------------------
    def discover(self, api_version, cache={}):
        """{kind: (plural, namespaced, has_status)} for one group/version."""
        if api_version not in cache:
            path = "/api/v1" if api_version == "v1" else "/apis/" + api_version
            _, doc = self.must("GET", path)
            kinds, subs = {}, set()
            for r in doc.get("resources", []):
                if "/" in r["name"]:
                    if r["name"].endswith("/status"):
                        subs.add(r["name"].split("/")[0])
                    continue
                kinds.setdefault(r["kind"], (r["name"], r["namespaced"]))
            cache[api_version] = {k: (p, ns, p in subs) for k, (p, ns) in kinds.items()}
        return cache[api_version]

    def preload(self, path):
        """Namespace and CustomResourceDefinition objects first, one by one (CRDs waited for
        until Established); then the namespaces the other objects name, with their default
        ServiceAccount; then the other objects, submitted in file order to 8 threads."""
        with open(path) as f:
            objs = [json.loads(line) for line in f if line.strip()]
        t0 = time.monotonic()
        first = [o for o in objs if o.get("kind") in ("Namespace", "CustomResourceDefinition")]
        rest = [o for o in objs if o.get("kind") not in ("Namespace", "CustomResourceDefinition")]
        for obj in first:
            self.create_object(obj, exists_ok=True)
            if obj["kind"] == "CustomResourceDefinition":
                self.wait_established(obj["metadata"]["name"])
        namespaces = {o["metadata"]["name"] for o in first if o["kind"] == "Namespace"}
        namespaces |= {o.get("metadata", {}).get("namespace") for o in rest} - {None}
        for ns in sorted(namespaces):
            self.ensure_namespace(ns)
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            futures = [pool.submit(self.create_object, o) for o in rest]
            for fut in futures:
                e = fut.exception()
                if e:
                    for f in futures:
                        f.cancel()
                    raise e
        log("preloaded %d objects in %.1fs" % (len(objs), time.monotonic() - t0))

    def create_object(self, obj, exists_ok=False):
        """Creates one object as the admin; then writes its status through the status
        subresource where there is one (a create drops the status there)."""
        kinds = self.discover(obj["apiVersion"])
        if obj["kind"] not in kinds:
            raise RuntimeError("preload: %s %s is not served" % (obj["apiVersion"], obj["kind"]))
        plural, namespaced, has_status = kinds[obj["kind"]]
        base = "/api/v1" if obj["apiVersion"] == "v1" else "/apis/" + obj["apiVersion"]
        meta = obj.get("metadata", {})
        coll = base + ("/namespaces/%s/%s" % (meta.get("namespace", "default"), plural)
                       if namespaced else "/" + plural)
        body = dict(obj)
        body["metadata"] = {k: v for k, v in meta.items()
                            if k not in ("resourceVersion", "uid", "creationTimestamp")}
        status, created = self.client.request("POST", coll, body)
        if status == 409 and exists_ok:
            log("preload: %s %s exists already: kept as it is" % (obj["kind"], meta.get("name")))
            return
        if status not in (200, 201):
            raise RuntimeError("preload: POST %s %s: %s %s" % (coll, meta.get("name"), status,
                                                               created))
        if has_status and obj.get("status"):
            created["status"] = obj["status"]
            url = "%s/%s/status" % (coll, created["metadata"]["name"])
            status, out = self.client.request("PUT", url, created)
            if status != 200:
                raise RuntimeError("preload: PUT %s: %s %s" % (url, status, out))

    # --- main -------------------------------------------------------------------------------
    def run(self):
        t0 = time.monotonic()
        for d in (self.dir, self.logs):
            os.makedirs(d, exist_ok=True)
        self.admin_token = self.args.admin_token or secrets.token_hex(16)
        self.token = self.args.token or secrets.token_hex(16)
        make_pki(self.pki)
        self.start_etcd()
        t_etcd = time.monotonic()
        self.start_apiserver()
        t_api = time.monotonic()
        for ns in DEFAULT_NAMESPACES + [n for n in self.args.namespace
                                        if n not in DEFAULT_NAMESPACES]:
            self.ensure_namespace(ns)
        self.create_crds()
        if self.args.preload:
            self.preload(self.args.preload)
        ca = os.path.join(self.pki, "ca.crt")
        kc_admin = os.path.join(self.pki, "kubeconfig.yaml")
        kc_token = os.path.join(self.pki, "kubeconfig-token.yaml")
        kc_cert = os.path.join(self.pki, "kubeconfig-cert.yaml")
        dump(kc_admin, token_kubeconfig(self.url, ca, "admin", self.admin_token))
        dump(kc_token, token_kubeconfig(self.url, ca, "test-user", self.token))
        dump(kc_cert, cert_kubeconfig(self.url, self.pki))
        seconds = round(time.monotonic() - t0, 2)
        info = {"url": self.url, "ca": ca, "kubeconfig": kc_admin, "kubeconfig_token": kc_token,
                "kubeconfig_cert": kc_cert, "admin_token": self.admin_token,
                "token": self.token, "etcd_url": self.etcd_url, "pid": os.getpid(),
                "dir": self.dir, "seconds": seconds}
        dump(self.args.ready_file, json.dumps(info, indent=1) + "\n")
        log("ready in %.1fs (etcd %.1fs, kube-apiserver %.1fs, namespaces/CRDs/preload %.1fs): %s"
            % (seconds, t_etcd - t0, t_api - t_etcd, time.monotonic() - t_api, self.url))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", required=True, help="pki/, etcd/ and logs/ go here")
    ap.add_argument("--ready-file", required=True)
    ap.add_argument("--bin", default=DEFAULT_BIN,
                    help="directory of kube-apiserver and etcd (env KUBE_REAL_BIN)")
    ap.add_argument("--etcd-compaction-interval", default="5m",
                    help="kube-apiserver's compaction interval (Go duration; 0 disables)")
    ap.add_argument("--namespace", action="append", default=[],
                    help="another namespace to create with its default ServiceAccount")
    ap.add_argument("--preload", help="JSON lines of objects to create once ready")
    ap.add_argument("--token", help="test-user's bearer token (default: random)")
    ap.add_argument("--admin-token", help="admin's bearer token (default: random)")
    ap.add_argument("--timeout", type=float, default=120, help="seconds to wait for each child")
    ap.add_argument("--etcd-fsync", action="store_true",
                    help="let etcd fsync (default: --unsafe-no-fsync, a throw-away store)")
    ap.add_argument("--apiserver-arg", action="append", default=[],
                    help="one more kube-apiserver flag (--apiserver-arg=--v=4)")
    ap.add_argument("-v", type=int, default=1, help="kube-apiserver log level")
    args = ap.parse_args()

    launcher = Launcher(args)
    parent = os.getppid()

    def on_signal(signum, frame):
        launcher.stopping.set()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    def on_switch(signum, frame):
        launcher.want_apiserver_up = signum == signal.SIGUSR2
    signal.signal(signal.SIGUSR1, on_switch)
    signal.signal(signal.SIGUSR2, on_switch)

    def watch_parent():
        while not launcher.stopping.is_set():
            if os.getppid() != parent:
                log("parent %d is gone: stopping" % parent)
                launcher.stopping.set()
                os.kill(os.getpid(), signal.SIGTERM)  # wakes the main thread
                return
            time.sleep(0.5)
    threading.Thread(target=watch_parent, daemon=True).start()

    code = 0
    try:
        launcher.run()
        while not launcher.stopping.is_set():
            launcher.follow_apiserver_switch()
            launcher.check_children()
            launcher.stopping.wait(0.2)
    except Exception as e:  # noqa: BLE001 - report any failure and stop the children
        if not launcher.stopping.is_set():
            log("error: %s\n%s" % (e, traceback.format_exc()))
            code = 1
    finally:
        launcher.stop()
    return code


if __name__ == "__main__":
    sys.exit(main())
