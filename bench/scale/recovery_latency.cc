// Scale harness for the Recover service (issue "Recovery controller", bars): a real clusterd on
// a `dir` store with N jobs (1 pod x 1 NPU each) and N subscribed streams; then, for a sample
// of jobs, the latency from ReportProcessFault to the first signal on the job's stream, and from
// a hardware fault injected into the node's npu-agent to that signal (split where the agent's
// device-info ConfigMap names the fault); and clusterd's memory per idle job. Prints
// percentiles.
//
// Reports are sampled twice, on different jobs: paced (one every --interval-ms, each on a quiet
// controller) and back to back (the next report as soon as the previous signal arrived, so each
// competes with the recoveries just started). For each, clusterd's own share (report posted to
// the job's controller -> signal queued on its stream) is read from its histogram
// clusterd_recovery_first_signal_seconds on /metrics.
//
//   build/bench/recovery_scale --jobs 1000 --samples 200
#include <fcntl.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "agent/agent_event.h"
#include "client/channel.h"
#include "common/cli_parse.h"
#include "common/lock_order_checks.h"
#include "httplib.h"
#include "model/config_map_names.h"
#include "nlohmann/json.hpp"
#include "recover.grpc.pb.h"
#include "sim/clusterd_process.h"
#include "sim/mini_scheduler.h"
#include "sim/sim_nodes.h"
#include "store/object_store.h"

namespace {

using clusterd::sim::JobSpec;

long RssKb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

// One job's subscription, read with gRPC's callback API: the arrival of each non-keep-alive
// signal is stamped in OnReadDone, on the thread that read it off the connection (a blocking
// reader per job would add 1,000 threads and a hand-off to each sample).
constexpr int kConnectAttempts = 5;
std::atomic<int> connect_retries{0};

class Subscriber final : public grpc::ClientReadReactor<::ProcessManageSignal> {
 public:
  Subscriber(std::shared_ptr<grpc::Channel> channel, std::string job_id)
      : stub_(::Recover::NewStub(channel)), job_id_(std::move(job_id)) {}
  ~Subscriber() override {
    if (!started_) return;
    ctx_.TryCancel();
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&done_));
  }
  bool Connect() {
    info_.set_jobid(job_id_);
    info_.set_role("taskd");
    // As the real client does: a call that fails (its connection broke, the server was busy) is
    // tried again, a few times, half a second apart. The retries are counted and reported.
    for (auto call : {&::Recover::Stub::Init, &::Recover::Stub::Register}) {
      bool done = false;
      for (int attempt = 0; attempt < kConnectAttempts && !done; ++attempt) {
        if (attempt > 0) {
          connect_retries.fetch_add(1);
          absl::SleepFor(absl::Milliseconds(500));
        }
        grpc::ClientContext ctx;
        ::Status answer;
        grpc::Status status = ((*stub_).*call)(&ctx, info_, &answer);
        done = status.ok() && answer.code() == 0;
        if (!done) {
          std::fprintf(stderr, "job %s: %s: [%d %s] code %d\n", job_id_.c_str(),
                       call == &::Recover::Stub::Init ? "Init" : "Register",
                       static_cast<int>(status.error_code()), status.error_message().c_str(),
                       answer.code());
        }
      }
      if (!done) return false;
    }
    started_ = true;
    stub_->async()->SubscribeProcessManageSignal(&ctx_, &info_, this);
    StartRead(&signal_);
    StartCall();
    return true;
  }
  void OnReadDone(bool ok) override {
    if (!ok) return;  // OnDone follows
    if (signal_.signaltype() != "keep-alive") {
      const absl::Time now = absl::Now();
      absl::MutexLock lock(&mu_);
      arrivals_.push_back(now);
    }
    StartRead(&signal_);
  }
  void OnDone(const grpc::Status& status) override {
    absl::MutexLock lock(&mu_);
    done_ = true;
    end_ = status;
    ended_at_ = absl::Now();
  }
  // How the stream ended, if it has (a stream ends only when the harness cancels it or the
  // connection breaks).
  std::optional<std::pair<grpc::Status, absl::Time>> Ended() {
    absl::MutexLock lock(&mu_);
    if (!done_) return std::nullopt;
    return std::make_pair(end_, ended_at_);
  }
  // The first signal after `since`, waiting up to `timeout`.
  std::optional<absl::Time> FirstAfter(absl::Time since, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    std::optional<absl::Time> found;
    auto ready = [&] {
      for (absl::Time t : arrivals_) {
        if (t >= since) {
          found = t;
          return true;
        }
      }
      return false;
    };
    mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
    return found;
  }
  ::Recover::Stub& stub() { return *stub_; }
  const std::string& job_id() const { return job_id_; }

 private:
  std::unique_ptr<::Recover::Stub> stub_;
  std::string job_id_;
  grpc::ClientContext ctx_;
  ::ClientInfo info_;
  ::ProcessManageSignal signal_;
  bool started_ = false;
  absl::Mutex mu_;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status end_ ABSL_GUARDED_BY(mu_);
  absl::Time ended_at_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Time> arrivals_ ABSL_GUARDED_BY(mu_);
};

