#!/usr/bin/python3
"""Beside a real peer: PyTorch TorchElastic and clusterd, stopping the same job after one
rank fails (docs/benchmarks.md, "Beside a real peer: TorchElastic").

TorchElastic: N CPU workers (gloo, small all-reduces) under one torchrun agent per node of D
workers, agent 0 hosting the c10d rendezvous; SIGKILL one worker, time until every other
worker has been stopped (exited, SIGTERM from its agent, or its all-reduce failed). Once with
torchrun's default --monitor_interval (5 s) and once with a tight one.

clusterd: the same shape (N/D pods of D ranks) in a real clusterd; a TaskD-like manager
subscribed to clusterd and one client process per rank subscribed to the manager; one rank
reports its fault (ReportProcessFault); time until every other rank's client holds stopTrain.

Survival: SIGKILL the TorchElastic rendezvous host in the middle of a recovery; SIGKILL
clusterd in the middle of one and restart it on the same store.

Needs Debian's python3-torch (bash scripts/setup-peer-bench.sh) for the TorchElastic half; run
with /usr/bin/python3. Without torch it says so and exits 0 (skipped); it exits 1 when a
measurement could not be taken.

  /usr/bin/python3 bench/peer/peer_bench.py --build build
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
WORKER_MEMORY = 160 << 20  # private memory of one torch worker or agent, measured, rounded up
DEBIAN_PYTHON = "/usr/bin/python3"
MEMORY_FLOOR = 2 << 30  # stop the TorchElastic job when MemAvailable falls below this


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("--build", default=os.path.join(REPO, "build"),
                   help="the CMake build tree (clusterd and the Python stubs)")
    p.add_argument("--ranks", default="16,64", help="job sizes N, comma-separated")
    p.add_argument("--per-node", type=int, default=8, help="ranks per node (D)")
    p.add_argument("--reps", type=int, default=5, help="repetitions per size and side")
    p.add_argument("--monitor-interval", type=float, default=5.0,
                   help="torchrun --monitor_interval (torchrun's default: 5)")
    p.add_argument("--tight-monitor-interval", type=float, default=0.1,
                   help="a second TorchElastic run with this interval (0: skip)")
    p.add_argument("--step-seconds", type=float, default=0.1,
                   help="each TorchElastic worker's pause between two all-reduces")
    p.add_argument("--crash-trials", type=int, default=2,
                   help="clusterd SIGKILLs per kill point in the survival runs")
    p.add_argument("--survival-ranks", type=int, default=16,
                   help="job size of the survival runs (0: skip them)")
    p.add_argument("--sides", default="torchelastic,clusterd",
                   help="which halves to run: torchelastic, clusterd or both")
    p.add_argument("--work-dir", help="keep logs and state here (default: a temporary one)")
    p.add_argument("--json", help="also write every measurement to this file")
    return p.parse_args()


def setup_paths(build):
    clusterd = os.path.join(build, "apps", "clusterd", "clusterd")
    stubs = os.path.join(build, "tests", "python", "gen")
    for path, what in ((clusterd, "clusterd"), (os.path.join(stubs, "recover_pb2.py"),
                                                 "the Python stubs (target python_stubs)")):
        if not os.path.exists(path):
            sys.exit("peer_bench: %s not found at %s: build it first (cmake --build %s "
                     "--target clusterd python_stubs)" % (what, path, build))
    os.environ["CLUSTERD_BIN"] = clusterd
    os.environ["PROTO_PY_DIR"] = stubs
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    sys.path.insert(0, os.path.join(REPO, "tests", "python"))
    sys.path.insert(0, stubs)


def have_torch():
    try:
        import torch.distributed.run  # noqa: F401
    except ImportError as err:
        return err
    return None


def check_memory(ranks, per_node, log):
    from measure import MeasurementError, mem_available_bytes
    need = (ranks + ranks // per_node) * WORKER_MEMORY + MEMORY_FLOOR
    have = mem_available_bytes()
    log("  memory: %.1f GiB available, about %.1f GiB needed for N=%d" % (
        have / 2**30, need / 2**30, ranks))
    if have < need:
        raise MeasurementError("not enough memory for %d torch workers: %.1f GiB available, "
                               "%.1f GiB needed" % (ranks, have / 2**30, need / 2**30))


def stats(values):
    from measure import percentile
    return {"n": len(values), "p50": percentile(values, 50), "max": max(values)}


def fmt_s(seconds):
    return "%.3f s" % seconds if seconds >= 1 else "%.1f ms" % (1e3 * seconds)


def run_torchelastic(args, sizes, work, log, results):
    import torchelastic_side
    from measure import MemoryGuard
    intervals = [args.monitor_interval]
    if args.tight_monitor_interval > 0:
        intervals.append(args.tight_monitor_interval)
    for n in sizes:
        for interval in intervals:
            check_memory(n, args.per_node, log)
            d = tempfile.mkdtemp(prefix="te-%d-%g-" % (n, interval), dir=work)
            guard = MemoryGuard(MEMORY_FLOOR, lambda avail: log(
                "  memory low (%.1f GiB): stopping the TorchElastic job" % (avail / 2**30)))
            try:
                runs = torchelastic_side.run_latency(n, args.per_node, interval, args.reps, d,
                                                     log, abort=lambda: guard.tripped,
                                                     step_seconds=args.step_seconds)
            finally:
                guard.stop()
            log("  lowest MemAvailable during the run: %.1f GiB" % (guard.lowest / 2**30))
            results["torchelastic"].append({"ranks": n, "monitor_interval": interval,
                                            "runs": runs})


def run_clusterd(args, sizes, work, log, results):
    import clusterd_side
    for n in sizes:
        d = tempfile.mkdtemp(prefix="clusterd-%d-" % n, dir=work)
        runs = clusterd_side.run_latency(n, args.per_node, args.reps, d, log)
        results["clusterd"].append({"ranks": n, "runs": runs})


def run_survival(args, sides, work, log, results):
    n = args.survival_ranks
    if "torchelastic" in sides:
        import torchelastic_side
        check_memory(n, args.per_node, log)
        for kill_host in (False, True):
            d = tempfile.mkdtemp(prefix="te-host-%d-" % kill_host, dir=work)
            results["survival"].append(dict(side="torchelastic", ranks=n, **(
                torchelastic_side.run_host_kill(n, args.per_node, args.monitor_interval, d,
                                                log, kill_host, step_seconds=args.step_seconds))))
    if "clusterd" in sides:
        import clusterd_side
        for point in ("after-report", "on-stoptrain"):
            for _ in range(args.crash_trials):
                d = tempfile.mkdtemp(prefix="clusterd-crash-", dir=work)
                results["survival"].append(dict(side="clusterd", ranks=n, **(
                    clusterd_side.run_crash(n, args.per_node, d, log, point))))


def summary(results, uptime):
    lines = ["", "Beside a real peer (load average at the start %s, at the end %s)" % uptime,
             "| side | N | setting | reps | p50 | max | how the others stopped (last rep) |",
             "|---|---|---|---|---|---|---|"]
    p50 = {}
    for r in results["torchelastic"]:
        s = stats([m["seconds"] for m in r["runs"]])
        p50[("te", r["ranks"], r["monitor_interval"])] = s["p50"]
        last = r["runs"][-1]
        lines.append("| TorchElastic | %d | monitor_interval %g s | %d | %s | %s | %s |" % (
            r["ranks"], r["monitor_interval"], s["n"], fmt_s(s["p50"]), fmt_s(s["max"]),
            ", ".join("%s %d" % kv for kv in sorted(last["by"].items()))))
    for r in results["clusterd"]:
        s = stats([m["seconds"] for m in r["runs"]])
        own = stats([m["in_clusterd"] for m in r["runs"]])
        p50[("cd", r["ranks"])] = s["p50"]
        controller = [m["controller"] for m in r["runs"] if m["controller"] is not None]
        lines.append("| clusterd | %d | report -> stopTrain at every rank | %d | %s | %s | "
                     "report -> manager p50 %s (controller %s), fan-out to the ranks p50 %s |"
                     % (r["ranks"], s["n"], fmt_s(s["p50"]), fmt_s(s["max"]), fmt_s(own["p50"]),
                        fmt_s(stats(controller)["p50"]) if controller else "?",
                        fmt_s(stats([m["fan_out"] for m in r["runs"]])["p50"])))
    for key, te in sorted(p50.items()):
        if key[0] == "te" and ("cd", key[1]) in p50:
            lines.append("ratio TorchElastic/clusterd, N=%d, monitor_interval %g s: %.0fx (p50)"
                         % (key[1], key[2], te / p50[("cd", key[1])]))
    for s in results["survival"]:
        if s["side"] == "torchelastic":
            lines.append("survival TorchElastic N=%d, %s: %s %.1f s after the worker kill "
                         "(agent exit codes %s)" % (
                             s["ranks"], "rendezvous host SIGKILLed mid-recovery"
                             if s["kill_host"] else "no host kill", s["result"], s["seconds"],
                             s["agent_exit_codes"]))
        else:
            lines.append(
                "survival clusterd N=%d, SIGKILL %s (stopTrain out before the kill: %s; restart "
                "%.2f s): every rank stopTrain: %s (at most %d per rank); cycle ended: %s; "
                "record %s" % (
                    s["ranks"], s["kill_point"], "yes" if s["stoptrain_before_kill"] else "no",
                    s["restart_seconds"],
                    "yes, %.2f s after the report" % s["stop_after_report"]
                    if s["all_ranks_stopped"] else "NO", s["stoptrain_per_rank"],
                    "yes, %.1f s after the report" % s["cycle_seconds"] if s["cycle_ended"]
                    else "NO", s["record_state"]))
    return "\n".join(lines)


def main():
    if os.path.realpath(sys.executable) != os.path.realpath(DEBIAN_PYTHON):
        # Debian's torch, grpcio and protobuf live under Debian's interpreter only.
        os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON, os.path.abspath(__file__)] + sys.argv[1:])
    args = parse_args()
    setup_paths(args.build)
    sys.path.insert(0, HERE)
    from measure import MeasurementError
    sides = [s.strip() for s in args.sides.split(",") if s.strip()]
    if set(sides) - {"torchelastic", "clusterd"}:
        sys.exit("peer_bench: unknown side in --sides %s" % args.sides)
    if "torchelastic" in sides:
        missing = have_torch()
        if missing is not None:
            print("peer_bench: skipped: PyTorch is not installed for %s (%s); run "
                  "bash scripts/setup-peer-bench.sh" % (sys.executable, missing))
            return 0
    sizes = [int(x) for x in args.ranks.split(",") if x.strip()]
    work = args.work_dir or tempfile.mkdtemp(prefix="peer-bench-")
    os.makedirs(work, exist_ok=True)
    results = {"torchelastic": [], "clusterd": [], "survival": []}

    def log(line):
        print(line, flush=True)
    start_load = "%.2f %.2f %.2f" % os.getloadavg()
    code = 0
    try:
        if "clusterd" in sides:
            log("clusterd: N = %s, %d repetitions" % (args.ranks, args.reps))
            run_clusterd(args, sizes, work, log, results)
        if "torchelastic" in sides:
            log("TorchElastic: N = %s, %d repetitions" % (args.ranks, args.reps))
            run_torchelastic(args, sizes, work, log, results)
        if args.survival_ranks > 0:
            log("survival: N = %d" % args.survival_ranks)
            run_survival(args, sides, work, log, results)
    except MeasurementError as err:
        log("peer_bench: measurement failed: %s" % err)
        code = 1
    end_load = "%.2f %.2f %.2f" % os.getloadavg()
    print(summary(results, (start_load, end_load)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if args.work_dir is None and code == 0:
        shutil.rmtree(work, ignore_errors=True)
    elif code:
        print("logs kept in %s" % work)
    return code


if __name__ == "__main__":
    sys.exit(main())
