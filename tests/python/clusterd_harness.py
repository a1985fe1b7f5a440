"""Starts a real clusterd on loopback (port 0) for the Python wire tests.

Environment (set by CTest): CLUSTERD_BIN, the clusterd binary; PROTO_PY_DIR, the Python stubs
generated from proto/*.proto with Debian's protoc and grpc_python_plugin; GOLDEN_DIR.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.environ["PROTO_PY_DIR"])


class Clusterd:
    def __init__(self, store="memory", extra_args=(), grpc_listen="127.0.0.1:0"):
        self.dir = tempfile.TemporaryDirectory(prefix="clusterd-py-")
        info = os.path.join(self.dir.name, "listen.json")
        self.log_path = os.path.join(self.dir.name, "clusterd.log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [os.environ["CLUSTERD_BIN"], "--store", store,
             "--grpc-listen", grpc_listen, "--http-listen", "127.0.0.1:0",
             "--listen-info-file", info, *extra_args],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while not os.path.exists(info):
            if self.proc.poll() is not None:
                raise RuntimeError("clusterd exited: " + open(self.log_path).read())
            if time.monotonic() > deadline:
                raise RuntimeError("clusterd did not start in time")
            time.sleep(0.02)
        with open(info) as f:
            addrs = json.load(f)
        self.grpc_address = addrs["grpc"]
        self.http_address = addrs["http"]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                code = self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                code = self.proc.wait()
        else:
            code = self.proc.returncode
        self.log.close()
        with open(self.log_path) as f:
            self.log_text = f.read()
        self.dir.cleanup()
        return code

    def kill(self):
        """SIGKILL, as a crash; the store is left as the process left it."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        return self.stop()


def read_golden(name):
    path = os.path.join(os.environ["GOLDEN_DIR"], name)
    with open(path) as f:
        return [line.split() for line in f if line.strip() and not line.startswith("#")]
