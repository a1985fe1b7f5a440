#include "server/recovery_sink.h"

#include "common/log.h"
#include "recovery/vocabulary.h"
#include "server/recover_convert.h"

namespace clusterd::server {
namespace {

constexpr char kRecoverySinkLog[] = "recover-service";

template <typename Wire>
Wire OmMessage(const std::string& job_id, const std::string& text) {
  Wire m;
  m.set_jobid(job_id);
  m.set_msg(text);
  return m;
}

}  // namespace

RecoverySink::RecoverySink(Clock& clock)
    : clock_(clock),
      signal_metrics_("recover_signal"),
      switch_metrics_("recover_notify_switch"),
      stress_metrics_("recover_notify_stress_test"),
      om_metrics_("recover_om") {}

RecoverySink::~RecoverySink() { CloseAll(); }

// ---- ProcessManageSignal streams ----

RecoverySink::OpenedStream RecoverySink::OpenSignalStream(const std::string& job_id) {
  auto channel = std::make_shared<SignalChannel>(kSignalQueueCapacity, false, signal_metrics_);
  absl::MutexLock lock(&mu_);
  if (closed_) channel->Close(grpc::Status(grpc::StatusCode::UNAVAILABLE, "clusterd is stopping"));
  const uint64_t id = ++next_stream_id_;
  const absl::Time due = clock_.Now() + kKeepAlivePeriod;
  signal_streams_[job_id][id] = SignalStream{channel, due};
  keep_alive_due_.emplace(due, job_id, id);
  return {id, channel};
}

bool RecoverySink::SignalStreamDone(const std::string& job_id, uint64_t stream_id) {
  absl::MutexLock lock(&mu_);
  auto job = signal_streams_.find(job_id);
  if (job == signal_streams_.end()) return false;
  auto stream = job->second.find(stream_id);
  const bool erased = stream != job->second.end();
  if (erased) {
    keep_alive_due_.erase({stream->second.next_keep_alive, job_id, stream_id});
    job->second.erase(stream);
  }
  if (job->second.empty()) signal_streams_.erase(job);
  return erased;
}

size_t RecoverySink::SignalStreams(const std::string& job_id) const {
  absl::MutexLock lock(&mu_);
  auto job = signal_streams_.find(job_id);
  return job == signal_streams_.end() ? 0 : job->second.size();
}

std::vector<std::pair<std::string, std::shared_ptr<RecoverySink::SignalChannel>>>
RecoverySink::DueKeepAlives(absl::Time now) {
  std::vector<std::pair<std::string, std::shared_ptr<SignalChannel>>> due;
  absl::MutexLock lock(&mu_);
  // Only the streams that are due, in due order (every stream of every tick was a scan of all).
  while (!keep_alive_due_.empty() && std::get<0>(*keep_alive_due_.begin()) <= now) {
    auto [at, job_id, id] = *keep_alive_due_.begin();
    keep_alive_due_.erase(keep_alive_due_.begin());
    auto job = signal_streams_.find(job_id);
    if (job == signal_streams_.end()) continue;
    auto stream = job->second.find(id);
    if (stream == job->second.end()) continue;
    SignalStream& s = stream->second;
    due.emplace_back(job_id, s.channel);
    // One keep-alive per period even after a long pause (no burst of catch-ups).
    while (s.next_keep_alive <= now) s.next_keep_alive += kKeepAlivePeriod;
    keep_alive_due_.emplace(s.next_keep_alive, job_id, id);
  }
  return due;
}

std::optional<absl::Time> RecoverySink::NextKeepAliveDue() const {
  absl::MutexLock lock(&mu_);
  if (keep_alive_due_.empty()) return std::nullopt;
  return std::get<0>(*keep_alive_due_.begin());
}

namespace {

RecoverySink::SentSignal SentOf(const recovery::Signal& signal, absl::Time at, bool queued) {
  return {at,
          signal.uuid,
          signal.signal_type,
          signal.change_strategy,
          signal.actions,
          signal.fault_ranks.size(),
          queued};
}

}  // namespace

void RecoverySink::RecordSentLocked(const std::string& job_id, SentSignal entry) {
  if (entry.signal_type == recovery::kSignalKeepAlive) return;
  auto it = sent_.find(job_id);
  if (it == sent_.end()) {
    if (sent_.size() >= kSentSignalJobsKept) {
      // The job whose last signal is oldest makes room.
      auto oldest = sent_.begin();
      for (auto j = sent_.begin(); j != sent_.end(); ++j) {
        if (j->second.back().at < oldest->second.back().at) oldest = j;
      }
      sent_.erase(oldest);
    }
    it = sent_.emplace(job_id, std::deque<SentSignal>{}).first;
  }
  it->second.push_back(std::move(entry));
  while (it->second.size() > kSentSignalsKept) it->second.pop_front();
}

bool RecoverySink::WriteSignal(const std::string& job_id, const recovery::Signal& signal) {
  std::shared_ptr<SignalChannel> channel;
  {
    absl::MutexLock lock(&mu_);
    auto job = signal_streams_.find(job_id);
    if (job == signal_streams_.end() || job->second.empty()) {
      RecordSentLocked(job_id, SentOf(signal, clock_.Now(), false));
      return false;
    }
    channel = job->second.rbegin()->second.channel;  // the newest subscription
  }
  const bool queued = channel->Push(SignalToProto(signal));
  if (!queued) {
    LogWarn(kRecoverySinkLog, "signal not queued (stream gone or queue full)",
            {{"job", job_id}, {"signal_type", signal.signal_type}});
  }
  {
    absl::MutexLock lock(&mu_);
    RecordSentLocked(job_id, SentOf(signal, clock_.Now(), queued));
  }
  return queued;
}

std::vector<RecoverySink::SentSignal> RecoverySink::SentSignals(const std::string& job_id) const {
  absl::MutexLock lock(&mu_);
  auto it = sent_.find(job_id);
  if (it == sent_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

// ---- OM notify streams ----

bool RecoverySink::PushSwitchRankList(const std::string& job_id,
                                      const recovery::NicSwitchParams& params) {
  std::shared_ptr<SwitchChannel> channel;
  {
    absl::MutexLock lock(&mu_);
    auto it = notify_switch_.find(job_id);
    if (it == notify_switch_.end()) return false;
    channel = it->second;
  }
  return channel->Push(SwitchRankListToProto(job_id, params));
}

bool RecoverySink::PushStressTestParams(const std::string& job_id,
                                        const std::map<int64_t, std::vector<int64_t>>& params) {
  std::shared_ptr<StressChannel> channel;
  {
    absl::MutexLock lock(&mu_);
    auto it = notify_stress_.find(job_id);
    if (it == notify_stress_.end()) return false;
    channel = it->second;
  }
  return channel->Push(StressParamsToProto(job_id, params));
}

std::shared_ptr<RecoverySink::SwitchChannel> RecoverySink::OpenNotifySwitch(
    const std::string& job_id) {
  auto fresh = std::make_shared<SwitchChannel>(kNotifyQueueCapacity, false, switch_metrics_);
  std::shared_ptr<SwitchChannel> old;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) fresh->Close(grpc::Status(grpc::StatusCode::UNAVAILABLE, "clusterd is stopping"));
    old = std::exchange(notify_switch_[job_id], fresh);
  }
  if (old != nullptr) {
    old->Close(grpc::Status(grpc::StatusCode::CANCELLED, "replaced by a newer subscription"));
  }
  return fresh;
}

std::shared_ptr<RecoverySink::StressChannel> RecoverySink::OpenNotifyStress(
    const std::string& job_id) {
  auto fresh = std::make_shared<StressChannel>(kNotifyQueueCapacity, false, stress_metrics_);
  std::shared_ptr<StressChannel> old;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) fresh->Close(grpc::Status(grpc::StatusCode::UNAVAILABLE, "clusterd is stopping"));
    old = std::exchange(notify_stress_[job_id], fresh);
  }
  if (old != nullptr) {
    old->Close(grpc::Status(grpc::StatusCode::CANCELLED, "replaced by a newer subscription"));
  }
  return fresh;
}

