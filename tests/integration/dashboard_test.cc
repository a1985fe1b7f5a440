// The dashboard end to end: a real clusterd on a `dir` store, a simulated node (npu-agent logic)
// and a job with a recovery client; the page is loaded in headless Chromium, a public fault is
// injected with clusterctl, and the heat-map cell of the NPU and the job's recovery state must
// change on the page. Screenshots go to the test output folder.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <regex>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/recover_client.h"
#include "client/training_agent_driver.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "sim/clusterd_process.h"
#include "sim/mini_scheduler.h"
#include "sim/sim_nodes.h"
#include "test_env.h"

namespace clusterd {
namespace dashboard_test {

std::string Chromium() {
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return "";
}

std::string OutputDir() {
  std::string dir = std::string(CLUSTERD_TEST_OUTPUT_DIR) + "/dashboard";
  std::filesystem::create_directories(dir);
  return dir;
}

// The page's DOM after its scripts ran (and fetched the JSON endpoints).
std::string LoadPage(const std::string& chromium, const std::string& url,
                     const std::string& screenshot) {
  const std::string flags =
      "--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --virtual-time-budget=4000 "
      "--window-size=1400,1600";
  testing::CommandResult dom = testing::RunCommand(
      absl::StrCat("timeout 60 ", chromium, " ", flags, " --dump-dom '", url, "'", " 2>/dev/null"));
  testing::RunCommand(absl::StrCat("timeout 60 ", chromium, " ", flags,
                                   " --screenshot=", screenshot, " '", url, "' >/dev/null 2>&1"));
  // Without the page's own script, whose string literals hold the markup it draws.
  std::string out = dom.output;
  const size_t script = out.find("<script>");
  const size_t end = out.find("</script>");
  if (script != std::string::npos && end != std::string::npos && end > script) {
    out.erase(script, end - script);
  }
  return out;
}

// The value of `attribute` on the element with id `id`, "" when absent.
std::string Attribute(const std::string& dom, const std::string& id, const std::string& attribute) {
  const std::regex re("id=\"" + id + "\"[^>]*" + attribute + "=\"([^\"]*)\"");
  std::smatch m;
  return std::regex_search(dom, m, re) ? m[1].str() : "";
}
// How many times `pattern` matches in the DOM.
int Count(const std::string& dom, const std::string& pattern) {
  const std::regex re(pattern);
  return static_cast<int>(
      std::distance(std::sregex_iterator(dom.begin(), dom.end(), re), std::sregex_iterator()));
}

// Every number of the header against what the page drew, counted here from the DOM: a header
// that says "0 nodes" above two drawn nodes fails.
void ExpectHeaderMatchesDrawing(const std::string& dom) {
  const int cells = Count(dom, R"(<td class="cell )");
  const int healthy = Count(dom, R"(<td class="cell [^"]*"[^>]*data-level="healthy")");
  const struct {
    const char* id;
    int drawn;
  } counts[] = {
      {"count-nodes", Count(dom, R"(<tr class="node-row")")},
      {"count-npus", cells},
      {"count-held", Count(dom, R"(<td class="cell [^"]*"[^>]*data-job="[^"]+")")},
      {"count-faulted", cells - healthy},
      {"count-jobs", Count(dom, R"(<tr class="job-row")")},
      {"count-recovering", Count(dom, R"(<tr class="episode-row"[^>]*data-state="recovering")")},
      {"count-offenders", Count(dom, R"(<tr class="offender-row"[^>]*data-offender="true")")},
  };
  for (const auto& c : counts) {
    EXPECT_EQ(Attribute(dom, c.id, "data-count"), std::to_string(c.drawn))
        << c.id << ": the header and the drawing disagree";
  }
}

// The job's row: "<faults>/<recovery cycles>/<recovery state>", "" when absent.
std::string JobState(const std::string& dom, const std::string& job) {
  const std::regex re(
      "id=\"job-" + job +
      "\" data-faults=\"([0-9]+)\" data-cycles=\"([0-9]+)\".*?data-state=\"([^\"]*)\"");
  std::smatch m;
  return std::regex_search(dom, m, re) ? m[1].str() + "/" + m[2].str() + "/" + m[3].str() : "";
}

// One request to the event stream on a raw socket (reads time out after 5 s): the status line
// and headers, and for a refused request the body. An accepted stream stays open until Abort or
// destruction.
class EventStream {
 public:
  explicit EventStream(const std::string& host_port) {
    const size_t colon = host_port.rfind(':');
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(std::stoi(host_port.substr(colon + 1))));
    if (inet_pton(AF_INET, host_port.substr(0, colon).c_str(), &addr.sin_addr) != 1) return;
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) return;
    timeval timeout{};
    timeout.tv_sec = 5;
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    if (connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) return;
    const std::string request = "GET /api/clusterd/v1/events HTTP/1.1\r\nHost: " + host_port +
                                "\r\nAccept: text/event-stream\r\nConnection: close\r\n\r\n";
    if (write(fd_, request.data(), request.size()) != static_cast<ssize_t>(request.size())) return;
    char buf[4096];
    while (response_.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = read(fd_, buf, sizeof(buf));
      if (n <= 0) return;
      response_.append(buf, static_cast<size_t>(n));
    }
    status_ = std::stoi(response_.substr(response_.find(' ') + 1, 3));
    if (status_ == 200) return;
    // Refused: the server closes the connection after the body (Connection: close).
    for (ssize_t n; (n = read(fd_, buf, sizeof(buf))) > 0;)
      response_.append(buf, static_cast<size_t>(n));
  }
  ~EventStream() {
    if (fd_ >= 0) close(fd_);
  }
  EventStream(const EventStream&) = delete;
  EventStream& operator=(const EventStream&) = delete;

