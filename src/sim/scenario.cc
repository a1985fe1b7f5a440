#include "sim/scenario.h"

#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cluster/repeat_offenders.h"
#include "faults/chip_profile.h"
#include "faults/fault_code_catalog.h"
#include "faults/hex_code.h"
#include "sim/a5_network.h"
#include "yaml-cpp/yaml.h"

namespace clusterd::sim {
namespace {

constexpr int kMaxNodes = 4096;
constexpr int kMaxNpus = 64;
constexpr size_t kMaxFaults = 10000;

const std::set<std::string, std::less<>> kKinds = {
    "chip",  "network", "switch",    "node",         "public",      "software",
    "storm", "slow",    "slow_link", "slow_l1_link", "slow_l2_link"};
const std::set<std::string, std::less<>> kStrategies = {"retry", "recover", "recover-in-place",
                                                        "dump",  "exit",    "elastic-training"};
const std::set<std::string, std::less<>> kAssertions = {"occur", "recover", "once"};
const std::set<std::string, std::less<>> kFaultKeys = {"at_s",
                                                       "kind",
                                                       "node",
                                                       "npu",
                                                       "npus",
                                                       "code",
                                                       "assertion",
                                                       "job",
                                                       "pod",
                                                       "rank",
                                                       "chip_id",
                                                       "port_id",
                                                       "clear_after_s",
                                                       "expect",
                                                       "label",
                                                       "magnitude",
                                                       "after_detection_s",
                                                       "plane",
                                                       "rack",
                                                       "l1"};

// Carries the file name and the node's line into every error.
class Checker {
 public:
  explicit Checker(std::string_view file) : file_(file) {}
  absl::Status Error(const YAML::Node& at, std::string_view message) const {
    return Error(at.Mark().line + 1, message);
  }
  absl::Status Error(int line, std::string_view message) const {
    return absl::InvalidArgumentError(
        absl::StrCat(file_, ":", line, ": ", absl::string_view(message.data(), message.size())));
  }
  // Keys of `map` outside `allowed` are errors: a typo must not silently change the scenario.
  absl::Status OnlyKeys(const YAML::Node& map, std::string_view what,
                        const std::set<std::string, std::less<>>& allowed) const {
    if (!map.IsMap()) return Error(map, absl::StrCat(std::string(what), " must be a mapping"));
    for (const auto& kv : map) {
      const std::string key = kv.first.as<std::string>();
      if (allowed.count(key) == 0) {
        return Error(kv.first, absl::StrCat("unknown key \"", key, "\" in ", std::string(what)));
      }
    }
    return absl::OkStatus();
  }
  template <typename T>
  absl::Status Get(const YAML::Node& map, const char* key, T* out) const {
    const YAML::Node value = map[key];
    if (!value) return absl::OkStatus();
    try {
      *out = value.as<T>();
    } catch (const YAML::Exception&) {
      return Error(value, absl::StrCat("\"", key, "\" has the wrong type"));
    }
    return absl::OkStatus();
  }