void RecoverySink::NotifySwitchDone(const std::string& job_id, const SwitchChannel* channel) {
  absl::MutexLock lock(&mu_);
  auto it = notify_switch_.find(job_id);
  if (it != notify_switch_.end() && it->second.get() == channel) notify_switch_.erase(it);
}

void RecoverySink::NotifyStressDone(const std::string& job_id, const StressChannel* channel) {
  absl::MutexLock lock(&mu_);
  auto it = notify_stress_.find(job_id);
  if (it != notify_stress_.end() && it->second.get() == channel) notify_stress_.erase(it);
}

// ---- OM one-shot streams ----

template <typename Wire>
std::shared_ptr<StreamChannel<Wire>> RecoverySink::OpenOm(std::map<std::string, OmBox<Wire>>& boxes,
                                                          const std::string& job_id,
                                                          StreamMetrics& metrics) {
  auto channel = std::make_shared<StreamChannel<Wire>>(1, /*one_shot=*/true, metrics);
  OmBox<Wire>& box = boxes[job_id];
  if (!box.pending.empty()) {
    channel->Push(OmMessage<Wire>(job_id, box.pending.front()));
    box.pending.pop_front();
    return channel;
  }
  if (box.waiter != nullptr) {
    // The newer operator subscription takes over; the older one ends empty.
    box.waiter->Close(
        grpc::Status(grpc::StatusCode::CANCELLED, "replaced by a newer subscription"));
  }
  box.waiter = channel;
  box.deadline = clock_.Now() + kOmWaitTimeout;
  return channel;
}

