#include "client/recover_client.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "client/channel.h"
#include "common/log.h"
#include "recovery/vocabulary.h"

namespace clusterd::client {
namespace {

constexpr absl::Duration kWaitSlice = absl::Milliseconds(100);

absl::Status ToAbsl(const grpc::Status& status) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

// Transport-level failures a TaskD manager retries; an answered call (any code) is not retried.
bool Retryable(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE ||
         status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
}

}  // namespace

absl::Duration BackoffDelay(const BackoffPolicy& policy, int consecutive_failures,
                            double unit_random) {
  double seconds = absl::ToDoubleSeconds(policy.initial) *
                   std::pow(policy.multiplier, std::max(0, consecutive_failures));
  seconds = std::min(seconds, absl::ToDoubleSeconds(policy.max));
  const double factor = 1.0 + policy.jitter * (2.0 * std::clamp(unit_random, 0.0, 1.0) - 1.0);
  return absl::Seconds(std::max(0.0, seconds * factor));
}

::FaultRank RecoverClient::Fault(int64_t rank, int type) {
  ::FaultRank f;
  f.set_rankid(std::to_string(rank));
  f.set_faulttype(std::to_string(type));
  return f;
}

RecoverClient::RecoverClient(Options options, SignalHandler* handler)
    : options_(std::move(options)),
      handler_(handler),
      clock_(options_.clock != nullptr ? *options_.clock : Clock::Real()),
      channel_(options_.channel != nullptr ? options_.channel : MakeChannel(options_.address)),
      stub_(::Recover::NewStub(channel_)),
      random_(options_.seed != 0 ? options_.seed : std::random_device{}()) {}

RecoverClient::~RecoverClient() { Stop(); }

void RecoverClient::Start() {
  {
    absl::MutexLock lock(&mu_);
    if (started_) return;
    started_ = true;
  }
  dispatch_thread_ = std::thread([this] { DispatchThread(); });
  loop_thread_ = std::thread([this] { LoopThread(); });
  if (options_.health_check_period > absl::ZeroDuration()) {
    health_thread_ = std::thread([this] { HealthThread(); });
  }
}

void RecoverClient::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
    for (grpc::ClientContext* ctx : calls_) ctx->TryCancel();
    changed_.SignalAll();
  }
  for (std::thread* t : {&loop_thread_, &health_thread_, &dispatch_thread_}) {
    if (t->joinable()) t->join();
  }
}

RecoverClient::Stats RecoverClient::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

bool RecoverClient::WaitSubscribed(absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  const absl::Time deadline = absl::Now() + timeout;
  while (!stats_.subscribed && !stopping_) {
    if (changed_.WaitWithDeadline(&mu_, deadline)) break;
  }
  return stats_.subscribed;
}

bool RecoverClient::WaitStreamEnds(int count, absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  const absl::Time deadline = absl::Now() + timeout;
  while (stats_.stream_ends < count && !stopping_) {
    if (changed_.WaitWithDeadline(&mu_, deadline)) break;
  }
  return stats_.stream_ends >= count;
}

bool RecoverClient::WaitForStats(const std::function<bool(const Stats&)>& pred,
                                 absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  const absl::Time deadline = absl::Now() + timeout;
  while (!pred(stats_)) {
    if (changed_.WaitWithDeadline(&mu_, deadline)) return pred(stats_);
  }
  return true;
}

bool RecoverClient::WaitOnClock(absl::Duration d) {
  const absl::Time deadline = clock_.Now() + d;
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    const absl::Duration left = deadline - clock_.Now();
    if (left <= absl::ZeroDuration()) return true;
    // Sliced so that a ManualClock moved by a test is noticed.
    changed_.WaitWithTimeout(&mu_, std::min(left, kWaitSlice));
  }
  return false;
}

std::unique_ptr<grpc::ClientContext> RecoverClient::NewContext(absl::Duration timeout) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + absl::ToChronoNanoseconds(timeout));
  absl::MutexLock lock(&mu_);
  if (stopping_) ctx->TryCancel();
  calls_.push_back(ctx.get());
  return ctx;
}

void RecoverClient::Forget(grpc::ClientContext* ctx) {
  absl::MutexLock lock(&mu_);
  calls_.erase(std::remove(calls_.begin(), calls_.end(), ctx), calls_.end());
}

template <typename Request, typename Call>
absl::StatusOr<::Status> RecoverClient::Unary(const Request& request, Call call,
                                              absl::Duration timeout, int attempts) {
  grpc::Status last;
  for (int attempt = 0; attempt < std::max(1, attempts); ++attempt) {
    if (attempt > 0 && !WaitOnClock(options_.report_retry_delay)) break;
    auto ctx = NewContext(timeout);
    ::Status response;
    last = (stub_.get()->*call)(ctx.get(), request, &response);
    Forget(ctx.get());
    if (last.ok()) return response;
    if (!Retryable(last)) break;
  }
  return ToAbsl(last);
}