 private:
  std::string file_;
};

#define SIM_RETURN_IF_ERROR(expr)      \
  do {                                 \
    absl::Status status_ = (expr);     \
    if (!status_.ok()) return status_; \
  } while (false)

absl::Status ParseCluster(const Checker& c, const YAML::Node& node, ClusterSpec* out) {
  SIM_RETURN_IF_ERROR(c.OnlyKeys(
      node, "cluster",
      {"nodes", "npus_per_node", "chip", "nodes_per_super_pod", "pingmesh", "pingmesh_warmup_s",
       "net_planes", "nodes_per_rack", "racks_per_l1", "l1_per_l2"}));
  SIM_RETURN_IF_ERROR(c.Get(node, "nodes", &out->nodes));
  SIM_RETURN_IF_ERROR(c.Get(node, "npus_per_node", &out->npus_per_node));
  SIM_RETURN_IF_ERROR(c.Get(node, "chip", &out->chip));
  SIM_RETURN_IF_ERROR(c.Get(node, "nodes_per_super_pod", &out->nodes_per_super_pod));
  SIM_RETURN_IF_ERROR(c.Get(node, "pingmesh", &out->pingmesh));
  SIM_RETURN_IF_ERROR(c.Get(node, "pingmesh_warmup_s", &out->pingmesh_warmup_s));
  SIM_RETURN_IF_ERROR(c.Get(node, "net_planes", &out->net_planes));
  SIM_RETURN_IF_ERROR(c.Get(node, "nodes_per_rack", &out->nodes_per_rack));
  SIM_RETURN_IF_ERROR(c.Get(node, "racks_per_l1", &out->racks_per_l1));
  SIM_RETURN_IF_ERROR(c.Get(node, "l1_per_l2", &out->l1_per_l2));
  if (out->nodes < 1 || out->nodes > kMaxNodes) {
    return c.Error(node, absl::StrCat("nodes must be in [1, ", kMaxNodes, "]"));
  }
  if (out->npus_per_node < 1 || out->npus_per_node > kMaxNpus) {
    return c.Error(node, absl::StrCat("npus_per_node must be in [1, ", kMaxNpus, "]"));
  }
  if (out->chip != "Ascend910" && out->chip != "Ascend910A3" && !IsA5(*out)) {
    return c.Error(node, "chip must be Ascend910, Ascend910A3 or npu (A5)");
  }
  if (out->nodes_per_super_pod < 0) return c.Error(node, "nodes_per_super_pod must be >= 0");
  if (out->pingmesh &&
      ((out->chip != "Ascend910A3" && !IsA5(*out)) || out->nodes_per_super_pod == 0)) {
    return c.Error(node, "pingmesh needs chip Ascend910A3 or npu (A5) and nodes_per_super_pod > 0");
  }
  if (out->pingmesh_warmup_s != 0 && !out->pingmesh) {
    return c.Error(node, "pingmesh_warmup_s needs pingmesh: true");
  }
  if (out->pingmesh_warmup_s < 0 || out->pingmesh_warmup_s > 600) {
    return c.Error(node, "pingmesh_warmup_s must be in [0, 600]");
  }
  const bool layout =
      node["net_planes"] || node["nodes_per_rack"] || node["racks_per_l1"] || node["l1_per_l2"];
  if (layout && !IsA5(*out)) {
    return c.Error(node, "net_planes, nodes_per_rack, racks_per_l1 and l1_per_l2 need chip npu");
  }
  if (out->net_planes < 1 || out->net_planes > out->npus_per_node) {
    return c.Error(node, "net_planes must be in [1, npus_per_node]");
  }
  if (out->nodes_per_rack < 1 || out->racks_per_l1 < 1 || out->l1_per_l2 < 1) {
    return c.Error(node, "nodes_per_rack, racks_per_l1 and l1_per_l2 must be >= 1");
  }
  if (IsA5(*out) && out->nodes_per_super_pod > 0 &&
      out->nodes_per_super_pod % out->nodes_per_rack != 0) {
    // A rack holds the nodes of one super pod: clusterd analyses each super pod on its own.
    return c.Error(node, "nodes_per_super_pod must be a multiple of nodes_per_rack");
  }
  return absl::OkStatus();
}

absl::Status ParseJob(const Checker& c, const ClusterSpec& cluster, const YAML::Node& node,
                      JobSpec* out) {
  out->line = node.Mark().line + 1;
  SIM_RETURN_IF_ERROR(
      c.OnlyKeys(node, "job",
                 {"name", "namespace", "pods", "npus_per_pod", "strategies", "process_recover",
                  "hot_switch", "step_ms", "slow_node_detection"}));
  SIM_RETURN_IF_ERROR(c.Get(node, "name", &out->name));
  SIM_RETURN_IF_ERROR(c.Get(node, "namespace", &out->ns));
  SIM_RETURN_IF_ERROR(c.Get(node, "pods", &out->pods));
  SIM_RETURN_IF_ERROR(c.Get(node, "npus_per_pod", &out->npus_per_pod));
  SIM_RETURN_IF_ERROR(c.Get(node, "strategies", &out->strategies));
  SIM_RETURN_IF_ERROR(c.Get(node, "process_recover", &out->process_recover));
  SIM_RETURN_IF_ERROR(c.Get(node, "hot_switch", &out->hot_switch));
  SIM_RETURN_IF_ERROR(c.Get(node, "step_ms", &out->step_ms));
  SIM_RETURN_IF_ERROR(c.Get(node, "slow_node_detection", &out->slow_node_detection));
  if (out->name.empty() || out->name.size() > 40) {
    return c.Error(node, "job name must be 1 to 40 characters");
  }
  for (char ch : out->name) {
    if (!(std::islower(static_cast<unsigned char>(ch)) ||
          std::isdigit(static_cast<unsigned char>(ch)) || ch == '-')) {
      return c.Error(node, "job name must be lower-case letters, digits and '-'");
    }
  }
  if (out->pods < 1 || out->pods > cluster.nodes * cluster.npus_per_node) {
    return c.Error(node, "pods must be at least 1 and fit the cluster");
  }
  if (out->npus_per_pod < 1 || out->npus_per_pod > cluster.npus_per_node) {
    return c.Error(node, "npus_per_pod must be in [1, npus_per_node]");
  }
  for (const std::string& s : out->strategies) {
    if (kStrategies.count(s) == 0) {
      return c.Error(node["strategies"], absl::StrCat("unknown strategy \"", s, "\""));
    }
  }
  if (out->step_ms < 10 || out->step_ms > 600000) {
    return c.Error(node, "step_ms must be in [10, 600000]");
  }
  return absl::OkStatus();
}

int NodeIndex(const ClusterSpec& cluster, const std::string& name) {
  for (int i = 1; i <= cluster.nodes; ++i) {
    if (SimNodeName(i) == name) return i;
  }
  return 0;
}

absl::Status CheckCode(const Checker& c, const YAML::Node& at, const FaultSpec& f,
                       const faults::FaultCodeCatalog* catalog) {
  if (f.code.empty()) return c.Error(at, absl::StrCat(f.kind, " fault needs a code"));
  std::optional<faults::FaultCode> code = faults::ParseHexCode(f.code);
  if (!code.has_value()) return c.Error(at, absl::StrCat("fault code \"", f.code, "\" is not hex"));
  if (catalog != nullptr && (f.kind == "chip" || f.kind == "storm")) {
    if (!catalog->KnownChipLevel(*code).has_value()) {
      return c.Error(at,
                     absl::StrCat("unknown fault code \"", f.code, "\" (not in faultCode.json)"));
    }
  }
  if (catalog != nullptr && f.kind == "network" && !faults::IsNetworkCode(*code)) {
    return c.Error(at, absl::StrCat("\"", f.code, "\" is not a network fault code"));
  }
  return absl::OkStatus();
}

absl::Status ParseFault(const Checker& c, const Scenario& s, const YAML::Node& node,
                        const faults::FaultCodeCatalog* catalog, FaultSpec* out) {
  out->line = node.Mark().line + 1;
  SIM_RETURN_IF_ERROR(c.OnlyKeys(node, "fault", kFaultKeys));
  SIM_RETURN_IF_ERROR(c.Get(node, "at_s", &out->at_s));
  SIM_RETURN_IF_ERROR(c.Get(node, "kind", &out->kind));
  SIM_RETURN_IF_ERROR(c.Get(node, "node", &out->node));
  SIM_RETURN_IF_ERROR(c.Get(node, "npu", &out->npu));
  SIM_RETURN_IF_ERROR(c.Get(node, "npus", &out->npus));
  SIM_RETURN_IF_ERROR(c.Get(node, "code", &out->code));
  SIM_RETURN_IF_ERROR(c.Get(node, "assertion", &out->assertion));
  SIM_RETURN_IF_ERROR(c.Get(node, "job", &out->job));
  SIM_RETURN_IF_ERROR(c.Get(node, "rank", &out->rank));
  SIM_RETURN_IF_ERROR(c.Get(node, "pod", &out->pod));
  SIM_RETURN_IF_ERROR(c.Get(node, "chip_id", &out->chip_id));
  SIM_RETURN_IF_ERROR(c.Get(node, "port_id", &out->port_id));
  SIM_RETURN_IF_ERROR(c.Get(node, "clear_after_s", &out->clear_after_s));
  SIM_RETURN_IF_ERROR(c.Get(node, "expect", &out->expect));
  SIM_RETURN_IF_ERROR(c.Get(node, "label", &out->label));
  SIM_RETURN_IF_ERROR(c.Get(node, "magnitude", &out->magnitude));
  SIM_RETURN_IF_ERROR(c.Get(node, "after_detection_s", &out->after_detection_s));
  SIM_RETURN_IF_ERROR(c.Get(node, "plane", &out->plane));
  SIM_RETURN_IF_ERROR(c.Get(node, "rack", &out->rack));
  SIM_RETURN_IF_ERROR(c.Get(node, "l1", &out->l1));
  if (out->after_detection_s < 0 || out->after_detection_s > 3600) {
    return c.Error(node, "after_detection_s must be in [0, 3600]");
  }
  if (out->at_s < 0 || out->at_s > s.duration_s) {
    return c.Error(node, "at_s must be in [0, duration_s]");
  }
  if (kKinds.count(out->kind) == 0) {
    return c.Error(
        node,
        absl::StrCat("unknown fault kind \"", out->kind,
                     "\" (chip, network, switch, node, public, software, storm, slow, slow_link, "
                     "slow_l1_link, slow_l2_link)"));
  }
  if (kAssertions.count(out->assertion) == 0) {
    return c.Error(node, "assertion must be occur, recover or once");
  }
  if (out->clear_after_s < 0) return c.Error(node, "clear_after_s must be >= 0");
  if (out->kind == "software") {
    bool known = false;
    for (const JobSpec& j : s.jobs) known = known || j.name == out->job;
    if (!known) return c.Error(node, absl::StrCat("unknown job \"", out->job, "\""));
    if (out->rank < 0) return c.Error(node, "software fault needs rank >= 0");
    return absl::OkStatus();
  }
  if (out->kind == "slow") {
    const JobSpec* job = nullptr;
    for (const JobSpec& j : s.jobs) {
      if (j.name == out->job) job = &j;
    }
    if (job == nullptr) return c.Error(node, absl::StrCat("unknown job \"", out->job, "\""));
    if (!job->slow_node_detection) {
      return c.Error(
          node, absl::StrCat("a slow fault needs slow_node_detection: true on job ", job->name));
    }
    if (out->rank < 0 || out->rank >= job->pods * job->npus_per_pod) {
      return c.Error(node, absl::StrCat("rank must be in [0, ", job->pods * job->npus_per_pod,
                                        ") for job ", job->name));
    }
    if (!(out->magnitude > 0 && out->magnitude <= 10)) {
      return c.Error(node, "magnitude must be in (0, 10]");
    }
    return absl::OkStatus();
  }
  if (out->kind == "slow_link") {
    if (!s.cluster.pingmesh) return c.Error(node, "a slow_link fault needs cluster pingmesh: true");
    if (NodeIndex(s.cluster, out->node) == 0) {
      return c.Error(node, absl::StrCat("unknown node \"", out->node, "\""));
    }
    if (out->npu < 0 || out->npu >= s.cluster.npus_per_node) {
      return c.Error(node, absl::StrCat("npu must be in [0, ", s.cluster.npus_per_node, ")"));
    }
    if (!(out->magnitude >= 3 && out->magnitude <= 1000)) {
      // A path is faulty at mean + 3 ms over its 1 ms baseline (§7.4 step 4).
      return c.Error(node, "magnitude of a slow_link must be in [3, 1000]");
    }
    return absl::OkStatus();
  }
  if (out->kind == "slow_l1_link" || out->kind == "slow_l2_link") {
    if (!s.cluster.pingmesh || !IsA5(s.cluster)) {
      return c.Error(node,
                     absl::StrCat("a ", out->kind, " fault needs chip npu and pingmesh: true"));
    }
    if (out->plane < 0 || out->plane >= s.cluster.net_planes) {
      return c.Error(node, absl::StrCat("plane must be in [0, ", s.cluster.net_planes, ")"));
    }
    if (out->kind == "slow_l1_link" && (out->rack < 0 || out->rack >= RackCount(s.cluster))) {
      return c.Error(node, absl::StrCat("rack must be in [0, ", RackCount(s.cluster), ")"));
    }
    if (out->kind == "slow_l2_link" && (out->l1 < 0 || out->l1 >= L1Count(s.cluster))) {
      return c.Error(node, absl::StrCat("l1 must be in [0, ", L1Count(s.cluster), ")"));
    }
    if (!(out->magnitude >= 3 && out->magnitude <= 1000)) {
      // A path is faulty at mean + 3 ms over its 1 ms baseline (§7.4 step 4).
      return c.Error(node, absl::StrCat("magnitude of a ", out->kind, " must be in [3, 1000]"));
    }
    return absl::OkStatus();
  }
  if (out->kind == "storm" && !out->job.empty()) {
    // Every NPU of the job's pods, resolved when the storm starts.
    bool known = false;
    for (const JobSpec& j : s.jobs) known = known || j.name == out->job;
    if (!known) return c.Error(node, absl::StrCat("unknown job \"", out->job, "\""));
    return CheckCode(c, node, *out, catalog);
  }
  if (!out->job.empty() &&
      (out->kind == "chip" || out->kind == "network" || out->kind == "public")) {
    // A job's pod and an NPU index within it, resolved when the fault is injected.
    const JobSpec* job = nullptr;
    for (const JobSpec& j : s.jobs) {
      if (j.name == out->job) job = &j;
    }
    if (job == nullptr) return c.Error(node, absl::StrCat("unknown job \"", out->job, "\""));
    if (out->pod < 0 || out->pod >= job->pods) {
      return c.Error(node, absl::StrCat("pod must be in [0, ", job->pods, ") for job ", job->name));
    }
    if (out->npu < 0 || out->npu >= job->npus_per_pod) {
      return c.Error(node, absl::StrCat("npu must be in [0, ", job->npus_per_pod,
                                        ") (an index among the pod's NPUs)"));
    }
    return CheckCode(c, node, *out, catalog);
  }
  if (NodeIndex(s.cluster, out->node) == 0) {
    return c.Error(node, absl::StrCat("unknown node \"", out->node, "\" (node-1 .. node-",
                                      s.cluster.nodes, ")"));
  }
  SIM_RETURN_IF_ERROR(CheckCode(c, node, *out, catalog));
  if (out->kind == "chip" || out->kind == "network" || out->kind == "public") {
    if (out->npu < 0 || out->npu >= s.cluster.npus_per_node) {
      return c.Error(node, absl::StrCat("npu must be in [0, ", s.cluster.npus_per_node, ")"));
    }
  }
  if (out->kind == "storm") {
    if (out->npus.empty()) return c.Error(node, "storm needs npus");
    for (int n : out->npus) {
      if (n < 0 || n >= s.cluster.npus_per_node) return c.Error(node, "storm npu out of range");
    }
  }
  if (out->kind == "switch" && (out->chip_id < 0 || out->port_id < 0)) {
    return c.Error(node, "switch fault needs chip_id and port_id");
  }
  return absl::OkStatus();
}

}  // namespace

std::string SimNodeName(int index) { return absl::StrCat("node-", index); }

bool IsA5(const ClusterSpec& cluster) {
  const std::optional<faults::ChipProfile> profile = faults::ChipProfile::FromName(cluster.chip);
  return profile.has_value() && profile->family == faults::ChipFamily::kA5;
}

absl::StatusOr<Scenario> ParseScenario(std::string_view text, std::string_view file,
                                       const faults::FaultCodeCatalog* catalog) {
  Checker c(file);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    return c.Error(e.mark.line + 1, absl::StrCat("malformed YAML: ", e.msg));
  }
  if (!root.IsMap()) return c.Error(1, "a scenario is a YAML mapping");
  Scenario s;
  s.file = std::string(file);
  try {
    SIM_RETURN_IF_ERROR(
        c.OnlyKeys(root, "scenario",
                   {"name", "cluster", "jobs", "faults", "replay", "goodput", "duration_s"}));
    SIM_RETURN_IF_ERROR(c.Get(root, "name", &s.name));
    SIM_RETURN_IF_ERROR(c.Get(root, "duration_s", &s.duration_s));
    if (s.duration_s <= 0 || s.duration_s > 86400) {
      return c.Error(root["duration_s"], "duration_s must be in (0, 86400]");
    }
    if (root["cluster"]) SIM_RETURN_IF_ERROR(ParseCluster(c, root["cluster"], &s.cluster));
    if (IsA5(s.cluster) && root["jobs"] && root["jobs"].IsSequence() && root["jobs"].size() > 0) {
      // The mini scheduler binds Ascend910 NPUs (the huawei.com/Ascend910 resource) only.
      return c.Error(root["jobs"], "jobs on an A5 (chip npu) cluster are not simulated");
    }
    std::set<std::string> names;
    // Checked as each job is added: one job needs at most the whole cluster (ParseJob), so the
    // sum stays far below INT64_MAX; a plain int sum of 129 full-cluster jobs overflowed.
    const int64_t npus_available = int64_t{s.cluster.nodes} * s.cluster.npus_per_node;
    int64_t npus_needed = 0;
    if (root["jobs"]) {
      if (!root["jobs"].IsSequence()) return c.Error(root["jobs"], "jobs must be a list");
      for (const YAML::Node& j : root["jobs"]) {
        JobSpec job;
        SIM_RETURN_IF_ERROR(ParseJob(c, s.cluster, j, &job));
        if (!names.insert(job.ns + "/" + job.name).second) {
          return c.Error(j, absl::StrCat("duplicate job \"", job.name, "\""));
        }
        npus_needed += int64_t{job.pods} * job.npus_per_pod;
        if (npus_needed > npus_available) {
          return c.Error(root["jobs"], "the jobs need more NPUs than the cluster has");
        }
        s.jobs.push_back(std::move(job));
      }
    }
    if (root["faults"]) {
      if (!root["faults"].IsSequence()) return c.Error(root["faults"], "faults must be a list");
      if (root["faults"].size() > kMaxFaults) return c.Error(root["faults"], "too many faults");
      for (const YAML::Node& f : root["faults"]) {
        FaultSpec fault;
        SIM_RETURN_IF_ERROR(ParseFault(c, s, f, catalog, &fault));
        s.faults.push_back(std::move(fault));
      }
    }
    if (root["replay"]) {
      const YAML::Node r = root["replay"];
      SIM_RETURN_IF_ERROR(c.OnlyKeys(
          r, "replay", {"trace", "days_per_second", "max_events", "start_s", "from_day"}));
      ReplaySpec replay;
      replay.line = r.Mark().line + 1;
      SIM_RETURN_IF_ERROR(c.Get(r, "trace", &replay.trace));
      SIM_RETURN_IF_ERROR(c.Get(r, "days_per_second", &replay.days_per_second));
      SIM_RETURN_IF_ERROR(c.Get(r, "max_events", &replay.max_events));
      SIM_RETURN_IF_ERROR(c.Get(r, "start_s", &replay.start_s));
      SIM_RETURN_IF_ERROR(c.Get(r, "from_day", &replay.from_day));
      if (replay.start_s < 0) return c.Error(r, "start_s must be >= 0");
      if (replay.from_day < 0) return c.Error(r, "from_day must be >= 0");
      if (replay.trace.empty()) return c.Error(r, "replay needs trace");
      if (replay.days_per_second <= 0) return c.Error(r, "days_per_second must be > 0");
      if (replay.max_events < 0 || replay.max_events > 100000) {
        return c.Error(r, "max_events must be in [0, 100000]");
      }
      s.replay = replay;
    }
    if (root["goodput"]) {
      const YAML::Node g = root["goodput"];
      SIM_RETURN_IF_ERROR(c.OnlyKeys(g, "goodput", {"tolerance", "offender_policy", "offenders"}));
      GoodputCheck check;
      check.line = g.Mark().line + 1;
      SIM_RETURN_IF_ERROR(c.Get(g, "tolerance", &check.tolerance));
      SIM_RETURN_IF_ERROR(c.Get(g, "offender_policy", &check.offender_policy));
      SIM_RETURN_IF_ERROR(c.Get(g, "offenders", &check.offenders));
      if (!(check.tolerance > 0 && check.tolerance <= 1)) {
        return c.Error(g, "tolerance must be in (0, 1]");
      }
      if (!check.offender_policy.empty()) {
        if (absl::StatusOr<cluster::OffenderPolicy> p =
                cluster::ParseOffenderPolicy(check.offender_policy);
            !p.ok()) {
          return c.Error(g["offender_policy"],
                         absl::StrCat("offender_policy: ", p.status().message()));
        }
      }
      for (const std::string& node : check.offenders) {
        int index = 0;
        if (!absl::StartsWith(node, "node-") ||
            !absl::SimpleAtoi(absl::string_view(node).substr(5), &index) || index < 1 ||
            index > s.cluster.nodes) {
          return c.Error(g["offenders"], absl::StrCat("unknown node \"", node, "\""));
        }
      }
      s.goodput = std::move(check);
    }
  } catch (const YAML::Exception& e) {
    return c.Error(e.mark.line + 1, e.msg);
  }
  return s;
}