  int status() const { return status_; }  // 0 when no response arrived
  const std::string& response() const { return response_; }
  // Closes with a reset, so the server's next write on the stream fails at once.
  void Abort() {
    if (fd_ < 0) return;
    linger reset{};
    reset.l_onoff = 1;
    reset.l_linger = 0;
    setsockopt(fd_, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
    close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  int status_ = 0;
  std::string response_;
};

// At most 4 event streams are open at once (each holds an HTTP worker thread): the 5th is
// refused with 503 and a reason, and once one stream is gone a new one is accepted again.
TEST(Dashboard, FifthEventStreamIsRefusedUntilOneCloses) {
  testing::TempDir dir;
  sim::ClusterdProcess::Options options;
  options.binary = CLUSTERD_BIN;
  options.work_dir = dir.path() + "/run";
  auto proc = sim::ClusterdProcess::Start(options);
  ASSERT_TRUE(proc.ok()) << proc.status();
  const std::string address = (*proc)->http_address();

  std::vector<std::unique_ptr<EventStream>> streams;
  for (int i = 0; i < 4; ++i) {
    streams.push_back(std::make_unique<EventStream>(address));
    ASSERT_EQ(streams.back()->status(), 200)
        << "stream " << i << ": " << streams.back()->response();
    EXPECT_TRUE(absl::StrContains(streams.back()->response(), "text/event-stream"))
        << streams.back()->response();
  }
  {
    EventStream fifth(address);
    EXPECT_EQ(fifth.status(), 503) << fifth.response();
    EXPECT_TRUE(absl::StrContains(fifth.response(), "too many open event streams"))
        << fifth.response();
  }

  // The server notices the closed stream at its next write (a keep-alive at the latest, every
  // 10 s) and frees the slot.
  streams.front()->Abort();
  std::unique_ptr<EventStream> again;
  const absl::Time deadline = absl::Now() + absl::Seconds(40);
  while (absl::Now() < deadline) {
    again = std::make_unique<EventStream>(address);
    if (again->status() != 503) break;
    absl::SleepFor(absl::Milliseconds(200));
  }
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->status(), 200) << again->response();

  if (HasFailure()) {
    std::ifstream log((*proc)->log_path());
    std::cerr << "---- clusterd log ----\n" << log.rdbuf() << "----\n";
  }
}

TEST(Dashboard, HeatMapAndJobStateFollowAnInjectedFault) {
  const std::string chromium = Chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (scripts/setup.sh installs it)";
  testing::TempDir dir;
  const std::string state = dir.path() + "/state";
  sim::ClusterdProcess::Options options;
  options.binary = CLUSTERD_BIN;
  options.store = "dir:" + state;
  options.work_dir = dir.path() + "/run";
  options.store_mirror = false;  // as deployed: the page reads /api/clusterd/v1 only
  auto proc = sim::ClusterdProcess::Start(options);
  ASSERT_TRUE(proc.ok()) << proc.status();
  auto store = store::OpenStore("dir:" + state);
  ASSERT_TRUE(store.ok()) << store.status();

  sim::ClusterSpec cluster;
  cluster.nodes = 2;
  cluster.npus_per_node = 8;
  sim::SimNodes nodes(**store, cluster, CLUSTERD_DATA_DIR);
  ASSERT_TRUE(nodes.Start().ok());
  sim::JobSpec job;
  job.name = "web";
  job.pods = 1;
  job.npus_per_pod = 8;
  sim::MiniScheduler scheduler(**store, Clock::Real(), cluster, {job}, nullptr);
  ASSERT_TRUE(scheduler.Start().ok());
  const auto placement = scheduler.Placements("web");
  ASSERT_EQ(placement.size(), 1u);
  const std::string node = sim::SimNodeName(placement[0].node_index);

  // The job's client: registered and subscribed, but it never reports its processes stopped, so
  // the recovery controller stays in the cycle the fault starts.
  client::AgentBehaviour behaviour;
  behaviour.never_answer = {"stopTrain", "preExitProcess"};
  behaviour.report_fault_on_pre_exit = false;
  client::TrainingAgentDriver driver(scheduler.JobUid("web"), behaviour);
  client::RecoverClient::Options copts;
  copts.address = (*proc)->grpc_address();
  copts.job_id = scheduler.JobUid("web");
  client::RecoverClient rc(copts, &driver);
  driver.Attach(&rc);
  rc.Start();
  ASSERT_TRUE(rc.WaitSubscribed(absl::Seconds(30))) << rc.stats().last_error;

  // The live feed stays closed in the browser (headless Chromium's virtual clock would wait for
  // the open event stream); the stream itself is checked below with an HTTP client.
  const std::string url = absl::StrCat("http://", (*proc)->http_address(), "/dashboard?feed=off");
  const std::string cell = absl::StrCat("cell-", node, "-3");
  std::string before;
  std::string state_before;
  for (int i = 0; i < 20 && (before.empty() || state_before.empty()); ++i) {
    const std::string dom = LoadPage(chromium, url, OutputDir() + "/before.png");
    before = Attribute(dom, cell, "data-level");
    state_before = JobState(dom, "web");
    if (before.empty() || state_before.empty()) absl::SleepFor(absl::Milliseconds(500));
  }
  EXPECT_EQ(before, "healthy");
  EXPECT_EQ(state_before, "0/0/INIT");
  {
    const std::string dom = LoadPage(chromium, url, OutputDir() + "/before.png");
    ExpectHeaderMatchesDrawing(dom);
    EXPECT_EQ(Attribute(dom, "count-nodes", "data-count"), "2");
    EXPECT_EQ(Attribute(dom, "count-npus", "data-count"), "16");
    EXPECT_EQ(Attribute(dom, "count-held", "data-count"), "8");
    // The job's NPUs are drawn as the job's, and the legend names the job.
    EXPECT_EQ(Attribute(dom, cell, "data-job"), "default/web");
    EXPECT_TRUE(absl::StrContains(dom, R"(class="legend-job" data-job="default/web")")) << dom;
    for (const char* level : {"healthy, free", "unknown (fault on", "SeparateNPU"}) {
      EXPECT_TRUE(absl::StrContains(dom, level)) << "legend lacks " << level;
    }
    const std::string other = node == "node-1" ? "node-2" : "node-1";
    EXPECT_EQ(Attribute(dom, absl::StrCat("cell-", other, "-3"), "data-job"), "");
    EXPECT_EQ(Attribute(dom, absl::StrCat("cell-", other, "-3"), "data-level"), "healthy");
    // The goodput row and the timeline of the job are there before any fault.
    EXPECT_EQ(Count(dom, R"(<tr class="goodput-row" id="goodput-web")"), 1) << dom;
    EXPECT_EQ(Count(dom, R"(<svg class="tl-row" id="tl-web")"), 1) << dom;
  }

  testing::CommandResult inject = testing::RunCommand(absl::StrCat(
      CLUSTERCTL_BIN, " --addr ", (*proc)->grpc_address(), " --http ", (*proc)->http_address(),
      " inject fault --node ", node, " --npu 3 --code 220001001"));
  ASSERT_EQ(inject.exit_code, 0) << inject.output;

  std::string after, state_after, dom;
  const std::regex episode(
      R"re(<tr class="episode-row" data-code="220001001" data-job="default/web" data-state="(waiting|recovering)")re");
  const absl::Time deadline = absl::Now() + absl::Seconds(40);
  while (absl::Now() < deadline) {
    dom = LoadPage(chromium, url, OutputDir() + "/after.png");
    after = Attribute(dom, cell, "data-level");
    state_after = JobState(dom, "web");
    // The job now has a fault on the dashboard and its recovery controller started a cycle.
    if (after == "SeparateNPU" && state_after.rfind("1/", 0) == 0 && state_after != "1/0/INIT" &&
        std::regex_search(dom, episode)) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(500));
  }
  EXPECT_EQ(after, "SeparateNPU");
  EXPECT_EQ(state_after.rfind("1/", 0), 0u) << state_after;
  EXPECT_NE(state_after, "1/0/INIT") << "the job's recovery did not move";
  EXPECT_TRUE(std::filesystem::exists(OutputDir() + "/after.png"));
  ExpectHeaderMatchesDrawing(dom);
  EXPECT_EQ(Attribute(dom, "count-faulted", "data-count"), "1");
  // The faulted NPU keeps the fault's colour and still names its job.
  EXPECT_EQ(Attribute(dom, cell, "data-job"), "default/web");
  // The fault episode (the demo's table), the node in the offender list, the fault in the
  // feed's backlog (the stream itself is closed in this page), the timeline's recovery phases.
  EXPECT_TRUE(std::regex_search(dom, episode)) << dom;
  EXPECT_EQ(Count(dom, "<tr class=\"offender-row\" data-node=\"" + node +
                           "\" data-faults=\"1\" data-offender=\"false\""),
            1)
      << dom;
  EXPECT_GE(Count(dom, R"(<div class="feed-entry occur" data-code="220001001")"), 1) << dom;
  EXPECT_GE(Count(dom, R"re(<rect class="use-(detection|decision|process_restart)")re"), 1) << dom;