std::shared_ptr<RecoverySink::SwitchOmChannel> RecoverySink::OpenSwitchOm(
    const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  return OpenOm(switch_om_, job_id, om_metrics_);
}

std::shared_ptr<RecoverySink::StressOmChannel> RecoverySink::OpenStressOm(
    const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  return OpenOm(stress_om_, job_id, om_metrics_);
}

template <typename Wire>
std::shared_ptr<StreamChannel<Wire>> RecoverySink::QueueOm(
    std::map<std::string, OmBox<Wire>>& boxes, const std::string& job_id, std::string text,
    Wire* message) {
  OmBox<Wire>& box = boxes[job_id];
  if (box.waiter != nullptr && !box.waiter->ended()) {
    *message = OmMessage<Wire>(job_id, text);
    return std::exchange(box.waiter, nullptr);
  }
  box.waiter = nullptr;
  if (box.pending.size() >= kOmQueueCapacity) {
    om_metrics_.dropped_full.Increment();
    LogWarn(kRecoverySinkLog, "OM message dropped: queue full", {{"job", job_id}, {"text", text}});
    return nullptr;
  }
  box.pending.push_back(std::move(text));
  return nullptr;
}

void RecoverySink::QueueOmMessage(const std::string& job_id, recovery::OmKind kind,
                                  const std::string& text) {
  LogInfo(kRecoverySinkLog, "OM message", {{"job", job_id}, {"text", text}});
  std::shared_ptr<SwitchOmChannel> switch_waiter;
  std::shared_ptr<StressOmChannel> stress_waiter;
  ::SwitchNicResponse switch_message;
  ::StressTestResponse stress_message;
  {
    absl::MutexLock lock(&mu_);
    if (kind == recovery::OmKind::kStressTest) {
      stress_waiter = QueueOm(stress_om_, job_id, text, &stress_message);
    } else {
      switch_waiter = QueueOm(switch_om_, job_id, text, &switch_message);
    }
  }
  if (switch_waiter != nullptr) switch_waiter->Push(std::move(switch_message));
  if (stress_waiter != nullptr) stress_waiter->Push(std::move(stress_message));
}

void RecoverySink::ExpireOmWaiters(absl::Time now) {
  std::vector<std::shared_ptr<SwitchOmChannel>> switch_expired;
  std::vector<std::shared_ptr<StressOmChannel>> stress_expired;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [job_id, box] : switch_om_) {
      if (box.waiter == nullptr || box.deadline > now) continue;
      switch_expired.push_back(std::exchange(box.waiter, nullptr));
      if (box.pending.size() < kOmQueueCapacity) {
        box.pending.emplace_back(recovery::kOmReportSwitchNicTimeout);
      }
    }
    for (auto& [job_id, box] : stress_om_) {
      if (box.waiter == nullptr || box.deadline > now) continue;
      stress_expired.push_back(std::exchange(box.waiter, nullptr));
      if (box.pending.size() < kOmQueueCapacity) {
        box.pending.emplace_back(recovery::kOmReportStressTestTimeout);
      }
    }
  }
  for (auto& c : switch_expired) c->Close();
  for (auto& c : stress_expired) c->Close();
}

size_t RecoverySink::QueuedOmMessages(const std::string& job_id, recovery::OmKind kind) const {
  absl::MutexLock lock(&mu_);
  if (kind == recovery::OmKind::kStressTest) {
    auto it = stress_om_.find(job_id);
    return it == stress_om_.end() ? 0 : it->second.pending.size();
  }
  auto it = switch_om_.find(job_id);
  return it == switch_om_.end() ? 0 : it->second.pending.size();
}

// ---- resets ----

