#!/usr/bin/python3
"""Smoke test of the real API server that launch.py starts (kube-apiserver + etcd built by
build.sh): ConfigMap, PodGroup and Pod create/list in `default`, a watch from a
resourceVersion that sees an update, a 404 and a 409. Skipped when the binaries are missing."""

import json
import os
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import real_server  # noqa: E402

MISSING = real_server.missing_binaries()


@unittest.skipIf(MISSING, "real Kubernetes binaries missing (%s): build them with "
                 "`bash tests/kube-real/build.sh` or set KUBE_REAL_BIN" % ", ".join(MISSING))
class RealServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = real_server.RealServer()
        print("\nreal server ready in %.1fs (launch.py: %ss) at %s"
              % (cls.server.start_seconds, cls.server.info["seconds"], cls.server.url),
              file=sys.stderr)

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def api(self, *args, **kwargs):
        return self.server.api(*args, **kwargs)

    def test_version(self):
        status, v = self.api("GET", "/version")
        self.assertEqual(status, 200, v)
        self.assertEqual((v["major"], v["minor"], v["gitVersion"]), ("1", "36", "v1.36.3"))

    def test_configmap_podgroup_pod(self):
        status, cm = self.api("POST", "/api/v1/namespaces/default/configmaps", {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "smoke-cm", "labels": {"app": "smoke"}},
            "data": {"k": "v"}})
        self.assertEqual(status, 201, cm)
        self.assertTrue(cm["metadata"]["uid"])

        status, pg = self.api("POST", "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/"
                              "podgroups", {
                                  "apiVersion": "scheduling.volcano.sh/v1beta1",
                                  "kind": "PodGroup", "metadata": {"name": "smoke-pg"},
                                  "spec": {"minMember": 2}, "status": {"phase": "Running"}})
        self.assertEqual(status, 201, pg)
        self.assertNotIn("status", pg)  # the status subresource: a create drops the status
        pg["status"] = {"phase": "Running"}
        status, pg = self.api("PUT", "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/"
                              "podgroups/smoke-pg/status", pg)
        self.assertEqual(status, 200, pg)
        self.assertEqual(pg["status"], {"phase": "Running"})

        status, pod = self.api("POST", "/api/v1/namespaces/default/pods", {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "smoke-pod", "labels": {"app": "smoke"}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}],
                     "nodeName": "node-1"}})
        self.assertEqual(status, 201, pod)
        self.assertEqual(pod["spec"]["serviceAccountName"], "default")

        status, lst = self.api("GET", "/api/v1/namespaces/default/configmaps?labelSelector="
                               "app%3Dsmoke")
        self.assertEqual(status, 200, lst)
        self.assertEqual([i["metadata"]["name"] for i in lst["items"]], ["smoke-cm"])
        status, lst = self.api("GET", "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/"
                               "podgroups")
        self.assertEqual(status, 200, lst)
        self.assertEqual([i["metadata"]["name"] for i in lst["items"]], ["smoke-pg"])
        status, lst = self.api("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-1")
        self.assertEqual(status, 200, lst)
        self.assertEqual([i["metadata"]["name"] for i in lst["items"]], ["smoke-pod"])

    def test_watch_sees_update(self):
        status, cm = self.api("POST", "/api/v1/namespaces/default/configmaps", {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "watched"},
            "data": {"n": "0"}})
        self.assertEqual(status, 201, cm)
        rv = cm["metadata"]["resourceVersion"]
        resp = self.server.open_watch("/api/v1/namespaces/default/configmaps?watch=1&"
                                      "resourceVersion=%s&timeoutSeconds=20" % rv)
        events = []

        def read():
            for line in resp:
                ev = json.loads(line)
                events.append(ev)
                if ev["type"] == "MODIFIED" and ev["object"]["metadata"]["name"] == "watched":
                    return
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        time.sleep(0.2)
        cm["data"]["n"] = "1"
        status, cm2 = self.api("PUT", "/api/v1/namespaces/default/configmaps/watched", cm)
        self.assertEqual(status, 200, cm2)
        reader.join(15)
        resp.close()
        self.assertTrue(events, "no watch event")
        ev = events[-1]
        self.assertEqual(ev["type"], "MODIFIED", events)
        self.assertEqual(ev["object"]["data"], {"n": "1"})
        self.assertEqual(ev["object"]["metadata"]["resourceVersion"],
                         cm2["metadata"]["resourceVersion"])

    def test_not_found_and_conflict(self):
        status, st = self.api("GET", "/api/v1/namespaces/default/configmaps/no-such")
        self.assertEqual(status, 404, st)
        self.assertEqual((st["kind"], st["reason"]), ("Status", "NotFound"))

        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "conflicted"},
                "data": {"a": "1"}}
        status, cm = self.api("POST", "/api/v1/namespaces/default/configmaps", body)
        self.assertEqual(status, 201, cm)
        status, st = self.api("POST", "/api/v1/namespaces/default/configmaps", body)
        self.assertEqual((status, st["reason"]), (409, "AlreadyExists"), st)

        stale = json.loads(json.dumps(cm))
        cm["data"]["a"] = "2"
        status, cm2 = self.api("PUT", "/api/v1/namespaces/default/configmaps/conflicted", cm)
        self.assertEqual(status, 200, cm2)
        stale["data"]["a"] = "3"
        status, st = self.api("PUT", "/api/v1/namespaces/default/configmaps/conflicted", stale)
        self.assertEqual((status, st["reason"]), (409, "Conflict"), st)

    def test_admin_token_and_kubeconfig(self):
        status, ns = self.api("GET", "/api/v1/namespaces/mindx-dl/serviceaccounts/default",
                              token=self.server.admin_token)
        self.assertEqual(status, 200, ns)
        status, st = self.api("GET", "/api/v1/namespaces", token="wrong")
        self.assertEqual(status, 401, st)
        with open(self.server.kubeconfig_token) as f:
            text = f.read()
        self.assertIn("token: " + self.server.token, text)
        self.assertIn("server: " + self.server.url, text)


if __name__ == "__main__":
    unittest.main()
