#include "sim/sim_pingmesh.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/json_util.h"

namespace clusterd::sim {
namespace {

namespace fs = std::filesystem;

constexpr char kHeader[] =
    "pingTaskId,srcType,srcAddr,dstType,dstAddr,minDelay,maxDelay,avgDelay,minLossRate,"
    "maxLossRate,avgLossRate,timestamp\n";
constexpr absl::Duration kRotation = absl::Seconds(45);

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool NetFaultOn(const fs::path& dir) {
  std::istringstream conf(ReadFile(dir / "cathelper.conf"));
  std::string line;
  while (std::getline(conf, line)) {
    if (absl::StartsWith(line, "netFault=")) return line == "netFault=on";
  }
  return false;
}

std::string AddressOf(const nlohmann::ordered_json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  return "";
}

}  // namespace

SimPingmesh::SimPingmesh(fs::path root, absl::Duration warmup)
    : root_(std::move(root)), warmup_(warmup) {}

void SimPingmesh::SetNetPaths(std::map<std::string, NetPath> paths) {
  absl::MutexLock lock(&mu_);
  paths_ = std::move(paths);
}

void SimPingmesh::SetSlowLink(Link link, const std::string& plane, const std::string& lower,
                              double delay_ms) {
  absl::MutexLock lock(&mu_);
  const auto key = std::make_tuple(link, plane, lower);
  if (delay_ms <= 0) {
    slow_links_us_.erase(key);
  } else {
    slow_links_us_[key] = delay_ms * 1000;
  }
}

double SimPingmesh::DelayUs(const std::string& src, const std::string& dst) {
  double delay = kBaseDelayUs + static_cast<double>(++seq_ % 7);  // a little jitter
  for (const std::string& end : {src, dst}) {
    if (auto it = slow_delay_us_.find(end); it != slow_delay_us_.end()) delay = it->second;
  }
  if (slow_links_us_.empty()) return delay;
  auto a = paths_.find(src), b = paths_.find(dst);
  if (a == paths_.end() || b == paths_.end() || a->second.plane != b->second.plane ||
      a->second.rack == b->second.rack) {
    return delay;  // the probe stays inside one rack
  }
  for (const NetPath* p : {&a->second, &b->second}) {
    auto up = slow_links_us_.find(std::make_tuple(Link::kRackToL1, p->plane, p->rack));
    if (up != slow_links_us_.end()) delay = std::max(delay, up->second);
    if (a->second.l1 == b->second.l1) continue;  // turns at the shared L1 switch
    up = slow_links_us_.find(std::make_tuple(Link::kL1ToL2, p->plane, p->l1));
    if (up != slow_links_us_.end()) delay = std::max(delay, up->second);
  }
  return delay;
}

void SimPingmesh::SetSlowNpu(uint32_t sdid, double delay_ms) {
  absl::MutexLock lock(&mu_);
  if (delay_ms <= 0) {
    slow_delay_us_.erase(std::to_string(sdid));
  } else {
    slow_delay_us_[std::to_string(sdid)] = delay_ms * 1000;
  }
}

int64_t SimPingmesh::rows_written() const {
  absl::MutexLock lock(&mu_);
  return rows_;
}

absl::Status SimPingmesh::Probe(absl::Time now) {
  const fs::path cluster = root_ / "cluster";
  std::error_code ec;
  if (!fs::is_directory(cluster, ec)) return absl::OkStatus();
  for (const fs::directory_entry& pod : fs::directory_iterator(cluster, ec)) {
    const std::string name = pod.path().filename().string();
    if (!pod.is_directory() || !absl::StartsWith(name, "super-pod-")) continue;
    if (!NetFaultOn(pod.path())) continue;
    for (const fs::directory_entry& f : fs::directory_iterator(pod.path(), ec)) {
      const std::string file = f.path().filename().string();
      if (!absl::StartsWith(file, "ping_list_") || !absl::EndsWith(file, ".json")) continue;
      const std::string server = file.substr(10, file.size() - 10 - 5);
      if (absl::Status s = ProbeServer(pod.path(), server, now); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::Status SimPingmesh::ProbeServer(const fs::path& dir, const std::string& server,
                                      absl::Time now) {
  absl::StatusOr<nlohmann::ordered_json> list =
      ParseJson(ReadFile(dir / absl::StrCat("ping_list_", server, ".json")), "ping list");
  // clusterd may be rewriting the list; the next round reads it again.
  if (!list.ok() || !list->is_array()) return absl::OkStatus();
  const fs::path csv = dir / absl::StrCat("ping_result_", server, ".csv");
  absl::MutexLock lock(&mu_);
  auto started = file_started_.find(csv.string());
  std::error_code ec;
  std::string text;
  const bool fresh =
      started == file_started_.end() || !fs::exists(csv, ec) || now - started->second >= kRotation;
  if (fresh) {
    if (fs::exists(csv, ec)) fs::rename(csv, fs::path(csv.string() + "-bak"), ec);
    text = kHeader;
    file_started_[csv.string()] = now;
  }
  // The round's stamps: the warm-up history the first time this server is probed, then the
  // probe itself, `warmup_` ahead.
  std::vector<absl::Time> stamps;
  if (warmup_ > absl::ZeroDuration() && warmed_up_.insert(csv.string()).second) {
    for (absl::Duration d; d < warmup_; d += kProbeInterval) stamps.push_back(now + d);
  }
  stamps.push_back(now + warmup_);
  for (absl::Time stamp : stamps) {
    const int64_t ts = absl::ToUnixMillis(stamp);
    for (const auto& task : *list) {
      if (!task.is_object() || !task.contains("pingList") || !task["pingList"].is_array()) continue;
      for (const auto& path : task["pingList"]) {
        if (!path.is_object()) continue;
        const std::string src = AddressOf(path.value("srcAddr", nlohmann::ordered_json()));
        const std::string dst = AddressOf(path.value("dstAddr", nlohmann::ordered_json()));
        if (src.empty() || dst.empty()) continue;
        const double delay = DelayUs(src, dst);
        absl::StrAppendFormat(&text, "0,%d,%s,%d,%s,%.0f,%.0f,%.0f,0.000,0.000,0.000,%d\n",
                              path.value("srcType", 0), src, path.value("dstType", 0), dst, delay,
                              delay, delay, ts);
        ++rows_;
      }
    }
  }
  if (fresh) {
    // A new file appears whole (the warm-up history can be large), never as a bare header.
    const fs::path tmp = csv.string() + ".tmp";
    std::ofstream(tmp) << text;
    fs::rename(tmp, csv, ec);
    if (ec) {
      return absl::InternalError(absl::StrCat("cannot write ", csv.string(), ": ", ec.message()));
    }
    return absl::OkStatus();
  }
  std::ofstream out(csv, std::ios::app);
  out << text;
  if (!out) return absl::InternalError(absl::StrCat("cannot append to ", csv.string()));
  return absl::OkStatus();
}

}  // namespace clusterd::sim
