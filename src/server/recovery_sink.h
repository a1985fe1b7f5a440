#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "recover.pb.h"
#include "recovery/executor.h"
#include "server/recover_stream.h"
#include "server/stream_hub.h"

namespace clusterd::server {

// The gRPC side of the recovery controller (recovery::SignalSink): the per-job registry of
// Recover server streams and the unary calls waiting for their answer.
//
// * ProcessManageSignal streams: every Subscribe opens a stream with its own bounded queue
//   (kSignalQueueCapacity). Signals go to the job's newest stream; EndStreams closes the older
//   ones after their queued signals (status OK, §2.3). The controller's strand never waits for a
//   client: a write is "done" once queued, and a full queue is a failed send (notifyFail),
//   counted in clusterd_stream_messages_dropped_total{stream="recover_signal"}.
// * Keep-alives (§5.6) are due 5 s after a stream opens, then every 5 s (DueKeepAlives).
// * SubscribeNotifySwitch / SubscribeNotifyExecStressTest: one stream per job (a new one
//   replaces the old); a reset ends them.
// * SubscribeSwitchNicSignal / SubscribeStressTestResponse: one-shot operator streams that
//   deliver exactly one OM message; messages wait in a queue of 10 per job and kind, dropped at
//   a reset; a waiter that gets nothing in 15 min ends empty and queues the timeout text.
// * Tickets: a Report*/Reply*/OM call registers a callback, the controller answers it with
//   Reply(ticket, code, info), possibly much later; a client that gives up cancels its ticket.
class RecoverySink final : public recovery::SignalSink {
 public:
  static constexpr size_t kSignalQueueCapacity = 16;
  static constexpr size_t kNotifyQueueCapacity = 4;
  static constexpr size_t kOmQueueCapacity = 10;
  static constexpr absl::Duration kKeepAlivePeriod = absl::Seconds(5);
  static constexpr absl::Duration kOmWaitTimeout = absl::Minutes(15);

  using SignalChannel = StreamChannel<::ProcessManageSignal>;
  using SwitchChannel = StreamChannel<::SwitchRankList>;
  using StressChannel = StreamChannel<::StressTestRankParams>;
  using SwitchOmChannel = StreamChannel<::SwitchNicResponse>;
  using StressOmChannel = StreamChannel<::StressTestResponse>;
  using Answer = std::function<void(int32_t code, const std::string& info)>;

  explicit RecoverySink(Clock& clock);
  ~RecoverySink() override;

  // ---- recovery::SignalSink (called on a job's strand) ----
  bool WriteSignal(const std::string& job_id, const recovery::Signal& signal) override;
  bool PushSwitchRankList(const std::string& job_id,
                          const recovery::NicSwitchParams& params) override;
  bool PushStressTestParams(const std::string& job_id,
                            const std::map<int64_t, std::vector<int64_t>>& params) override;
  void QueueOmMessage(const std::string& job_id, recovery::OmKind kind,
                      const std::string& text) override;
  void EndStreams(const std::string& job_id, uint64_t keep_stream_id) override;
  void Reply(uint64_t ticket, int32_t code, const std::string& info) override;

  // ---- ProcessManageSignal streams ----
  struct OpenedStream {
    uint64_t stream_id = 0;
    std::shared_ptr<SignalChannel> channel;
  };
  OpenedStream OpenSignalStream(const std::string& job_id);
  // The stream's RPC is over. True when it was still registered (the client or the transport
  // ended it; the controller must hear StreamClosed), false when EndStreams had ended it.
  bool SignalStreamDone(const std::string& job_id, uint64_t stream_id);
  size_t SignalStreams(const std::string& job_id) const;

  // The job's last signals (keep-alives left out), oldest first, for `clusterctl watch signals`
  // and /api/clusterd/v1/recovery/<job>: what was sent, when, and whether it reached a stream.
  struct SentSignal {
    absl::Time at;
    std::string uuid, signal_type, change_strategy;
    std::vector<std::string> actions;
    size_t fault_ranks = 0;
    bool queued = false;
  };
  static constexpr size_t kSentSignalsKept = 64;       // per job
  static constexpr size_t kSentSignalJobsKept = 4096;  // jobs with a log; the oldest go first
  std::vector<SentSignal> SentSignals(const std::string& job_id) const;
  // Streams whose keep-alive is due at `now` (each deadline advances by 5 s).
  std::vector<std::pair<std::string, std::shared_ptr<SignalChannel>>> DueKeepAlives(absl::Time now);
  // When the next keep-alive is due; nullopt without a signal stream.
  std::optional<absl::Time> NextKeepAliveDue() const;

  // ---- OM notify streams (TaskD) ----
  std::shared_ptr<SwitchChannel> OpenNotifySwitch(const std::string& job_id);
  std::shared_ptr<StressChannel> OpenNotifyStress(const std::string& job_id);
  void NotifySwitchDone(const std::string& job_id, const SwitchChannel* channel);
  void NotifyStressDone(const std::string& job_id, const StressChannel* channel);

  // ---- OM one-shot operator streams ----
  std::shared_ptr<SwitchOmChannel> OpenSwitchOm(const std::string& job_id);
  std::shared_ptr<StressOmChannel> OpenStressOm(const std::string& job_id);
  // Ends waiters older than 15 min (their timeout text is queued for the next subscriber).
  void ExpireOmWaiters(absl::Time now);
  size_t QueuedOmMessages(const std::string& job_id, recovery::OmKind kind) const;

  // ---- tickets ----
  uint64_t AddTicket(Answer answer);
  // Forgets the ticket (the client went away); false when it was already answered.
  bool CancelTicket(uint64_t ticket);
  size_t PendingTickets() const;

  // Server shutdown: ends every stream (UNAVAILABLE) and answers nothing more.
  void CloseAll();

 private:
  struct SignalStream {
    std::shared_ptr<SignalChannel> channel;
    absl::Time next_keep_alive;
  };
  template <typename Wire>
  struct OmBox {
    std::deque<std::string> pending;
    std::shared_ptr<StreamChannel<Wire>> waiter;
    absl::Time deadline;
  };
  template <typename Wire>
  std::shared_ptr<StreamChannel<Wire>> OpenOm(std::map<std::string, OmBox<Wire>>& boxes,
                                              const std::string& job_id, StreamMetrics& metrics)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  template <typename Wire>
  std::shared_ptr<StreamChannel<Wire>> QueueOm(std::map<std::string, OmBox<Wire>>& boxes,
                                               const std::string& job_id, std::string text,
                                               Wire* message) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock& clock_;
  StreamMetrics signal_metrics_;
  StreamMetrics switch_metrics_;
  StreamMetrics stress_metrics_;
  StreamMetrics om_metrics_;

  mutable absl::Mutex mu_;
  uint64_t next_stream_id_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, std::map<uint64_t, SignalStream>> signal_streams_ ABSL_GUARDED_BY(mu_);
  // (next keep-alive, job, stream id) of every signal stream, earliest first.
  std::set<std::tuple<absl::Time, std::string, uint64_t>> keep_alive_due_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<SwitchChannel>> notify_switch_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<StressChannel>> notify_stress_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, OmBox<::SwitchNicResponse>> switch_om_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, OmBox<::StressTestResponse>> stress_om_ ABSL_GUARDED_BY(mu_);
  uint64_t next_ticket_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<uint64_t, Answer> tickets_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, std::deque<SentSignal>> sent_ ABSL_GUARDED_BY(mu_);
  void RecordSentLocked(const std::string& job_id, SentSignal entry)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
};

}  // namespace clusterd::server
