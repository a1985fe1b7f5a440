"""The recovery protocol end to end from Python (recovery-protocol.md §2.3, §4.4, §5, §15): a
real clusterd on the `dir` store, the job's objects written as files, and the TaskD-like client
of taskd_client.py (stubs generated from our .proto files with Debian's protoc and
grpc_python_plugin; keepalive 3 s, HealthCheck every second, reconnect with back-off, no
de-duplication, like the Python toolkit) answering signals with ScriptedAgent.

Tests are skipped while the Recover service answers UNIMPLEMENTED (server side not wired)."""
import hashlib
import json
import os
import signal
import subprocess
import tempfile
import time
import unittest
import urllib.request

import grpc

import clusterd_harness  # noqa: F401  (puts the generated stubs on sys.path)
import job_objects
import recover_pb2
import recover_pb2_grpc
from job_objects import device_info_config_map, node_object
from taskd_client import ScriptedAgent, TaskdClient, fault

JOB = "7c1f0d3a-6b0e-4a53-9d8f-2a1c0e5b7f11"
NS = "default"
POD_GROUP = "pt-2x8-pg"
RESET_CONFIG = "reset-config-pt-2x8"
STEP = 40.0  # the 10 s force-release pause before globalFault, with margin


def pod_object(rank):
    name = "pt-2x8-master-0" if rank == 0 else "pt-2x8-worker-0"
    uid = "5b0f2c1e-0000-4000-8000-000000000001" if rank == 0 else \
        "9c2e7d4f-0000-4000-8000-000000000002"
    node = "node-a" if rank == 0 else "node-b"
    host_ip = "192.168.0.11" if rank == 0 else "192.168.0.12"
    prefix = "10.1.0." if rank == 0 else "10.1.1."
    return job_objects.pod_object(NS, "pt-2x8", JOB, name, uid, rank, node, host_ip, prefix,
                                  POD_GROUP, master_addr="192.168.0.11")


def pod_group_object(strategies):
    return job_objects.pod_group_object(NS, POD_GROUP, "pt-2x8", JOB, strategies, pods=2)


