"""Keepalive compatibility (recovery-protocol.md §1.3): the real Python client pings every 3 s,
with or without calls in flight. A gRPC-core server with default settings answers such pings
with GOAWAY ENHANCE_YOUR_CALM "too_many_pings". Channels are held idle for 16 s each:
- configured exactly like the real client (max-pings-without-data 1);
- a stricter one that pings every 3 s with no limit at all (max-pings-without-data 0), which a
  misconfigured server does send away within ~10 s.
Neither may see its connection change state."""
import os
import time
import unittest

import grpc

import clusterd_harness
import recover_pb2
import recover_pb2_grpc

HOLD_SECONDS = float(os.environ.get("KEEPALIVE_HOLD_SECONDS", "16"))

REAL_CLIENT = [
    ("grpc.keepalive_time_ms", 3000),
    ("grpc.keepalive_timeout_ms", 1000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 1),
]
UNLIMITED_PINGS = REAL_CLIENT[:3] + [("grpc.http2.max_pings_without_data", 0)]


class Keepalive(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = clusterd_harness.Clusterd()

    @classmethod
    def tearDownClass(cls):
        code = cls.server.stop()
        if code != 0:
            raise AssertionError("clusterd exited with %d" % code)
        if "too_many_pings" in cls.server.log_text:
            raise AssertionError("server log mentions too_many_pings")

    def hold_idle(self, options):
        channel = grpc.insecure_channel(self.server.grpc_address, options=options)
        states = []
        channel.subscribe(states.append, try_to_connect=True)
        grpc.channel_ready_future(channel).result(timeout=10)
        stub = recover_pb2_grpc.RecoverStub(channel)
        self.assertEqual(stub.HealthCheck(recover_pb2.ClientInfo(jobId="k"), timeout=5).code, 0)
        ready_at = len(states)
        time.sleep(HOLD_SECONDS)  # idle on purpose: only keepalive pings cross the wire
        self.assertEqual(states[ready_at:], [], "connection changed state while idle")
        self.assertEqual(stub.HealthCheck(recover_pb2.ClientInfo(jobId="k"), timeout=5).code, 0)
        self.assertEqual(states[ready_at:], [], "reconnected: the server had closed the connection")
        channel.close()

    def test_a_channel_configured_like_the_real_client_is_not_sent_away(self):
        self.hold_idle(REAL_CLIENT)

    def test_a_client_pinging_every_3s_without_limit_is_not_sent_away(self):
        self.hold_idle(UNLIMITED_PINGS)


if __name__ == "__main__":
    unittest.main()