absl::StatusOr<::Status> RecoverClient::Init() {
  ::ClientInfo req;
  req.set_jobid(options_.job_id);
  req.set_role(options_.role);
  return Unary(req, &::Recover::Stub::Init, options_.rpc_timeout, 1);
}

absl::StatusOr<::Status> RecoverClient::Register() {
  ::ClientInfo req;
  req.set_jobid(options_.job_id);
  req.set_role(options_.role);
  return Unary(req, &::Recover::Stub::Register, options_.rpc_timeout, 1);
}

absl::StatusOr<::Status> RecoverClient::HealthCheck() {
  ::ClientInfo req;
  req.set_jobid(options_.job_id);
  req.set_role(options_.role);
  return Unary(req, &::Recover::Stub::HealthCheck, options_.rpc_timeout, 1);
}

absl::StatusOr<::Status> RecoverClient::ReportStopComplete(
    int32_t code, const std::string& info, const std::vector<::FaultRank>& fault_ranks) {
  ::StopCompleteRequest req;
  req.set_jobid(options_.job_id);
  req.mutable_status()->set_code(code);
  req.mutable_status()->set_info(info);
  for (const auto& f : fault_ranks) *req.add_faultranks() = f;
  return Unary(req, &::Recover::Stub::ReportStopComplete, options_.report_timeout,
               options_.report_attempts);
}

absl::StatusOr<::Status> RecoverClient::ReportRecoverStrategy(
    const std::vector<std::string>& strategies, const std::vector<::FaultRank>& fault_ranks) {
  ::RecoverStrategyRequest req;
  req.set_jobid(options_.job_id);
  for (const auto& f : fault_ranks) *req.add_faultranks() = f;
  for (const auto& s : strategies) req.add_strategies(s);
  return Unary(req, &::Recover::Stub::ReportRecoverStrategy, options_.report_timeout,
               options_.report_attempts);
}

absl::StatusOr<::Status> RecoverClient::ReportRecoverStatus(
    int32_t code, const std::string& strategy, const std::vector<std::string>& isolate_rank_ids,
    const std::string& info) {
  ::RecoverStatusRequest req;
  req.set_jobid(options_.job_id);
  req.mutable_status()->set_code(code);
  req.mutable_status()->set_info(info);
  req.set_strategy(strategy);
  for (const auto& r : isolate_rank_ids) req.add_isolaterankids(r);
  return Unary(req, &::Recover::Stub::ReportRecoverStatus, options_.report_timeout,
               options_.report_attempts);
}

absl::StatusOr<::Status> RecoverClient::ReportProcessFault(
    const std::vector<::FaultRank>& fault_ranks) {
  ::ProcessFaultRequest req;
  req.set_jobid(options_.job_id);
  for (const auto& f : fault_ranks) *req.add_faultranks() = f;
  return Unary(req, &::Recover::Stub::ReportProcessFault, options_.report_timeout,
               options_.report_attempts);
}

absl::StatusOr<::Status> RecoverClient::Send(const AgentReply& reply) {
  struct Visitor {
    RecoverClient* c;
    absl::StatusOr<::Status> operator()(const StopCompleteReply& r) const {
      return c->ReportStopComplete(r.code, "stop complete", r.fault_ranks);
    }
    absl::StatusOr<::Status> operator()(const RecoverStrategyReply& r) const {
      return c->ReportRecoverStrategy(r.strategies, r.fault_ranks);
    }
    absl::StatusOr<::Status> operator()(const RecoverStatusReply& r) const {
      return c->ReportRecoverStatus(r.code, r.strategy, r.isolate_rank_ids);
    }
    absl::StatusOr<::Status> operator()(const ProcessFaultReply& r) const {
      return c->ReportProcessFault(r.fault_ranks);
    }
  };
  return std::visit(Visitor{this}, reply);
}

void RecoverClient::Enqueue(Dispatch item) {
  absl::MutexLock lock(&mu_);
  dispatch_.push_back(std::move(item));
  changed_.SignalAll();
}

bool RecoverClient::Connect() {
  auto fail = [this](const std::string& what) {
    absl::MutexLock lock(&mu_);
    stats_.last_error = what;
    ++stats_.consecutive_failures;
    changed_.SignalAll();
    LogDebug("client", "recover connect failed", {{"job", options_.job_id}, {"error", what}});
  };
  {
    absl::MutexLock lock(&mu_);
    ++stats_.init_calls;
  }
  absl::StatusOr<::Status> init = Init();
  if (!init.ok()) {
    fail(absl::StrCat("Init: ", init.status().ToString()));
    return false;
  }
  if (init->code() != recovery::kCodeOk) {
    if (init->code() == recovery::kCodeProcessRecoverEnableOff) {
      absl::MutexLock lock(&mu_);
      stats_.init_refused = true;
      changed_.SignalAll();
    }
    fail(absl::StrCat("Init: code ", init->code(), ": ", init->info()));
    return false;
  }
  {
    absl::MutexLock lock(&mu_);
    ++stats_.register_calls;
  }
  absl::StatusOr<::Status> reg = Register();
  if (!reg.ok() || reg->code() != recovery::kCodeOk) {
    fail(reg.ok() ? absl::StrCat("Register: code ", reg->code(), ": ", reg->info())
                  : absl::StrCat("Register: ", reg.status().ToString()));
    return false;
  }
  ReadStream();
  return true;
}