class RecoveryE2e(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="clusterd-py-recovery-")
        self.state = os.path.join(self.dir.name, "state")
        os.makedirs(self.state)
        self.proc = None
        self.starts = 0
        self.client = None

    def tearDown(self):
        if self.client is not None:
            self.client.stop()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        result = getattr(self._outcome, "result", None)
        failed = result is not None and any(
            t is self for t, _ in list(result.errors) + list(result.failures))
        if failed:
            for i in range(1, self.starts + 1):
                with open(self.log_path(i)) as f:
                    print("---- clusterd log #%d ----\n%s" % (i, f.read()))
        self.dir.cleanup()

    def log_path(self, n):
        return os.path.join(self.dir.name, "clusterd-%d.log" % n)

    # --- clusterd -----------------------------------------------------------------------------
    def start_clusterd(self, grpc_listen="127.0.0.1:0"):
        info = os.path.join(self.dir.name, "listen.json")
        if os.path.exists(info):
            os.remove(info)
        self.starts += 1
        log = open(self.log_path(self.starts), "w")
        self.proc = subprocess.Popen(
            [os.environ["CLUSTERD_BIN"], "--store", "dir:" + self.state,
             "--grpc-listen", grpc_listen, "--http-listen", "127.0.0.1:0",
             "--listen-info-file", info, "--http-store-mirror"],
            stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + 20
        while not os.path.exists(info):
            self.assertIsNone(self.proc.poll(), "clusterd exited during start-up")
            self.assertLess(time.monotonic(), deadline, "clusterd did not start")
            time.sleep(0.02)
        with open(info) as f:
            addrs = json.load(f)
        self.grpc_address = addrs["grpc"]
        self.http_address = addrs["http"]

    def kill_and_restart(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)
        self.start_clusterd(self.grpc_address)

    def write(self, resource, obj):
        job_objects.write_object(self.state, resource, obj)

    def write_job(self, strategies):
        self.write("nodes", node_object("node-a", "192.168.0.11", "2102313LNR10P5100001"))
        self.write("nodes", node_object("node-b", "192.168.0.12", "2102313LNR10P5100002"))
        for node in ("node-a", "node-b"):
            self.write("configmaps", device_info_config_map(node))
        self.write("podgroups", pod_group_object(strategies))
        for rank in (0, 1):
            self.write("pods", pod_object(rank))
        self.write("configmaps", job_objects.reset_config_map(NS, RESET_CONFIG))

    def recover_service_ready(self):
        channel = grpc.insecure_channel(self.grpc_address)
        try:
            recover_pb2_grpc.RecoverStub(channel).Init(
                recover_pb2.ClientInfo(jobId="probe-job", role="master agent"), timeout=5)
        except grpc.RpcError as err:
            if err.code() == grpc.StatusCode.UNIMPLEMENTED:
                return False
        finally:
            channel.close()
        return True

    def begin(self, strategies, **behaviour):
        self.write_job(strategies)
        self.start_clusterd()
        if not self.recover_service_ready():
            self.skipTest("the Recover service answers UNIMPLEMENTED: its server side "
                          "(src/server/recover_service.cc, recovery_bridge) is not wired yet")
        self.agent = ScriptedAgent(JOB, **behaviour)
        self.client = TaskdClient(self.grpc_address, JOB, self.agent)
        self.client.start()
        self.assertTrue(self.client.wait_until(lambda: self.client.subscribed, 20),
                        "client never subscribed: %s" % dict(self.client.stats))

    # --- observations -------------------------------------------------------------------------
    def get(self, path):
        try:
            with urllib.request.urlopen("http://%s%s" % (self.http_address, path), timeout=5) as r:
                return json.load(r)
        except Exception:  # noqa: BLE001 - absent or not yet readable
            return None

    def annotation(self, key):
        pg = self.get("/api/v1/namespaces/%s/podgroups/%s" % (NS, POD_GROUP))
        return (pg or {}).get("metadata", {}).get("annotations", {}).get(key, "")

    def reset_json(self):
        cm = self.get("/api/v1/namespaces/%s/configmaps/%s" % (NS, RESET_CONFIG))
        text = cm["data"]["reset.json"]
        self.assertEqual(cm["data"]["checkCode"], hashlib.sha256(text.encode()).hexdigest())
        return json.loads(text)

    def record_state(self):
        cm = self.get("/api/v1/namespaces/%s/configmaps/clusterd-recovery-%s" % (NS, JOB))
        if not cm:
            return ""
        return json.loads(cm["data"]["record.json"]).get("state", "")

    def eventually(self, pred, timeout=STEP):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if pred():
                return True
            time.sleep(0.1)
        return pred()

    def next_signal(self, pred, timeout=STEP):
        """The first handled signal after the last one returned that satisfies `pred`."""
        start = getattr(self, "_seen", 0)
        found = []

        def ready():
            for i in range(start, len(self.agent.signals)):
                if pred(self.agent.signals[i]):
                    found.append(i)
                    return True
            return False
        if not self.client.wait_until(ready, timeout):
            return None
        self._seen = found[0] + 1
        return self.agent.signals[found[0]]

    def report_fault(self, *ranks):
        status = self.client.report_process_fault([fault(r, t) for r, t in ranks])
        self.assertEqual((status.code, status.info), (0, "receive ReportProcessFault"))

    # --- tests --------------------------------------------------------------------------------
    def test_process_level_rescheduling_as_in_section_15(self):
        self.begin("retry,recover,dump")
        self.report_fault((10, 1))
        stop = self.next_signal(lambda s: s.signalType == "stopTrain")
        self.assertIsNotNone(stop, "no stopTrain")
        self.assertEqual(list(stop.actions), ["stop_train"])
        self.assertEqual({(f.rankId, f.faultType) for f in stop.faultRanks}, {("10", "1")})
        self.assertTrue(self.reset_json()["FaultFlushing"])
        glob = self.next_signal(lambda s: s.signalType == "globalFault")
        self.assertIsNotNone(glob, "no globalFault")
        self.assertEqual(glob.uuid, stop.uuid)
        self.assertEqual(list(glob.actions), ["on_global_rank", "fault_nodes_exit"])
        self.assertEqual({(f.rankId, f.faultType) for f in glob.faultRanks},
                         {(str(r), "1") for r in range(8, 16)})
        self.assertEqual(list(glob.nodeRankIds), ["1"])
        self.assertEqual(sorted(e["RankId"] for e in self.reset_json()["RankList"]),
                         list(range(8, 16)))
        decided = self.next_signal(lambda s: s.signalType == "changeStrategy")
        self.assertIsNotNone(decided)
        self.assertEqual((decided.uuid, decided.changeStrategy, decided.extraParams),
                         (stop.uuid, "recover", ""))
        self.assertTrue(self.client.wait_until(lambda: self.client.stats["stream_ends_ok"] >= 1,
                                               STEP))
        self.assertTrue(self.eventually(
            lambda: self.annotation("ProcessRecoverStatus") == "recover-success"))
        self.assertIn(("ReportStopComplete{code=0}", 0), self.agent.replies)
        self.assertTrue(self.eventually(
            lambda: ("ReportRecoverStatus{code=0, strategy=recover}", 0) in self.agent.replies))
        self.assertEqual(self.agent.phase, "training")
        self.assertEqual(self.agent.resumed, 1)
        # The client reconnects after the reset (Init, Register, Subscribe again).
        self.assertTrue(self.client.wait_until(lambda: self.client.stats["subscribes"] >= 2, 20))
        self.assertGreater(self.client.stats["health_ok"], 0)

    def test_retry_after_a_uce_reported_by_the_client(self):
        self.begin("retry,recover,dump")
        self.report_fault((3, 0))
        stop = self.next_signal(lambda s: s.signalType == "stopTrain")
        self.assertIsNotNone(stop, "no stopTrain: the retry report must come back from the "
                                   "fault centre as a doStepRetry fault (§8.3)")
        self.assertEqual({(f.rankId, f.faultType) for f in stop.faultRanks}, {("3", "0")})
        glob = self.next_signal(lambda s: s.signalType == "globalFault")
        self.assertIsNotNone(glob)
        self.assertEqual(list(glob.actions), ["on_global_rank"])
        retry = self.next_signal(lambda s: s.signalType == "changeStrategy")
        self.assertIsNotNone(retry)
        self.assertEqual((retry.changeStrategy, list(retry.nodeRankIds)), ("retry", ["0"]))
        self.assertTrue(self.eventually(
            lambda: self.annotation("ProcessRecoverStatus") == "retry-success"))
        self.assertEqual(self.agent.strategies_run, ["retry"])

    def test_recover_in_place(self):
        self.begin("recover-in-place,recover")
        self.report_fault((10, 1))
        decided = self.next_signal(lambda s: s.signalType == "changeStrategy")
        self.assertIsNotNone(decided)
        self.assertEqual((decided.changeStrategy, decided.extraParams),
                         ("recover", "recover-in-place"))
        self.assertEqual(list(decided.actions), ["change_strategy", "fault_nodes_restart"])
        self.assertEqual(list(decided.nodeRankIds), ["1"])
        self.assertTrue(self.eventually(
            lambda: self.annotation("ProcessRecoverStatus") == "recover-success"))

    def test_exit_when_the_job_supports_nothing_else(self):
        self.begin("retry", supported=["exit"])
        self.report_fault((10, 1))
        decided = self.next_signal(lambda s: s.signalType == "changeStrategy")
        self.assertIsNotNone(decided)
        self.assertEqual((decided.changeStrategy, decided.extraParams), ("exit", ""))
        self.assertEqual(list(decided.nodeRankIds), ["1"])
        self.assertEqual(self.agent.phase, "exiting")
        # ListenSchedule (20 s, the job runs), then restartAllProcess: RetryTime + 1.
        self.assertTrue(self.eventually(lambda: self.reset_json()["RetryTime"] == 1, 45))

    def test_failed_recover_falls_back_to_dump_then_exit(self):
        self.begin("recover,dump", status_codes={"recover": [1]})
        self.report_fault((10, 1))
        recover = self.next_signal(lambda s: s.changeStrategy == "recover")
        self.assertIsNotNone(recover)
        dump = self.next_signal(lambda s: s.changeStrategy == "dump")
        self.assertIsNotNone(dump, "no fallback to dump")
        self.assertEqual(dump.uuid, recover.uuid)
        exit_ = self.next_signal(lambda s: s.changeStrategy == "exit")
        self.assertIsNotNone(exit_, "no clean-up exit")
        self.assertEqual(exit_.extraParams, "dump_exit")
        self.assertTrue(self.eventually(
            lambda: self.annotation("ProcessRecoverStatus") == "dump-success"))
        self.assertEqual(self.agent.strategies_run, ["recover", "dump", "exit"])

    def test_dump_on_fault_then_clean_up_exit(self):
        self.begin("dump")
        self.report_fault((10, 1))
        dump = self.next_signal(lambda s: s.signalType == "saveAndExit")
        self.assertIsNotNone(dump, "no saveAndExit")
        self.assertEqual(list(dump.actions), ["save_and_exit"])
        self.assertEqual(list(dump.nodeRankIds), ["1"])
        exit_ = self.next_signal(lambda s: s.signalType == "changeStrategy")
        self.assertIsNotNone(exit_, "no clean-up exit")
        self.assertEqual((exit_.changeStrategy, exit_.extraParams), ("exit", "dump_exit"))
        self.assertTrue(self.eventually(
            lambda: self.annotation("ProcessRecoverStatus") == "dump-success"))

    def test_process_not_ready_kills_the_job(self):
        self.begin("recover", stop_complete_code=404)
        self.report_fault((10, 1))
        self.assertIsNotNone(self.next_signal(lambda s: s.signalType == "stopTrain"))
        kill = self.next_signal(lambda s: s.signalType == "killMaster")
        self.assertIsNotNone(kill, "no killMaster")
        self.assertTrue(self.client.wait_until(lambda: self.client.stats["stream_ends"] >= 1,
                                               STEP))
        self.assertEqual(self.agent.kills, 1)

    def test_sigkill_mid_cycle_resumes_and_asks_for_the_lost_report(self):
        # The toolkit's ReportStopComplete went nowhere (here: it never sent one before the
        # kill; beside a real peer: it went to the dying process, which the toolkit does not
        # repeat). The restarted clusterd continues the cycle and asks for the report once
        # more, with the same uuid; nothing else would ask before the 15-minute wait.
        self.begin("retry,recover,dump", never_answer={"stopTrain"})
        self.report_fault((10, 1))
        stop = self.next_signal(lambda s: s.signalType == "stopTrain")
        self.assertIsNotNone(stop)
        self.assertTrue(self.eventually(
            lambda: self.record_state() == "WaitReportStopCompleteState"), self.record_state())
        self.kill_and_restart()
        self.agent.never_answer = set()
        self.assertTrue(self.client.wait_until(lambda: self.client.stats["subscribes"] >= 2, 30),
                        dict(self.client.stats))
        again = self.next_signal(lambda s: s.signalType == "stopTrain")
        self.assertIsNotNone(again, "the restored wait did not ask for its report")
        self.assertEqual(again.uuid, stop.uuid)
        self.assertEqual(list(again.faultRanks), list(stop.faultRanks))
        glob = self.next_signal(lambda s: s.signalType == "globalFault")
        self.assertIsNotNone(glob, "the cycle did not resume")
        self.assertEqual(glob.uuid, stop.uuid)
        self.assertTrue(self.eventually(
            lambda: self.annotation("ProcessRecoverStatus") == "recover-success"))
        # Only the stop was asked twice; every other signal of the cycle came once.
        kinds = [s.signalType for s in self.agent.signals]
        self.assertEqual(kinds.count("stopTrain"), 2, kinds)
        self.assertEqual(kinds.count("globalFault"), 1, kinds)
        self.assertEqual(kinds.count("changeStrategy"), 1, kinds)

if __name__ == "__main__":
    unittest.main()
