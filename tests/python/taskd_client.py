"""A TaskD-like recovery client for one job, built on the Python stubs generated from our
.proto files (recovery-protocol.md §2.3, §4.4, §5.6).

It follows the real client loop: a channel with keepalive 3 s (the Python toolkit's options),
Init -> Register -> SubscribeProcessManageSignal, reconnect when the stream ends (1 s, growing by
1 s per consecutive failed attempt up to 10 s, with a little jitter), HealthCheck every second.
Like the Python toolkit (role "master agent"), it does NOT de-duplicate signals, stops for good
when Init answers 403, and on a non-zero report code calls Register once and repeats the report
once.

ScriptedAgent answers signals like a well-behaved job (see src/client/scripted_training_agent.h,
whose behaviour it mirrors), configurable to fail, refuse or never answer.
"""
import collections
import queue
import random
import threading
import time

import grpc

import recover_pb2
import recover_pb2_grpc

CHANNEL_OPTIONS = [
    ("grpc.keepalive_time_ms", 3000),
    ("grpc.keepalive_timeout_ms", 1000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 1),
]

KEEP_ALIVE = "keep-alive"
CODE_OK = 0
CODE_INIT_REFUSED = 403
CODE_EXIT_ISOLATE_RANKS = 201


def fault(rank, fault_type):
    return recover_pb2.FaultRank(rankId=str(rank), faultType=str(fault_type))