// Streams that have ended (each stays open until the harness cancels it); with `describe`, how
// they ended, grouped by status.
int EndedStreams(const std::vector<std::unique_ptr<Subscriber>>& subs, absl::Time since,
                 bool describe) {
  std::map<std::string, std::pair<int, double>> by_status;  // count, first end (s)
  int ended = 0;
  for (const auto& s : subs) {
    auto end = s->Ended();
    if (!end.has_value()) continue;
    ++ended;
    auto& [count, first] =
        by_status[absl::StrCat(end->first.error_code(), " ", end->first.error_message())];
    const double at = absl::ToDoubleSeconds(end->second - since);
    first = count++ == 0 ? at : std::min(first, at);
  }
  if (describe) {
    for (const auto& [status, count_first] : by_status) {
      std::printf("  %d streams ended with [%s], the first %.1f s after subscribing\n",
                  count_first.first, status.c_str(), count_first.second);
    }
  }
  return ended;
}

// Jobs clusterd's registry reports as running (GET /api/clusterd/v1/jobs), -1 when unreachable.
int RunningJobs(const std::string& http_address) {
  httplib::Client http("http://" + http_address);
  auto res = http.Get("/api/clusterd/v1/jobs");
  if (!res || res->status != 200) return -1;
  auto body = nlohmann::json::parse(res->body, nullptr, false);
  if (!body.is_object() || !body.contains("items") || !body["items"].is_array()) return -1;
  int running = 0;
  for (const auto& job : body["items"]) {
    if (job.is_object() && job.value("status", "") == "running") ++running;
  }
  return running;
}

// What one durable object write costs the directory's file system, as the dir store makes it:
// write a temp file, fsync it, rename it over the object, fsync the directory. Milliseconds.
std::vector<double> DurableWriteCosts(const std::string& dir, int n) {
  std::vector<double> ms;
  const std::string text(2048, 'x');
  const std::string temp = dir + "/.probe.tmp", target = dir + "/probe.json";
  for (int i = 0; i < n; ++i) {
    const absl::Time start = absl::Now();
    int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) break;
    const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    const bool synced = fsync(fd) == 0;
    close(fd);
    if (!written || !synced || rename(temp.c_str(), target.c_str()) != 0) break;
    int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) break;
    fsync(dfd);
    close(dfd);
    ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - start));
  }
  unlink(target.c_str());
  return ms;
}

// Whether the job's controller holds a fault rank (GET /api/clusterd/v1/recovery/<job>).
bool ControllerHasFault(httplib::Client& http, const std::string& job_id) {
  auto res = http.Get(("/api/clusterd/v1/recovery/" + job_id).c_str());
  if (!res || res->status != 200) return false;
  auto body = nlohmann::json::parse(res->body, nullptr, false);
  return body.is_object() && body.contains("faultRanks") && body["faultRanks"].is_array() &&
         !body["faultRanks"].empty();
}

// A histogram of clusterd's /metrics: cumulative counts by upper bound (seconds), +Inf last.
using Buckets = std::vector<std::pair<double, double>>;

Buckets ServerHistogram(httplib::Client& http, const std::string& name) {
  Buckets buckets;
  auto res = http.Get("/metrics");
  if (!res || res->status != 200) return buckets;
  const std::string prefix = name + "_bucket{le=\"";
  std::istringstream in(res->body);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    const size_t quote = line.find('"', prefix.size());
    const size_t space = line.rfind(' ');
    if (quote == std::string::npos || space == std::string::npos) continue;
    const std::string le = line.substr(prefix.size(), quote - prefix.size());
    const double bound = le == "+Inf" ? HUGE_VAL : std::strtod(le.c_str(), nullptr);
    buckets.emplace_back(bound, std::strtod(line.c_str() + space + 1, nullptr));
  }
  return buckets;
}

