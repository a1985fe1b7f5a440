"""Starts a real kube-apiserver + etcd (launch.py) for a Python test, with the attributes tests
use on tests/fixtures/fixture_process.py's FixtureProcess where they make sense: url, ca,
kubeconfig_token, token, user, api(), close(), and with `audit=True` audit(): the server's own
audit log (level Metadata) in the fixture's entry format. There is no control port: a real
server has no fault injection."""

import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCH = os.path.join(HERE, "launch.py")
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
import fixture_process  # noqa: E402  (the request helper the fixture's tests use)
AUDIT_POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
"""


def bin_dir():
    """Where kube-apiserver and etcd are: $KUBE_REAL_BIN, else tests/kube-real/bin."""
    return os.environ.get("KUBE_REAL_BIN") or os.path.join(HERE, "bin")


def missing_binaries():
    """The binaries that are not there (empty when a RealServer can start)."""
    return [os.path.join(bin_dir(), b) for b in ("kube-apiserver", "etcd")
            if not os.access(os.path.join(bin_dir(), b), os.X_OK)]


class RealServer:
    """One real API server on 127.0.0.1 (free ports) with a fresh CA, etcd and tokens in a
    temporary directory. `token` authenticates as "test-user", `admin_token` as "admin" (both
    in system:masters). Namespaces default, kube-system, mindx-dl, cluster-system (and
    `namespaces`) exist with their default ServiceAccount; the Volcano and AscendJob CRDs are
    Established."""

    def __init__(self, namespaces=(), compaction_interval="5m", preload=None, extra_args=(),
                 timeout=180, audit=False):
        self.dir = tempfile.mkdtemp(prefix="kube-real-")
        self.audit_path = None
        if audit:
            policy = os.path.join(self.dir, "audit-policy.yaml")
            with open(policy, "w") as f:
                f.write(AUDIT_POLICY)
            self.audit_path = os.path.join(self.dir, "audit.log")
            extra_args = list(extra_args) + [
                "--apiserver-arg=--audit-policy-file=" + policy,
                "--apiserver-arg=--audit-log-path=" + self.audit_path,
                "--apiserver-arg=--audit-log-mode=blocking"]
        self.user = "test-user"
        ready = os.path.join(self.dir, "ready.json")
        self.log_path = os.path.join(self.dir, "launch.log")
        self.log = open(self.log_path, "w")
        argv = ["/usr/bin/python3", LAUNCH, "--dir", self.dir, "--ready-file", ready,
                "--bin", bin_dir(), "--etcd-compaction-interval", compaction_interval]
        for ns in namespaces:
            argv += ["--namespace", ns]
        if preload:
            argv += ["--preload", preload]
        self.proc = subprocess.Popen(argv + list(extra_args), stdout=self.log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        t0 = time.monotonic()
        while not os.path.exists(ready):
            if self.proc.poll() is not None or time.monotonic() - t0 > timeout:
                text = self.logs()
                self.close()
                raise RuntimeError("kube-apiserver did not start; launch.py log:\n" + text)
            time.sleep(0.05)
        self.start_seconds = time.monotonic() - t0
        with open(ready) as f:
            info = json.load(f)
        self.info = info
        self.url = info["url"]
        self.ca = info["ca"]
        self.kubeconfig = info["kubeconfig"]
        self.kubeconfig_token = info["kubeconfig_token"]
        self.kubeconfig_cert = info["kubeconfig_cert"]
        self.token = info["token"]
        self.admin_token = info["admin_token"]
        self.etcd_url = info["etcd_url"]
        self._ssl = None

    def logs(self):
        """launch.py's output and the tail of the children's logs, for a failure message."""
        out = []
        for path in (self.log_path, os.path.join(self.dir, "logs", "kube-apiserver.log"),
                     os.path.join(self.dir, "logs", "etcd.log")):
            try:
                with open(path, errors="replace") as f:
                    out.append("== %s\n%s" % (os.path.basename(path), f.read()[-6000:]))
            except OSError:
                pass
        return "\n".join(out)

    def api(self, method, path, body=None, content_type="application/json", token=None,
            timeout=10):
        """One request as test-user (or with `token`; the test CA); returns (HTTP status,
        decoded JSON body)."""
        if self._ssl is None:
            self._ssl = ssl.create_default_context(cafile=self.ca)
        return fixture_process.api_request(self.url, self._ssl, token or self.token, method,
                                           path, body, content_type, timeout)

    def set_down(self, down, timeout=60):
        """Takes kube-apiserver down (its port refuses connections, the open ones end) or brings
        it up again on the same port, etcd and every object kept; returns once it is so."""
        os.kill(self.proc.pid, signal.SIGUSR1 if down else signal.SIGUSR2)
        deadline = time.monotonic() + timeout
        while True:
            up = self.readyz() == 200
            if up != down:
                return
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("kube-apiserver did not go %s:\n%s"
                                   % ("down" if down else "up", self.logs()))
            time.sleep(0.1)

    def apply_service_account(self, docs, name):
        """Creates the ServiceAccount, ClusterRole and ClusterRoleBinding called `name` among
        `docs` (a rendered overlay: [(source, object)]) through the API as the admin, as
        `kubectl apply` would (the server validates them); returns a TokenRequest token of the
        ServiceAccount (one hour), so that the real RBAC authorizer decides its calls."""
        paths = {"ServiceAccount": "/api/v1/namespaces/%s/serviceaccounts",
                 "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
                 "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"}
        account = None
        for kind, path in paths.items():
            for _, obj in docs:
                if obj.get("kind") != kind or obj["metadata"]["name"] != name:
                    continue
                if kind == "ServiceAccount":
                    account = obj
                    path = path % obj["metadata"]["namespace"]
                code, answer = self.api("POST", path, obj, token=self.admin_token)
                if code not in (200, 201, 409):
                    raise RuntimeError("%s %s: %d %s" % (kind, path, code, answer))
        if account is None:
            raise RuntimeError("no ServiceAccount %s among the documents" % name)
        code, answer = self.api(
            "POST", "/api/v1/namespaces/%s/serviceaccounts/%s/token"
            % (account["metadata"]["namespace"], name),
            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
             "spec": {"expirationSeconds": 3600}}, token=self.admin_token)
        if code not in (200, 201):
            raise RuntimeError("TokenRequest for %s: %d %s" % (name, code, answer))
        return answer["status"]["token"]

    def write_kubeconfig(self, path, token):
        """A kubeconfig like kubeconfig_token's (the server, its CA inline) with `token`."""
        with open(self.kubeconfig_token) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text.replace(self.token, token))
        return path

    def etcd(self, method, body):
        """One request to etcd's JSON gateway (POST /v3/<method>); its decoded answer."""
        req = urllib.request.Request(self.etcd_url + "/v3/" + method,
                                     data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read())

    def compact(self):
        """Compacts etcd's history up to its current revision, physically (what
        --etcd-compaction-interval does on its schedule): no resourceVersion before it can be
        read or watched from etcd any more. Returns that revision."""
        revision = int(self.etcd("maintenance/status", {})["header"]["revision"])
        self.etcd("kv/compaction", {"revision": str(revision), "physical": True})
        return revision

    def readyz(self):
        """kube-apiserver's /readyz status code, None when it does not answer."""
        if self._ssl is None:
            self._ssl = ssl.create_default_context(cafile=self.ca)
        req = urllib.request.Request(self.url + "/readyz",
                                     headers={"Authorization": "Bearer " + self.token})
        try:
            with urllib.request.urlopen(req, context=self._ssl, timeout=2) as resp:
                return resp.status
        except urllib.error.HTTPError as e:
            return e.code
        except OSError:
            return None

    def fault(self, action, value=True, **unused):
        """The fixture's fault control, where a real server can do it: "down" only."""
        if action != "down":
            raise NotImplementedError("a real kube-apiserver cannot be made to " + action)
        self.set_down(bool(value))

    def audit(self):
        """The requests the server has answered, as the fixture's /_fixture/audit lists them:
        [{user, verb, apiGroup, resource, subresource, namespace, name, labelSelector,
        fieldSelector, code}] (a watch once its stream started). Needs audit=True."""
        entries = []
        if self.audit_path is None or not os.path.exists(self.audit_path):
            return entries
        with open(self.audit_path) as f:
            for line in f:
                try:
                    e = json.loads(line)
                except ValueError:
                    continue  # a line being written
                watch_started = e.get("verb") == "watch" and e.get("stage") == "ResponseStarted"
                if e.get("stage") != "ResponseComplete" and not watch_started:
                    continue
                ref = e.get("objectRef") or {}
                query = urllib.parse.parse_qs(urllib.parse.urlsplit(e.get("requestURI", "")).query)
                entries.append({
                    "user": e.get("user", {}).get("username", ""), "verb": e.get("verb", ""),
                    "apiGroup": ref.get("apiGroup", ""), "resource": ref.get("resource", ""),
                    "subresource": ref.get("subresource", ""),
                    "namespace": ref.get("namespace"), "name": ref.get("name"),
                    "labelSelector": query.get("labelSelector", [None])[0],
                    "fieldSelector": query.get("fieldSelector", [None])[0],
                    "code": e.get("responseStatus", {}).get("code", 0)})
        return entries

    def open_watch(self, path, token=None, timeout=30):
        """Starts a watch (path with ?watch=1...); returns the response to read lines from."""
        if self._ssl is None:
            self._ssl = ssl.create_default_context(cafile=self.ca)
        req = urllib.request.Request(
            self.url + path, headers={"Authorization": "Bearer " + (token or self.token),
                                      "Accept": "application/json"})
        return urllib.request.urlopen(req, context=self._ssl, timeout=timeout)

    def close(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


if __name__ == "__main__":
    sys.exit("a helper module; run test_real_server.py")