class TaskdClient:
    def __init__(self, address, job_id, handler=None, role="master agent",
                 health_period=1.0, reconnect_base=1.0, reconnect_max=10.0,
                 init_retry=5.0, health_error_wait=10.0, rpc_timeout=10.0,
                 report_timeout=960.0):
        self.address = address
        self.job_id = job_id
        self.role = role
        self.handler = handler
        self.health_period = health_period
        self.reconnect_base = reconnect_base
        self.reconnect_max = reconnect_max
        self.init_retry = init_retry
        self.health_error_wait = health_error_wait
        self.rpc_timeout = rpc_timeout
        self.report_timeout = report_timeout
        self._lock = threading.Condition()
        self._stopping = False
        self._stream = None
        self._threads = []
        self._dispatch = queue.Queue()
        self._channel = None
        self._stub = None
        self._new_channel()
        self.stats = collections.Counter()
        self.init_refused = False
        self.subscribed = False
        self.received = []  # every signal read, keep-alives included, in order

    # --- wiring -------------------------------------------------------------------------------
    def _new_channel(self):
        if self._channel is not None:
            self._channel.close()
        self._channel = grpc.insecure_channel(self.address, options=CHANNEL_OPTIONS)
        self._stub = recover_pb2_grpc.RecoverStub(self._channel)

    def _info(self):
        return recover_pb2.ClientInfo(jobId=self.job_id, role=self.role)

    def start(self):
        for target in (self._loop, self._health, self._dispatcher):
            t = threading.Thread(target=target, daemon=True)
            t.start()
            self._threads.append(t)

    def stop(self):
        with self._lock:
            self._stopping = True
            stream = self._stream
            self._lock.notify_all()
        if stream is not None:
            stream.cancel()
        self._dispatch.put(None)
        for t in self._threads:
            t.join(timeout=15)
        self._channel.close()

    def _wait(self, seconds):
        """Sleeps `seconds` unless stopped; False when stopping."""
        deadline = time.monotonic() + seconds
        with self._lock:
            while not self._stopping:
                left = deadline - time.monotonic()
                if left <= 0:
                    return True
                self._lock.wait(left)
        return False

    def wait_until(self, pred, timeout):
        deadline = time.monotonic() + timeout
        with self._lock:
            while not pred():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(min(left, 0.1))
        return True

    def _bump(self, key):
        with self._lock:
            self.stats[key] += 1
            self._lock.notify_all()

    # --- RPCs ---------------------------------------------------------------------------------
    def init(self):
        return self._stub.Init(self._info(), timeout=self.rpc_timeout)

    def register(self):
        return self._stub.Register(self._info(), timeout=self.rpc_timeout)

    def health_check(self):
        return self._stub.HealthCheck(self._info(), timeout=self.rpc_timeout)

    def _report(self, method, request):
        """The toolkit's rule: a non-zero code -> Register once, repeat the report once."""
        call = getattr(self._stub, method)
        status = call(request, timeout=self.report_timeout)
        if status.code != CODE_OK:
            self._bump("report_retries")
            try:
                self.register()
            except grpc.RpcError:
                pass
            status = call(request, timeout=self.report_timeout)
        return status

    def report_stop_complete(self, code=0, info="", fault_ranks=()):
        return self._report("ReportStopComplete", recover_pb2.StopCompleteRequest(
            jobId=self.job_id, status=recover_pb2.Status(code=code, info=info),
            faultRanks=list(fault_ranks)))

    def report_recover_strategy(self, strategies, fault_ranks=()):
        return self._report("ReportRecoverStrategy", recover_pb2.RecoverStrategyRequest(
            jobId=self.job_id, faultRanks=list(fault_ranks), strategies=list(strategies)))

    def report_recover_status(self, code, strategy, isolate_rank_ids=(), info=""):
        return self._report("ReportRecoverStatus", recover_pb2.RecoverStatusRequest(
            jobId=self.job_id, status=recover_pb2.Status(code=code, info=info),
            strategy=strategy, isolateRankIds=list(isolate_rank_ids)))

    def report_process_fault(self, fault_ranks):
        return self._report("ReportProcessFault", recover_pb2.ProcessFaultRequest(
            jobId=self.job_id, faultRanks=list(fault_ranks)))

    # --- loops --------------------------------------------------------------------------------
    def _connect(self):
        """Init -> Register -> Subscribe; True when Register returned 0."""
        try:
            self._bump("init_calls")
            status = self.init()
        except grpc.RpcError:
            self._bump("init_errors")
            self._new_channel()  # the toolkit recreates its channel on a transport error
            return False
        if status.code == CODE_INIT_REFUSED:
            with self._lock:
                self.init_refused = True  # "will no longer init clusterd"
                self._lock.notify_all()
            return False
        if status.code != CODE_OK:
            self._bump("init_failures")
            self._wait(self.init_retry)
            return False
        try:
            self._bump("register_calls")
            status = self.register()
        except grpc.RpcError:
            self._bump("register_errors")
            return False
        if status.code != CODE_OK:
            self._bump("register_failures")
            return False
        self._read_stream()
        return True

    def _read_stream(self):
        stream = self._stub.SubscribeProcessManageSignal(self._info())
        with self._lock:
            if self._stopping:
                stream.cancel()
                return
            self._stream = stream
        opened = False
        try:
            for signal in stream:
                if not opened:
                    opened = True
                    self._opened()
                with self._lock:
                    self.received.append(signal)
                    self.stats["signals"] += 1
                    if signal.signalType == KEEP_ALIVE:
                        self.stats["keep_alives"] += 1
                    self._lock.notify_all()
                self._dispatch.put(("signal", signal))
            if not opened:
                opened = True
                self._opened()
            self._ended("ok")
        except grpc.RpcError as err:
            if opened:
                self._ended(err.code().name)
            else:
                self._bump("subscribe_errors")
        finally:
            with self._lock:
                self._stream = None

    def _opened(self):
        with self._lock:
            self.subscribed = True
            self.stats["subscribes"] += 1
            self._lock.notify_all()
        self._dispatch.put(("subscribed", None))

    def _ended(self, how):
        with self._lock:
            self.subscribed = False
            self.stats["stream_ends"] += 1
            self.stats["stream_ends_" + how] += 1
            self._lock.notify_all()
        self._dispatch.put(("ended", how))

    def _loop(self):
        failures = 0
        while True:
            with self._lock:
                if self._stopping or self.init_refused:
                    return
            ok = self._connect()
            failures = 0 if ok else failures + 1
            delay = min(self.reconnect_base * (1 + failures), self.reconnect_max)
            delay *= random.uniform(0.9, 1.1)
            if not self._wait(delay):
                return

    def _health(self):
        while self._wait(self.health_period):
            try:
                status = self.health_check()
                self._bump("health_ok" if status.code == CODE_OK else "health_failed")
            except grpc.RpcError:
                self._bump("health_failed")
                if not self._wait(self.health_error_wait):
                    return

    def _dispatcher(self):
        while True:
            item = self._dispatch.get()
            if item is None:
                return
            if self.handler is None:
                continue
            kind, value = item
            try:
                if kind == "signal":
                    self.handler.on_signal(value, self)
                elif kind == "subscribed":
                    self.handler.on_subscribed(self)
                else:
                    self.handler.on_stream_end(value, self)
            except grpc.RpcError as err:
                with self._lock:
                    self.stats["handler_rpc_errors"] += 1
                    self.stats["last_error_" + err.code().name] += 1
            with self._lock:
                self._lock.notify_all()