// Percentiles of what a histogram counted between two scrapes, as the upper bound of the
// bucket that holds them (so "<= x ms").
void PrintServerShare(const char* what, Buckets before, const Buckets& after) {
  if (before.empty()) {  // not observed yet: every bucket at zero
    for (const auto& [bound, count] : after) before.emplace_back(bound, 0);
  }
  if (after.empty() || after.size() != before.size()) {
    std::printf("%-50s not exposed\n", what);
    return;
  }
  const double count = after.back().second - before.back().second;
  if (count <= 0) {
    std::printf("%-50s no samples\n", what);
    return;
  }
  auto at = [&](double p) {
    for (size_t i = 0; i < after.size(); ++i) {
      if (after[i].second - before[i].second >= p * count) return after[i].first * 1000;
    }
    return HUGE_VAL;
  };
  std::printf("%-50s n=%.0f  p50 <= %.2f ms  p90 <= %.2f ms  p99 <= %.2f ms\n", what, count,
              at(0.50), at(0.90), at(0.99));
}

void PrintPercentiles(const char* what, std::vector<double> ms) {
  if (ms.empty()) {
    std::printf("%-50s no samples\n", what);
    return;
  }
  std::sort(ms.begin(), ms.end());
  auto at = [&](double p) {
    return ms[std::min(ms.size() - 1, static_cast<size_t>(p * ms.size()))];
  };
  std::printf("%-50s n=%zu  p50 %.2f ms  p90 %.2f ms  p99 %.2f ms  max %.2f ms\n", what, ms.size(),
              at(0.50), at(0.90), at(0.99), ms.back());
}

}  // namespace

