#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "client/scripted_training_agent.h"
#include "client/signal_dedup.h"
#include "common/clock.h"
#include "grpcpp/grpcpp.h"
#include "recover.grpc.pb.h"

namespace clusterd::client {

// The training side of the protocol: receives the ProcessManageSignals of one job.
class SignalHandler {
 public:
  virtual ~SignalHandler() = default;
  // On the client's dispatch thread, one at a time, in stream order (after de-duplication when
  // it is on; keep-alives included). May call the client's Report* helpers, which may block.
  virtual void OnSignal(const ::ProcessManageSignal& signal) = 0;
  // A subscription stream is open (after Init and Register succeeded).
  virtual void OnSubscribed() {}
  // The stream ended: OK when the server reset the controller (end of a cycle), an error when the
  // connection broke. The client reconnects by itself.
  virtual void OnStreamEnd(const grpc::Status& /*status*/) {}
};

// Jittered exponential back-off between reconnect attempts.
struct BackoffPolicy {
  absl::Duration initial = absl::Seconds(1);  // TaskD waits 1 s before reconnecting
  absl::Duration max = absl::Seconds(10);
  double multiplier = 2.0;
  double jitter = 0.2;  // +/- this fraction
};
// Pure: the wait before attempt number `consecutive_failures` + 1 (0 failures: `initial`), with
// `unit_random` in [0, 1) choosing the jitter.
absl::Duration BackoffDelay(const BackoffPolicy& policy, int consecutive_failures,
                            double unit_random);

// A TaskD-manager-like recovery client for one job (recovery-protocol.md §2.3, §4.4): a loop of
// Init, Register and SubscribeProcessManageSignal that reconnects with jittered back-off
// whenever the stream ends, HealthCheck every second, a channel with keepalive 3 s, signals
// de-duplicated by (uuid, signalType, changeStrategy) like the TaskD manager (optional), and one
// helper per report RPC. Reports retry transport errors only (up to 4 attempts, like TaskD);
// their Status code is returned, not interpreted.
class RecoverClient {
 public:
  struct Options {
    std::string address;                     // host:port of clusterd, or
    std::shared_ptr<grpc::Channel> channel;  // a channel to use instead
    std::string job_id;
    std::string role = "taskd";
    bool deduplicate = true;  // TaskD manager: yes; the Python toolkit: no
    absl::Duration health_check_period = absl::Seconds(1);  // zero: no health checks
    BackoffPolicy backoff;
    absl::Duration rpc_timeout = absl::Seconds(10);  // Init, Register, HealthCheck
    // A report can block on the server while its mailbox is full (§2.3).
    absl::Duration report_timeout = absl::Minutes(16);
    int report_attempts = 4;
    absl::Duration report_retry_delay = absl::Milliseconds(500);
    bool stop_on_init_refusal = false;  // the Python toolkit stops for good on Init 403
    Clock* clock = nullptr;             // nullptr: the real clock
    uint64_t seed = 0;                  // jitter seed; 0: random
  };

  struct Stats {
    int init_calls = 0;
    int register_calls = 0;
    int subscribes = 0;   // streams opened
    int stream_ends = 0;  // streams that ended (any status)
    int stream_ends_ok = 0;
    int signals = 0;  // received, keep-alives included
    int keep_alives = 0;
    int duplicates_suppressed = 0;
    int health_ok = 0;
    int health_failed = 0;
    int consecutive_failures = 0;
    bool init_refused = false;  // Init answered 403
    bool subscribed = false;    // a stream is open now
    std::string last_error;
  };

  RecoverClient(Options options, SignalHandler* handler);
  ~RecoverClient();
  RecoverClient(const RecoverClient&) = delete;
  RecoverClient& operator=(const RecoverClient&) = delete;

  // Starts the subscribe loop, the health checks and the dispatch thread.
  void Start();
  // Cancels the stream and every call in flight, and joins the threads. Idempotent.
  void Stop();

  // One call each; the wire Status on success, the gRPC error otherwise.
  absl::StatusOr<::Status> Init();
  absl::StatusOr<::Status> Register();
  absl::StatusOr<::Status> HealthCheck();
  absl::StatusOr<::Status> ReportStopComplete(int32_t code, const std::string& info = "",
                                              const std::vector<::FaultRank>& fault_ranks = {});
  absl::StatusOr<::Status> ReportRecoverStrategy(const std::vector<std::string>& strategies,
                                                 const std::vector<::FaultRank>& fault_ranks = {});
  absl::StatusOr<::Status> ReportRecoverStatus(
      int32_t code, const std::string& strategy,
      const std::vector<std::string>& isolate_rank_ids = {}, const std::string& info = "");
  absl::StatusOr<::Status> ReportProcessFault(const std::vector<::FaultRank>& fault_ranks);
  // The report RPC for a policy's reply.
  absl::StatusOr<::Status> Send(const AgentReply& reply);

  Stats stats() const;
  // Blocks until a stream is open (or `timeout`); true if one is.
  bool WaitSubscribed(absl::Duration timeout) const;
  // Blocks until stats().stream_ends >= `count`.
  bool WaitStreamEnds(int count, absl::Duration timeout) const;
  // Blocks until `pred(stats())` holds (re-evaluated on every change); false after `timeout`.
  bool WaitForStats(const std::function<bool(const Stats&)>& pred, absl::Duration timeout) const;
  const Options& options() const { return options_; }

  static ::FaultRank Fault(int64_t rank, int type);

 private:
  struct Subscribed {};
  struct StreamEnded {
    grpc::Status status;
  };
  using Dispatch = std::variant<::ProcessManageSignal, Subscribed, StreamEnded>;

  void LoopThread();
  void HealthThread();
  void DispatchThread();
  // One Init/Register/Subscribe round; true when a stream was opened.
  bool Connect();
  void ReadStream();
  void Enqueue(Dispatch item);
  // Waits `d` on the clock; false when stopping.
  bool WaitOnClock(absl::Duration d);
  std::unique_ptr<grpc::ClientContext> NewContext(absl::Duration timeout);
  void Forget(grpc::ClientContext* ctx);
  template <typename Request, typename Call>
  absl::StatusOr<::Status> Unary(const Request& request, Call call, absl::Duration timeout,
                                 int attempts);

  Options options_;
  SignalHandler* handler_;
  Clock& clock_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<::Recover::Stub> stub_;
  SignalDeduplicator dedup_;  // reader thread only

  mutable absl::Mutex mu_;
  mutable absl::CondVar changed_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  Stats stats_ ABSL_GUARDED_BY(mu_);
  std::vector<grpc::ClientContext*> calls_ ABSL_GUARDED_BY(mu_);  // to cancel on Stop
  std::deque<Dispatch> dispatch_ ABSL_GUARDED_BY(mu_);
  std::mt19937_64 random_ ABSL_GUARDED_BY(mu_);

  std::thread loop_thread_;
  std::thread health_thread_;
  std::thread dispatch_thread_;
};

}  // namespace clusterd::client