  // The live feed carries the fault as a server-sent event.
  httplib::Client http("http://" + (*proc)->http_address());
  http.set_read_timeout(std::chrono::seconds(5));
  std::string events;
  httplib::Headers headers = {{"Last-Event-ID", "0"}};
  http.Get("/api/clusterd/v1/events", headers, [&](const char* data, size_t n) {
    events.append(data, n);
    return events.find("220001001") == std::string::npos;
  });
  EXPECT_TRUE(absl::StrContains(events, "event: fault")) << events;
  EXPECT_TRUE(absl::StrContains(events, "220001001")) << events;

  // The backlog: JSON, oldest first, with the sequence number to follow the stream from; a
  // stream opened ?after=0 replays it, one opened after the last entry starts quiet.
  auto recent = http.Get("/api/clusterd/v1/events/recent?limit=5");
  ASSERT_TRUE(recent) << "no answer";
  EXPECT_EQ(recent->status, 200) << recent->body;
  const nlohmann::json backlog = nlohmann::json::parse(recent->body, nullptr, false);
  ASSERT_TRUE(backlog.is_object()) << recent->body;
  EXPECT_EQ(backlog["kind"], "FaultEventList");
  ASSERT_FALSE(backlog["items"].empty()) << recent->body;
  EXPECT_LE(backlog["items"].size(), 5u);
  EXPECT_EQ(backlog["items"].back()["seq"], backlog["lastSeq"]);
  for (const char* bad : {"0", "x", "-1", "1e9", ""}) {
    auto refused = http.Get(std::string("/api/clusterd/v1/events/recent?limit=") + bad);
    ASSERT_TRUE(refused) << bad;
    EXPECT_EQ(refused->status, 400) << bad << ": " << refused->body;
    EXPECT_TRUE(absl::StrContains(refused->body, "limit")) << refused->body;
  }
  std::string replay;
  http.Get("/api/clusterd/v1/events?after=0", [&](const char* data, size_t n) {
    replay.append(data, n);
    return replay.find("220001001") == std::string::npos;
  });
  EXPECT_TRUE(absl::StrContains(replay, "220001001")) << replay;