int main(int argc, char** argv) {
  clusterd::SkipRuntimeLockOrderChecks();
  setvbuf(stdout, nullptr, _IOLBF, 0);
  CLI::App app{"recovery_scale: Recover-service latency and memory with many jobs"};
  int jobs = 1000, samples = 200, hardware_samples = 20, interval_ms = 20;
  std::string clusterd_binary = clusterd::sim::FindSiblingBinary("clusterd");
  std::string data_dir = CLUSTERD_DATA_DIR;
  app.add_option("--jobs", jobs, "Jobs (and streams)")->capture_default_str();
  app.add_option("--samples", samples, "ReportProcessFault samples, paced and again back to back")
      ->capture_default_str();
  app.add_option("--hardware-samples", hardware_samples, "Hardware-fault samples")
      ->capture_default_str();
  app.add_option("--interval-ms", interval_ms, "Pause between paced ReportProcessFault samples")
      ->capture_default_str();
  app.add_option("--clusterd", clusterd_binary, "clusterd binary");
  std::string parent = "/tmp";
  app.add_option("--state-parent", parent,
                 "Directory that receives the run's store (e.g. /dev/shm: fsync costs nothing on "
                 "tmpfs, which separates clusterd's own latency from the disk's)")
      ->capture_default_str();
  bool tls = false;
  app.add_flag("--tls", tls,
               "Talk to clusterd's TLS port (a certificate made with openssl for the run) "
               "instead of plaintext, to measure what TLS costs on the report-to-signal path");
  int streams_per_connection = 32;
  app.add_option("--streams-per-connection", streams_per_connection,
                 "Jobs whose streams share one connection (at most 64, the server's limit)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  bool client_keepalive = false;
  app.add_flag("--client-keepalive", client_keepalive,
               "Open the connections as the real clients do: keepalive ping every 3 s, 1 s ack "
               "timeout, pings without calls, one ping without data (recovery-protocol.md §1.3)");
  int hold_s = 0;
  app.add_option("--hold-s", hold_s,
                 "Keep every stream open this long after subscribing, counting streams that end")
      ->capture_default_str();
  bool agents_on_all_nodes = false;
  app.add_flag("--agents-on-all-nodes", agents_on_all_nodes,
               "Run an npu-agent for every simulated node (by default only the nodes of the "
               "hardware-fault samples run one; the others write their ConfigMaps once). Each "
               "running agent is a thread and three store watches in this process: at 2,500 "
               "nodes, 10,000 threads woken by every store change starve the harness's own "
               "subscribers");
  std::string samples_file;
  app.add_option("--samples-file", samples_file,
                 "Also write every ReportProcessFault sample to this file, one line each: "
                 "\"paced|burst <start, CLOCK_MONOTONIC ns> <ms>\" (to line the slow ones up with "
                 "`perf sched record -k CLOCK_MONOTONIC`)");
  bool keep_state = false;
  app.add_flag("--keep-state", keep_state,
               "Keep the run's directory (store, clusterd.log) instead of removing it");
  if (std::optional<int> rc = clusterd::ParseFlags(app, argc, argv)) return *rc;
  if (2 * samples + hardware_samples > jobs) {
    std::fprintf(stderr, "2 x --samples + --hardware-samples must not exceed --jobs\n");
    return 2;
  }
  if (clusterd_binary.empty()) clusterd_binary = std::string(CLUSTERD_BIN);

  struct rlimit limit;
  getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);

  std::error_code made;
  std::filesystem::create_directories(parent, made);
  std::string tmpl = parent + "/recovery-scale-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) {
    std::fprintf(stderr, "cannot create a directory in %s\n", parent.c_str());
    return 2;
  }
  const std::string dir = tmpl;
  PrintPercentiles("one durable file write in --state-parent", DurableWriteCosts(dir, 200));
  clusterd::sim::ClusterdProcess::Options options;
  options.binary = clusterd_binary;
  options.store = "dir:" + dir + "/store";
  options.work_dir = dir + "/run";
  options.extra_args = {"--log-level", "warn"};
  // One stream per job: beyond the original's 10,000 served jobs, clusterd is told to serve all.
  if (jobs > 10000) {
    options.extra_args.insert(options.extra_args.end(),
                              {"--max-recovery-jobs", std::to_string(jobs)});
  }
  if (tls) {
    std::string make_cert = absl::StrCat(
        "cd ", dir,
        " && openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=clusterd "
        "-addext subjectAltName=IP:127.0.0.1 -keyout tls.key -out tls.crt 2>/dev/null");
    if (std::system(make_cert.c_str()) != 0) {
      std::fprintf(stderr, "openssl failed\n");
      return 1;
    }
    options.extra_args.insert(options.extra_args.end(),
                              {"--grpc-tls-listen", "127.0.0.1:0", "--grpc-tls-cert",
                               dir + "/tls.crt", "--grpc-tls-key", dir + "/tls.key"});
  }
  auto proc = clusterd::sim::ClusterdProcess::Start(options);
  if (!proc.ok()) {
    std::fprintf(stderr, "%s\n", proc.status().ToString().c_str());
    return 1;
  }
  std::string grpc_address = (*proc)->grpc_address();
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (tls) {
    std::ifstream info_file(dir + "/run/listen.json");
    nlohmann::json info = nlohmann::json::parse(info_file, nullptr, false);
    grpc_address = info.value("grpc_tls", "");
    std::ifstream ca(dir + "/tls.crt");
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs.assign(std::istreambuf_iterator<char>(ca), std::istreambuf_iterator<char>());
    credentials = grpc::SslCredentials(ssl);
    std::printf("TLS port %s\n", grpc_address.c_str());
  }
  const pid_t pid = (*proc)->process().pid();
  auto store = clusterd::store::OpenStore("dir:" + dir + "/store");
  if (!store.ok()) return 1;

  clusterd::sim::ClusterSpec cluster;
  cluster.npus_per_node = 8;
  cluster.nodes = (jobs + 7) / 8;
  std::vector<JobSpec> specs;
  for (int i = 0; i < jobs; ++i) {
    JobSpec j;
    j.name = absl::StrCat("job-", i);
    j.pods = 1;
    j.npus_per_pod = 1;
    j.strategies = {"recover", "dump", "exit"};
    specs.push_back(j);
  }
  // Each job is sampled once: a fixed permutation of the jobs, paced reports first, then back
  // to back, then hardware faults.
  auto job_of = [&](int i) { return static_cast<int>((static_cast<int64_t>(i) * 7919) % jobs); };
  // Only the nodes of the hardware samples need a running agent: the scheduler places the
  // jobs first, then the nodes start (its placement reads device-info only to avoid faulty
  // NPUs, and there are none yet).
  absl::Time t = absl::Now();
  clusterd::sim::MiniScheduler scheduler(**store, clusterd::Clock::Real(), cluster, specs, nullptr);
  if (!scheduler.Start().ok()) return 1;
  std::set<int> agent_nodes;
  for (int i = 2 * samples; i < 2 * samples + hardware_samples; ++i) {
    for (const auto& p : scheduler.Placements(specs[job_of(i)].name))
      agent_nodes.insert(p.node_index);
  }
  clusterd::sim::SimNodes nodes(**store, cluster, data_dir);
  const bool started =
      agents_on_all_nodes
          ? nodes.Start().ok()
          : nodes.Start([&agent_nodes](int node) { return agent_nodes.contains(node); }).ok();
  if (!started) return 1;
  const absl::Time written_at = absl::Now();
  std::printf("%d nodes, %d jobs written in %.1f s\n", cluster.nodes, jobs,
              absl::ToDoubleSeconds(written_at - t));
  absl::SleepFor(absl::Seconds(3));
  const long rss_before = RssKb(pid);

  // Each connection carries at most 64 concurrent streams (the server's limit, as in the
  // original); real jobs each have their own TaskD connection. Here several jobs share one.
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int i = 0; i < (jobs + streams_per_connection - 1) / streams_per_connection; ++i) {
    grpc::ChannelArguments args;
    args.SetInt("grpc.channel_id", i);  // distinct channels, distinct connections
    if (client_keepalive) {
      args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 3000);
      args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 1000);
      args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
      args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 1);
    }
    channels.push_back(grpc::CreateCustomChannel(grpc_address, credentials, args));
  }
  t = absl::Now();
  std::vector<std::unique_ptr<Subscriber>> subs;
  for (int i = 0; i < jobs; ++i) {
    auto s = std::make_unique<Subscriber>(channels[i % channels.size()],
                                          scheduler.JobUid(specs[i].name));
    if (!s->Connect()) {
      std::fprintf(stderr, "job %d: Init/Register failed\n", i);
      return 1;
    }
    subs.push_back(std::move(s));
  }
  std::printf(
      "%d jobs registered and subscribed over %zu connections in %.1f s (%d calls "
      "retried)\n",
      jobs, channels.size(), absl::ToDoubleSeconds(absl::Now() - t), connect_retries.load());
  const absl::Time subscribed_at = absl::Now();
  std::printf("  streams ended while the others registered: %d\n",
              EndedStreams(subs, subscribed_at, true));
  for (int waited = 0; waited < hold_s; waited += 10) {
    absl::SleepFor(absl::Seconds(std::min(10, hold_s - waited)));
    std::printf("  after %3d s: %d of %d streams ended\n", std::min(waited + 10, hold_s),
                EndedStreams(subs, subscribed_at, false), jobs);
  }
  absl::SleepFor(absl::Seconds(3));
  const long rss_after = RssKb(pid);
  std::printf(
      "clusterd RSS: %ld KiB before the streams, %ld KiB with %d subscribed jobs: %.1f KiB per "
      "idle job\n",
      rss_before, rss_after, jobs, static_cast<double>(rss_after - rss_before) / jobs);

  // Faults reach a job's controller once clusterd's registry knows the job's pods.
  // Asked at least once: after a long hold the 300 s have passed before the first look.
  int running = RunningJobs((*proc)->http_address());
  while (running < jobs && absl::Now() - written_at < absl::Seconds(300)) {
    absl::SleepFor(absl::Milliseconds(200));
    running = RunningJobs((*proc)->http_address());
  }
  std::printf("clusterd's registry: %d of %d jobs running %.1f s after they were written\n",
              running, jobs, absl::ToDoubleSeconds(absl::Now() - written_at));

  std::ofstream sample_log;
  if (!samples_file.empty()) sample_log.open(samples_file);
  auto report = [&](int i) -> std::optional<double> {
    Subscriber& s = *subs[job_of(i)];
    ::ProcessFaultRequest request;
    request.set_jobid(s.job_id());
    ::FaultRank* rank = request.add_faultranks();
    rank->set_rankid("0");
    rank->set_faulttype("1");
    grpc::ClientContext ctx;
    ::Status answer;
    timespec mono{};
    clock_gettime(CLOCK_MONOTONIC, &mono);
    const absl::Time start = absl::Now();
    if (!s.stub().ReportProcessFault(&ctx, request, &answer).ok()) return std::nullopt;
    auto first = s.FirstAfter(start, absl::Seconds(30));
    if (!first.has_value()) return std::nullopt;
    const double ms = absl::ToDoubleMilliseconds(*first - start);
    if (sample_log.is_open()) {
      sample_log << (i < samples ? "paced " : "burst ")
                 << static_cast<int64_t>(mono.tv_sec) * 1000000000 + mono.tv_nsec << ' ' << ms
                 << '\n';
    }
    return ms;
  };
  // clusterd's own share of each report: from the report reaching the job's controller to its
  // signal queued on the stream, as clusterd's histogram counts it (the transport excluded).
  httplib::Client http("http://" + (*proc)->http_address());
  const std::string share = "clusterd_recovery_first_signal_seconds";
  // Of that share, the wait of the report for its job's strand (a worker to take it up).
  const std::string wait = "clusterd_recovery_queue_wait_seconds";
  std::vector<double> paced, burst;
  const Buckets before_paced = ServerHistogram(http, share);
  const Buckets wait_before_paced = ServerHistogram(http, wait);
  for (int i = 0; i < samples; ++i) {
    if (auto ms = report(i)) paced.push_back(*ms);
    absl::SleepFor(absl::Milliseconds(interval_ms));
  }
  const Buckets before_burst = ServerHistogram(http, share);
  const Buckets wait_before_burst = ServerHistogram(http, wait);
  for (int i = samples; i < 2 * samples; ++i) {
    if (auto ms = report(i)) burst.push_back(*ms);
  }
  const Buckets after_burst = ServerHistogram(http, share);
  const Buckets wait_after_burst = ServerHistogram(http, wait);
  std::vector<double> hardware, written, known;
  for (int i = 2 * samples; i < 2 * samples + hardware_samples; ++i) {
    const int job = job_of(i);
    Subscriber& s = *subs[job];
    auto placement = scheduler.Placements(specs[job].name);
    if (placement.empty()) continue;
    clusterd::faults::NpuFaultEvent event;
    event.npu = placement[0].npus[0];
    event.code = 0x80E3A201;  // SeparateNPU
    const clusterd::store::ObjectKey device_info{
        std::string(clusterd::store::kConfigMaps),
        std::string(clusterd::model::kDeviceInfoNamespace),
        std::string(clusterd::model::kDeviceInfoPrefix) +
            clusterd::sim::SimNodeName(placement[0].node_index)};
    const absl::Time start = absl::Now();
    if (!nodes.Inject(placement[0].node_index, event)) {
      std::printf("job %s placed on node %d, which runs no agent: sample skipped\n",
                  specs[job].name.c_str(), placement[0].node_index);
      continue;
    }
    // Split at the store: the node's device-info ConfigMap names the fault (the npu-agent's
    // share), then the controller holds it (clusterd's). Both polled every millisecond.
    // The harness's own store may see the write after clusterd has acted on it (its watcher is
    // another process's): wait for both, each timed once.
    bool seen_in_store = false, controller_has_it = false;
    while (absl::Now() - start < absl::Seconds(10) && !(seen_in_store && controller_has_it)) {
      if (!seen_in_store) {
        auto cm = (*store)->Get(device_info);
        if (cm.ok() && cm->dump().find("80E3A201") != std::string::npos) {
          seen_in_store = true;
          written.push_back(absl::ToDoubleMilliseconds(absl::Now() - start));
        }
      }
      if (!controller_has_it && ControllerHasFault(http, s.job_id())) {
        controller_has_it = true;
        known.push_back(absl::ToDoubleMilliseconds(absl::Now() - start));
      }
      absl::SleepFor(absl::Milliseconds(1));
    }
    auto first = s.FirstAfter(start, absl::Seconds(30));
    if (first.has_value()) hardware.push_back(absl::ToDoubleMilliseconds(*first - start));
  }
  PrintPercentiles("ReportProcessFault -> first signal, paced", paced);
  PrintPercentiles("ReportProcessFault -> first signal, back to back", burst);
  PrintServerShare("  of which in clusterd (its histogram), paced", before_paced, before_burst);
  PrintServerShare("  of which in clusterd (its histogram), back to back", before_burst,
                   after_burst);
  PrintServerShare("    events waiting for their job's strand, paced", wait_before_paced,
                   wait_before_burst);
  PrintServerShare("    events waiting for their job's strand, back to back", wait_before_burst,
                   wait_after_burst);
  PrintPercentiles("hardware fault (npu-agent) -> device-info in the store", written);
  PrintPercentiles("hardware fault (npu-agent) -> controller has it", known);
  PrintPercentiles("hardware fault (npu-agent) -> first signal", hardware);
  const int ended = EndedStreams(subs, subscribed_at, true);
  std::printf("streams ended before the harness closed them: %d of %d\n", ended, jobs);
  subs.clear();
  scheduler.Stop();
  nodes.Stop();
  (void)(*proc)->Stop();
  std::error_code ec;
  if (keep_state) {
    std::printf("state and clusterd's log kept in %s\n", dir.c_str());
  } else {
    std::filesystem::remove_all(dir, ec);
  }
  return 0;
}