class ScriptedAgent:
    """Answers signals like a well-behaved job; mirrors client::ScriptedTrainingAgent.

    supported: the strategies reported after globalFault.
    status_codes: strategy -> list of codes, one per attempt, the last repeating (absent: 0).
    never_answer: signal types, or "changeStrategy:<strategy>", left unanswered.
    """

    def __init__(self, job_id, supported=("retry", "recover", "dump", "exit"),
                 stop_complete_code=0, status_codes=None, never_answer=(),
                 report_fault_on_pre_exit=True):
        self.job_id = job_id
        self.supported = list(supported)
        self.stop_complete_code = stop_complete_code
        self.status_codes = dict(status_codes or {})
        self.never_answer = set(never_answer)
        self.report_fault_on_pre_exit = report_fault_on_pre_exit
        self.attempts = collections.Counter()
        self.phase = "training"
        self.resumed = 0
        self.kills = 0
        self.strategies_run = []
        self.signals = []  # handled, keep-alives left out
        self.replies = []  # (description, status code or exception name)
        self.stream_ends = 0
        self._awaiting_isolation = False

    def _code(self, strategy):
        codes = self.status_codes.get(strategy, [])
        n = self.attempts[strategy]
        self.attempts[strategy] += 1
        if not codes:
            return CODE_OK
        return codes[min(n, len(codes) - 1)]

    def _silent(self, signal):
        return (signal.signalType in self.never_answer or
                (signal.signalType == "changeStrategy" and
                 "changeStrategy:" + signal.changeStrategy in self.never_answer))

    def _send(self, description, call):
        try:
            status = call()
            self.replies.append((description, status.code))
        except grpc.RpcError as err:
            self.replies.append((description, err.code().name))

    def on_subscribed(self, client):
        pass

    def on_stream_end(self, how, client):
        self.stream_ends += 1
        if self.phase == "exiting":
            self.phase = "training"
            self.resumed += 1

    def on_signal(self, signal, client):
        if signal.jobId and signal.jobId != self.job_id:
            return
        kind = signal.signalType
        if kind == KEEP_ALIVE:
            return
        self.signals.append(signal)
        silent = self._silent(signal)
        ranks = list(signal.faultRanks)
        sends = []
        if kind == "stopTrain":
            self.phase = "stopped"
            sends.append(("ReportStopComplete{code=%d}" % self.stop_complete_code,
                          lambda: client.report_stop_complete(self.stop_complete_code,
                                                              "stop complete", ranks)))
        elif kind == "globalFault":
            self.phase = "stopped"
            sends.append(("ReportRecoverStrategy{%s}" % ",".join(self.supported),
                          lambda: client.report_recover_strategy(self.supported, ranks)))
        elif kind == "changeStrategy":
            strategy = signal.changeStrategy
            self.strategies_run.append(strategy)
            if strategy == "exit":
                self.phase = "exiting"
            elif strategy == "downgrade":
                self.phase = "recovering"
                self._awaiting_isolation = True
                isolate = [f.rankId for f in ranks]
                sends.append(("ReportRecoverStatus{code=201, strategy=downgrade}",
                              lambda: client.report_recover_status(
                                  CODE_EXIT_ISOLATE_RANKS, "downgrade", isolate)))
            else:
                self.phase = "recovering"
                code = self._code(strategy)
                sends.append(("ReportRecoverStatus{code=%d, strategy=%s}" % (code, strategy),
                              lambda: client.report_recover_status(code, strategy)))
                if code == CODE_OK and not silent:
                    self.phase = "training"
                    self.resumed += 1
        elif kind == "saveAndExit":
            self.strategies_run.append("dump")
            self.phase = "exiting"
            code = self._code("dump")
            sends.append(("ReportRecoverStatus{code=%d, strategy=dump}" % code,
                          lambda: client.report_recover_status(code, "dump")))
        elif kind == "faultNodesExit" and self._awaiting_isolation:
            self._awaiting_isolation = False
            code = self._code("downgrade")
            sends.append(("ReportRecoverStatus{code=%d, strategy=downgrade}" % code,
                          lambda: client.report_recover_status(code, "downgrade")))
            if code == CODE_OK and not silent:
                self.phase = "scaledIn"
                self.resumed += 1
        elif kind == "killMaster":
            self.kills += 1
            self.phase = "exiting"
        elif kind == "preExitProcess":
            self.phase = "stopped"
            if self.report_fault_on_pre_exit:
                sends.append(("ReportProcessFault", lambda: client.report_process_fault(ranks)))
        elif kind == "hot-switch" and "new pod running" in signal.actions:
            sends.append(("ReportRecoverStrategy{migration}",
                          lambda: client.report_recover_strategy(["migration"])))
        if silent:
            return
        for description, call in sends:
            self._send(description, call)