void RecoverClient::ReadStream() {
  ::ClientInfo req;
  req.set_jobid(options_.job_id);
  req.set_role(options_.role);
  grpc::ClientContext ctx;  // no deadline: the stream lives as long as the cycle
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    calls_.push_back(&ctx);
  }
  std::unique_ptr<grpc::ClientReader<::ProcessManageSignal>> reader =
      stub_->SubscribeProcessManageSignal(&ctx, req);
  bool opened = false;
  ::ProcessManageSignal signal;
  auto mark_open = [&] {
    if (opened) return;
    opened = true;
    absl::MutexLock lock(&mu_);
    ++stats_.subscribes;
    stats_.subscribed = true;
    stats_.consecutive_failures = 0;
    dispatch_.push_back(Subscribed{});
    changed_.SignalAll();
  };
  // The server sends nothing when the stream opens (the first keep-alive comes after 5 s), so
  // the stream counts as open at its first message, or when it ends OK without one; a refused
  // Subscribe ends with an error before any message.
  bool first = true;
  while (reader->Read(&signal)) {
    if (first) {
      mark_open();
      first = false;
    }
    bool admit = true;
    {
      absl::MutexLock lock(&mu_);
      ++stats_.signals;
      if (signal.signaltype() == recovery::kSignalKeepAlive) ++stats_.keep_alives;
    }
    if (options_.deduplicate) admit = dedup_.Admit(signal);
    if (!admit) {
      absl::MutexLock lock(&mu_);
      ++stats_.duplicates_suppressed;
      LogInfo("client", "duplicate signal suppressed",
              {{"job", options_.job_id},
               {"uuid", signal.uuid()},
               {"signalType", signal.signaltype()},
               {"changeStrategy", signal.changestrategy()}});
      continue;
    }
    Enqueue(signal);
  }
  grpc::Status status = reader->Finish();
  {
    absl::MutexLock lock(&mu_);
    calls_.erase(std::remove(calls_.begin(), calls_.end(), &ctx), calls_.end());
  }
  if (first && status.ok()) mark_open();  // a stream that ended OK without a message was open
  absl::MutexLock lock(&mu_);
  if (opened) {
    ++stats_.stream_ends;
    if (status.ok()) ++stats_.stream_ends_ok;
    stats_.subscribed = false;
  } else {
    stats_.last_error = absl::StrCat("Subscribe: ", status.error_message());
    ++stats_.consecutive_failures;
  }
  if (opened) dispatch_.push_back(StreamEnded{status});
  changed_.SignalAll();
}

void RecoverClient::LoopThread() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      if (stats_.init_refused && options_.stop_on_init_refusal) return;
    }
    Connect();
    int failures;
    double unit;
    {
      absl::MutexLock lock(&mu_);
      failures = stats_.consecutive_failures;
      unit = std::uniform_real_distribution<double>(0.0, 1.0)(random_);
    }
    // After a stream that ended normally the wait is the initial one (TaskD: 1 s).
    if (!WaitOnClock(BackoffDelay(options_.backoff, std::max(0, failures - 1), unit))) return;
  }
}

void RecoverClient::HealthThread() {
  while (WaitOnClock(options_.health_check_period)) {
    absl::StatusOr<::Status> st = HealthCheck();
    absl::MutexLock lock(&mu_);
    if (st.ok() && st->code() == recovery::kCodeOk) {
      ++stats_.health_ok;
    } else {
      ++stats_.health_failed;
    }
    changed_.SignalAll();
  }
}

void RecoverClient::DispatchThread() {
  while (true) {
    Dispatch item;
    {
      absl::MutexLock lock(&mu_);
      while (dispatch_.empty() && !stopping_) changed_.Wait(&mu_);
      if (dispatch_.empty()) return;
      item = std::move(dispatch_.front());
      dispatch_.pop_front();
    }
    if (handler_ == nullptr) continue;
    if (auto* signal = std::get_if<::ProcessManageSignal>(&item)) {
      handler_->OnSignal(*signal);
    } else if (std::holds_alternative<Subscribed>(item)) {
      handler_->OnSubscribed();
    } else {
      handler_->OnStreamEnd(std::get<StreamEnded>(item).status);
    }
  }
}

}  // namespace clusterd::client