void RecoverySink::EndStreams(const std::string& job_id, uint64_t keep_stream_id) {
  std::vector<std::shared_ptr<SignalChannel>> signal_ended;
  std::shared_ptr<SwitchChannel> switch_ended;
  std::shared_ptr<StressChannel> stress_ended;
  {
    absl::MutexLock lock(&mu_);
    if (auto job = signal_streams_.find(job_id); job != signal_streams_.end()) {
      for (auto it = job->second.begin(); it != job->second.end();) {
        // Stream ids grow: a stream newer than the kept one subscribed after it, and its own
        // Subscribed event (not processed yet) will keep it.
        if (keep_stream_id != 0 && it->first >= keep_stream_id) {
          ++it;
          continue;
        }
        signal_ended.push_back(it->second.channel);
        keep_alive_due_.erase({it->second.next_keep_alive, job_id, it->first});
        it = job->second.erase(it);
      }
      if (job->second.empty()) signal_streams_.erase(job);
    }
    if (auto it = notify_switch_.find(job_id); it != notify_switch_.end()) {
      switch_ended = std::move(it->second);
      notify_switch_.erase(it);
    }
    if (auto it = notify_stress_.find(job_id); it != notify_stress_.end()) {
      stress_ended = std::move(it->second);
      notify_stress_.erase(it);
    }
    // §6.6: a reset discards the queued OM messages (waiting operators stay).
    if (auto it = switch_om_.find(job_id); it != switch_om_.end()) {
      om_metrics_.dropped_closed.Increment(it->second.pending.size());
      it->second.pending.clear();
    }
    if (auto it = stress_om_.find(job_id); it != stress_om_.end()) {
      om_metrics_.dropped_closed.Increment(it->second.pending.size());
      it->second.pending.clear();
    }
  }
  // §2.3: the server ends the stream with status OK; what was queued is still written.
  for (auto& c : signal_ended) c->Close(grpc::Status::OK);
  if (switch_ended != nullptr) switch_ended->Close(grpc::Status::OK);
  if (stress_ended != nullptr) stress_ended->Close(grpc::Status::OK);
}

// ---- tickets ----

uint64_t RecoverySink::AddTicket(Answer answer) {
  absl::MutexLock lock(&mu_);
  const uint64_t ticket = ++next_ticket_;
  tickets_.emplace(ticket, std::move(answer));
  return ticket;
}

bool RecoverySink::CancelTicket(uint64_t ticket) {
  absl::MutexLock lock(&mu_);
  return tickets_.erase(ticket) > 0;
}

size_t RecoverySink::PendingTickets() const {
  absl::MutexLock lock(&mu_);
  return tickets_.size();
}

void RecoverySink::Reply(uint64_t ticket, int32_t code, const std::string& info) {
  Answer answer;
  {
    absl::MutexLock lock(&mu_);
    auto it = tickets_.find(ticket);
    if (it == tickets_.end()) return;  // the caller went away
    answer = std::move(it->second);
    tickets_.erase(it);
  }
  answer(code, info);
}

void RecoverySink::CloseAll() {
  std::vector<std::shared_ptr<SignalChannel>> signals;
  std::vector<std::shared_ptr<SwitchChannel>> switches;
  std::vector<std::shared_ptr<StressChannel>> stresses;
  std::vector<std::shared_ptr<SwitchOmChannel>> switch_om;
  std::vector<std::shared_ptr<StressOmChannel>> stress_om;
  std::map<uint64_t, Answer> tickets;
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    for (auto& [job, streams] : signal_streams_) {
      for (auto& [id, s] : streams) signals.push_back(s.channel);
    }
    signal_streams_.clear();
    keep_alive_due_.clear();
    for (auto& [job, c] : notify_switch_) switches.push_back(c);
    notify_switch_.clear();
    for (auto& [job, c] : notify_stress_) stresses.push_back(c);
    notify_stress_.clear();
    for (auto& [job, box] : switch_om_) {
      if (box.waiter != nullptr) switch_om.push_back(box.waiter);
    }
    switch_om_.clear();
    for (auto& [job, box] : stress_om_) {
      if (box.waiter != nullptr) stress_om.push_back(box.waiter);
    }
    stress_om_.clear();
    tickets.swap(tickets_);
  }
  const grpc::Status stopping(grpc::StatusCode::UNAVAILABLE, "clusterd is stopping");
  for (auto& c : signals) c->Close(stopping);
  for (auto& c : switches) c->Close(stopping);
  for (auto& c : stresses) c->Close(stopping);
  for (auto& c : switch_om) c->Close(stopping);
  for (auto& c : stress_om) c->Close(stopping);
  for (auto& [ticket, answer] : tickets) {
    answer(recovery::kCodeServerInnerError, "clusterd is stopping");
  }
}

}  // namespace clusterd::server