  // The episode as JSON, by job name.
  auto episodes = http.Get("/api/clusterd/v1/episodes?job=web");
  ASSERT_TRUE(episodes);
  EXPECT_EQ(episodes->status, 200) << episodes->body;
  const nlohmann::json list = nlohmann::json::parse(episodes->body, nullptr, false);
  ASSERT_TRUE(list.is_object() && list["items"].is_array() && !list["items"].empty())
      << episodes->body;
  EXPECT_EQ(list["items"][0]["name"], "web");
  EXPECT_EQ(list["items"][0]["code"], "220001001");
  EXPECT_EQ(list["items"][0]["where"], node + "/npu3");
  // The same as clusterctl's table.
  testing::CommandResult table = testing::RunCommand(
      absl::StrCat(CLUSTERCTL_BIN, " --http ", (*proc)->http_address(), " get episodes web"));
  EXPECT_EQ(table.exit_code, 0) << table.output;
  EXPECT_TRUE(absl::StrContains(table.output, "FAULT")) << table.output;
  EXPECT_TRUE(std::regex_search(
      table.output, std::regex("220001001 SeparateNPU +" + node + "/npu3 +default/web")))
      << table.output;

  rc.Stop();
  scheduler.Stop();
  nodes.Stop();
  if (HasFailure()) {
    std::ifstream log((*proc)->log_path());
    std::cerr << "---- clusterd log ----\n" << log.rdbuf() << "----\n";
  }
}

}  // namespace dashboard_test
}  // namespace clusterd
