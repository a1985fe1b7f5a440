"""One rank's TaskD-like client for the clusterd half of bench/peer/peer_bench.py: the part of
TaskD that lives beside a training process (a "TaskD worker").

It subscribes to its job's TaskD manager (the harness's relay, which serves the Recover
service's SubscribeProcessManageSignal to the job's ranks and forwards what clusterd sends the
manager), and keeps its own warm channel to clusterd, on which it reports its own fault
(ReportProcessFault), as MindIO does from inside a failing process. Every line it prints is
"<event> <time.monotonic()> <detail>" (CLOCK_MONOTONIC: one clock for every process):

  subscribed   the relay stream is open
  signal       a signal from the manager (detail: signalType uuid)
  report       just before ReportProcessFault (on "fault" from stdin)
  reported     its answer (detail: code)
  ended        the relay stream ended (detail: how)
"""
import argparse
import os
import sys
import threading
import time

import grpc


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--relay", required=True, help="the TaskD manager's address (host:port)")
    p.add_argument("--clusterd", required=True, help="clusterd's gRPC address")
    p.add_argument("--job", required=True)
    p.add_argument("--rank", type=int, required=True)
    p.add_argument("--proto-py-dir", required=True, help="Python stubs from proto/*.proto")
    return p.parse_args()


def say(event, detail=""):
    sys.stdout.write("%s %.6f %s\n" % (event, time.monotonic(), detail))
    sys.stdout.flush()


def read_relay(stub, info):
    try:
        for signal in stub.SubscribeProcessManageSignal(info):
            if signal.signalType == "keep-alive":
                say("subscribed")
            else:
                say("signal", "%s %s" % (signal.signalType, signal.uuid or "-"))
        say("ended", "ok")
    except grpc.RpcError as err:
        say("ended", err.code().name)
    os._exit(0)  # the manager went away: nothing left to do


def main():
    args = parse_args()
    sys.path.insert(0, args.proto_py_dir)
    import recover_pb2  # noqa: E402  (generated at build time)
    import recover_pb2_grpc  # noqa: E402

    relay = recover_pb2_grpc.RecoverStub(grpc.insecure_channel(args.relay))
    info = recover_pb2.ClientInfo(jobId=args.job, role="worker rank %d" % args.rank)
    clusterd = recover_pb2_grpc.RecoverStub(grpc.insecure_channel(args.clusterd))
    clusterd.HealthCheck(info, timeout=10)  # connect now, not at the fault
    threading.Thread(target=read_relay, args=(relay, info), daemon=True).start()
    for line in sys.stdin:
        if line.strip() != "fault":
            continue
        request = recover_pb2.ProcessFaultRequest(
            jobId=args.job,
            faultRanks=[recover_pb2.FaultRank(rankId=str(args.rank), faultType="1")])
        say("report")
        try:
            status = clusterd.ReportProcessFault(request, timeout=10)
            say("reported", str(status.code))
        except grpc.RpcError as err:
            say("reported", err.code().name)


if __name__ == "__main__":
    main()