absl::StatusOr<Scenario> LoadScenario(const std::string& path,
                                      const faults::FaultCodeCatalog* catalog) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open the scenario file"));
  std::stringstream text;
  text << in.rdbuf();
  return ParseScenario(text.str(), path, catalog);
}

std::string_view DefaultDemoScenario() {
  return R"(# The built-in demo: 4 nodes x 8 NPUs, 2 training jobs, four kinds of fault and a slow rank.
# Faults name the job's pod and an NPU index within it; clustersim finds the node at run time.
name: demo
duration_s: 170
cluster:
  nodes: 4
  npus_per_node: 8
  chip: Ascend910
jobs:
  - name: llama
    pods: 2
    npus_per_pod: 4
    strategies: [retry, recover, dump, exit]
    hot_switch: true
    slow_node_detection: true
  - name: gpt
    pods: 2
    npus_per_pod: 4
    strategies: [recover, dump, exit]
faults:
  - at_s: 4
    kind: chip
    job: llama
    pod: 0
    npu: 1
    code: 80E01801
    clear_after_s: 20
    label: UCE memory fault
    expect: retry
  - at_s: 20
    kind: chip
    job: gpt
    pod: 1
    npu: 1
    code: 80E3A201
    label: SeparateNPU chip fault
    expect: recover
  - at_s: 36
    kind: chip
    job: llama
    pod: 1
    npu: 0
    code: 81A3880C
    clear_after_s: 10
    label: sub-health fault
    expect: migration
  - at_s: 50
    kind: storm
    job: gpt
    code: 8C03A000
    label: fault storm
    expect: job-reschedule
  - at_s: 60
    kind: slow
    job: llama
    rank: 2
    magnitude: 0.5
    clear_after_s: 40
    label: slow rank
    expect: 110001010
)";
}

}  // namespace clusterd::sim
