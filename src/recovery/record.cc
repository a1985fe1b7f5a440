#include "recovery/record.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/canonical_json.h"
#include "common/json_util.h"
#include "common/status_util.h"
#include "common/sv.h"
#include "recovery/vocabulary.h"

namespace clusterd::recovery {
namespace {

using nlohmann::ordered_json;

// ---- writing ----

std::string TimeText(absl::Time t) {
  return absl::FormatTime(absl::RFC3339_full, t, absl::UTCTimeZone());
}

ordered_json Faults(const std::vector<FaultRank>& faults) {
  ordered_json out = ordered_json::array();
  for (const FaultRank& f : faults) out.push_back({f.rank, f.type});
  return out;
}

template <typename V>
ordered_json IntMap(const std::map<int64_t, V>& map) {
  ordered_json out = ordered_json::object();
  for (const auto& [k, v] : map) out[std::to_string(k)] = v;
  return out;
}

ordered_json SignalJson(const Signal& s) {
  ordered_json out;
  out["uuid"] = s.uuid;
  out["jobId"] = s.job_id;
  out["signalType"] = s.signal_type;
  out["actions"] = s.actions;
  out["faultRanks"] = Faults(s.fault_ranks);
  out["changeStrategy"] = s.change_strategy;
  out["timeout"] = s.timeout;
  out["nodeRankIds"] = s.node_rank_ids;
  out["extraParams"] = s.extra_params;
  return out;
}

ordered_json StatusJson(const StatusReport& r) {
  return ordered_json{{"code", r.code}, {"strategy", r.strategy}, {"isolate", r.isolate_rank_ids}};
}

ordered_json StressResultsJson(const StressResults& results) {
  ordered_json out = ordered_json::object();
  for (const auto& [rank, ops] : results) {
    ordered_json per_op = ordered_json::object();
    for (const auto& [op, r] : ops) per_op[op] = {{"code", r.code}, {"result", r.result}};
    out[std::to_string(rank)] = per_op;
  }
  return out;
}

ordered_json StressParamsJson(const StressParams& params) {
  ordered_json out = ordered_json::object();
  for (const auto& [node, ranks] : params) out[node] = IntMap(ranks);
  return out;
}

ordered_json ConfigJson(const JobConfig& c) {
  return ordered_json{{"processRecoverEnabled", c.process_recover_enabled},
                      {"strategies", c.strategies},
                      {"subHealthStrategy", c.sub_health_strategy},
                      {"framework", c.framework},
                      {"platformMode", c.platform_mode}};
}

ordered_json MailboxesJson(const Mailboxes& m) {
  ordered_json out = ordered_json::object();
  if (m.stop_complete.slot) out["stopComplete"] = {{"code", m.stop_complete.slot->code}};
  if (m.recover_strategy.slot) out["recoverStrategy"] = m.recover_strategy.slot->strategies;
  if (m.recover_status.slot) out["recoverStatus"] = StatusJson(*m.recover_status.slot);
  if (m.nic_result.slot) out["nicResult"] = m.nic_result.slot->result;
  if (m.stress_result.slot) out["stressResult"] = StressResultsJson(m.stress_result.slot->results);
  if (m.schedule_result) out["scheduleResult"] = *m.schedule_result;
  return out;
}

// ---- reading (nlohmann throws on type mismatches; RecordFromJson turns that into a Status) --

absl::Time ParseTimeText(const std::string& text) {
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, text, &t, &err)) {
    throw std::invalid_argument("bad time \"" + text + "\": " + err);
  }
  return t;
}

std::vector<FaultRank> ReadFaults(const ordered_json& j) {
  std::vector<FaultRank> out;
  for (const ordered_json& f : j) out.push_back({f.at(0).get<int64_t>(), f.at(1).get<int>()});
  return out;
}

int64_t Key(const std::string& text) { return std::stoll(text); }

template <typename V>
std::map<int64_t, V> ReadIntMap(const ordered_json& j) {
  std::map<int64_t, V> out;
  for (const auto& [k, v] : j.items()) out[Key(k)] = v.template get<V>();
  return out;
}

Signal ReadSignal(const ordered_json& j) {
  Signal s;
  s.uuid = j.at("uuid").get<std::string>();
  s.job_id = j.at("jobId").get<std::string>();
  s.signal_type = j.at("signalType").get<std::string>();
  s.actions = j.at("actions").get<std::vector<std::string>>();
  s.fault_ranks = ReadFaults(j.at("faultRanks"));
  s.change_strategy = j.at("changeStrategy").get<std::string>();
  s.timeout = j.at("timeout").get<int64_t>();
  s.node_rank_ids = j.at("nodeRankIds").get<std::vector<int64_t>>();
  s.extra_params = j.at("extraParams").get<std::string>();
  return s;
}

StatusReport ReadStatus(const ordered_json& j) {
  return StatusReport{j.at("code").get<int32_t>(), j.at("strategy").get<std::string>(),
                      j.at("isolate").get<std::vector<int64_t>>()};
}

StressResults ReadStressResults(const ordered_json& j) {
  StressResults out;
  for (const auto& [rank, ops] : j.items()) {
    for (const auto& [op, r] : ops.items()) {
      out[Key(rank)][op] = {r.at("code").get<std::string>(), r.at("result").get<std::string>()};
    }
  }
  return out;
}

template <typename E>
E ReadEnum(const ordered_json& j, std::optional<E> (*parse)(std::string_view), const char* what) {
  const std::string name = j.get<std::string>();
  std::optional<E> value = parse(name);
  if (!value) throw std::invalid_argument(std::string("unknown ") + what + " \"" + name + "\"");
  return *value;
}

JobRecovery ReadRecord(const ordered_json& r) {
  if (r.at("version").get<int>() != kRecordVersion) {
    throw std::invalid_argument("unsupported record version");
  }
  JobRecovery job;
  job.job_id = r.at("jobId").get<std::string>();
  const ordered_json& c = r.at("config");
  job.config.process_recover_enabled = c.at("processRecoverEnabled").get<bool>();
  job.config.strategies = c.at("strategies").get<std::vector<std::string>>();
  job.config.sub_health_strategy = c.at("subHealthStrategy").get<std::string>();
  job.config.framework = c.at("framework").get<std::string>();
  job.config.platform_mode = c.at("platformMode").get<bool>();

  job.state = ReadEnum<State>(r.at("state"), &ParseState, "state");
  job.phase = ReadEnum<Phase>(r.at("phase"), &ParsePhase, "phase");
  job.write_purpose = ReadEnum<WritePurpose>(r.at("writePurpose"), &ParseWritePurpose, "purpose");
  job.uuid = r.at("uuid").get<std::string>();
  job.caches.retry = ReadFaults(r.at("retryCache"));
  job.caches.normal = ReadFaults(r.at("normalCache"));
  job.fault_pods = ReadIntMap<std::string>(r.at("faultPods"));
  job.origin_pods = ReadIntMap<std::string>(r.at("originPods"));
  job.watch_seen = ReadIntMap<std::string>(r.at("watchSeen"));
  job.health = r.at("health").get<std::string>();
  job.plat_strategy = r.at("platStrategy").get<std::string>();
  job.agent_strategies = r.at("agentStrategies").get<std::vector<std::string>>();
  job.strategy_history = r.at("strategyHistory").get<std::vector<std::string>>();
  for (const ordered_json& s : r.at("resultHistory")) job.result_history.push_back(ReadStatus(s));
  job.decided = r.at("decided").get<std::string>();
  for (const auto& [k, v] : r.at("inPlace").items()) {
    job.in_place[Key(k)] = InPlacePod{v.at("possible").get<bool>(), v.at("software").get<bool>()};
  }
  job.restart_fault_process = r.at("restartFaultProcess").get<bool>();
  job.must_exit_pods = r.at("mustExitPods").get<std::set<int64_t>>();
  job.global_retry_case = r.at("globalRetryCase").get<bool>();
  job.confirm_faults = ReadFaults(r.at("confirmFaults"));
  if (r.contains("resourcesArrived")) job.resources_arrived = r.at("resourcesArrived").get<bool>();
  job.only_dump_or_exit = r.at("onlyDumpOrExit").get<bool>();
  if (r.contains("stagedSignal")) job.staged_signal = ReadSignal(r.at("stagedSignal"));

  const ordered_json& om = r.at("om");
  const std::string kind = om.at("kind").get<std::string>();
  job.om = kind == "switchNic" ? OmKind::kSwitchNic
                               : (kind == "stressTest" ? OmKind::kStressTest : OmKind::kNone);
  job.nic.ranks = om.at("nicRanks").get<std::vector<int64_t>>();
  job.nic.ops = om.at("nicOps").get<std::vector<bool>>();
  for (const auto& [node, ranks] : om.at("stress").items()) {
    job.stress[node] = ReadIntMap<std::vector<int64_t>>(ranks);
  }
  job.stress_fault_reported = om.at("stressFaultReported").get<bool>();
  job.stress_isolated = om.at("stressIsolated").get<std::vector<std::string>>();
  job.nic_recorded = om.at("nicRecorded").get<bool>();

  const ordered_json& hs = r.at("hotSwitch");
  job.hot_switch.pod_rank = hs.at("podRank").get<int64_t>();
  job.hot_switch.pod_uid = hs.at("podUid").get<std::string>();
  job.hot_switch.pod_name = hs.at("podName").get<std::string>();
  job.hot_switch.backup_uid = hs.at("backupUid").get<std::string>();
  job.hot_switch.backup_name = hs.at("backupName").get<std::string>();
  job.hot_switch.faults = ReadFaults(hs.at("faults"));

  job.next_id = r.at("nextId").get<uint64_t>();
  job.awaiting_signal = r.at("awaitingSignal").get<uint64_t>();
  if (r.contains("pendingSignal")) job.pending_signal = ReadSignal(r.at("pendingSignal"));
  if (r.contains("reportSignal")) job.report_signal = ReadSignal(r.at("reportSignal"));
  job.awaiting_write = r.at("awaitingWrite").get<uint64_t>();
  if (r.contains("pendingWrite")) {
    const ordered_json& w = r.at("pendingWrite");
    PendingWrite pending;
    pending.pod_group = w.at("podGroup").get<bool>();
    pending.op = ReadEnum<ResetOperation>(w.at("op"), &ParseResetOperation, "operation");
    pending.ranks = w.at("ranks").get<std::vector<int64_t>>();
    pending.restart_fault_process = w.at("restartFaultProcess").get<bool>();
    pending.attempts = w.at("attempts").get<int>();
    pending.patch = w.at("patch");
    job.pending_write = std::move(pending);
  }
  for (const auto& [kind_name, at] : r.at("timers").items()) {
    const std::optional<TimerKind> kind = ParseTimerKind(kind_name);
    if (!kind) throw std::invalid_argument("unknown timer \"" + kind_name + "\"");
    job.timers[*kind] = ParseTimeText(at.get<std::string>());
  }
  job.schedule_watch = r.at("scheduleWatch").get<bool>();
  if (r.contains("preExit")) {
    PendingPreExit pre;
    pre.faults = ReadFaults(r.at("preExit").at("faults"));
    pre.pods = ReadIntMap<std::string>(r.at("preExit").at("pods"));
    job.pre_exit = std::move(pre);
  }
  job.hw_fault_pods = r.at("hwFaultPods").get<std::set<int64_t>>();

  const ordered_json& m = r.at("mailboxes");
  if (m.contains("stopComplete")) {
    job.mailboxes.stop_complete.slot = StopReport{m.at("stopComplete").at("code").get<int32_t>()};
  }
  if (m.contains("recoverStrategy")) {
    job.mailboxes.recover_strategy.slot =
        StrategyReport{m.at("recoverStrategy").get<std::vector<std::string>>()};
  }
  if (m.contains("recoverStatus")) {
    job.mailboxes.recover_status.slot = ReadStatus(m.at("recoverStatus"));
  }
  if (m.contains("nicResult")) job.mailboxes.nic_result.slot = NicReport{m.at("nicResult")};
  if (m.contains("stressResult")) {
    job.mailboxes.stress_result.slot = StressReport{ReadStressResults(m.at("stressResult"))};
  }
  if (m.contains("scheduleResult")) job.mailboxes.schedule_result = m.at("scheduleResult");
  // Absent from records written before reports were tied to their cycle: take a cycle in flight
  // as signalled (its record was almost always first written for its first signal), so that the
  // reports kept for it stay valid.
  job.cycle_signalled =
      r.contains("cycleSignalled") ? r.at("cycleSignalled").get<bool>() : job.state != State::kInit;

  job.hw_snapshot = r.at("hwSnapshot").get<std::set<std::string>>();
  job.ever_subscribed = r.at("everSubscribed").get<bool>();
  job.cycles = r.at("cycles").get<uint64_t>();
  for (const ordered_json& e : r.at("history")) {
    job.history.push_back(
        HistoryEntry{ParseTimeText(e.at("at").get<std::string>()), e.at("from").get<std::string>(),
                     e.at("event").get<std::string>(), e.at("to").get<std::string>()});
  }
  return job;
}

}  // namespace

ordered_json RecordToJson(const JobRecovery& job) {
  ordered_json r;
  r["version"] = kRecordVersion;
  r["jobId"] = job.job_id;
  r["config"] = ConfigJson(job.config);
  r["state"] = std::string(StateName(job.state));
  r["phase"] = std::string(PhaseName(job.phase));
  r["writePurpose"] = std::string(WritePurposeName(job.write_purpose));
  r["uuid"] = job.uuid;
  r["retryCache"] = Faults(job.caches.retry);
  r["normalCache"] = Faults(job.caches.normal);
  r["faultPods"] = IntMap(job.fault_pods);
  r["originPods"] = IntMap(job.origin_pods);
  r["watchSeen"] = IntMap(job.watch_seen);
  r["health"] = job.health;
  r["platStrategy"] = job.plat_strategy;
  r["agentStrategies"] = job.agent_strategies;
  r["strategyHistory"] = job.strategy_history;
  r["resultHistory"] = ordered_json::array();
  for (const StatusReport& s : job.result_history) r["resultHistory"].push_back(StatusJson(s));
  r["decided"] = job.decided;
  r["inPlace"] = ordered_json::object();
  for (const auto& [pod, info] : job.in_place) {
    r["inPlace"][std::to_string(pod)] = {{"possible", info.possible}, {"software", info.software}};
  }
  r["restartFaultProcess"] = job.restart_fault_process;
  r["mustExitPods"] = job.must_exit_pods;
  r["globalRetryCase"] = job.global_retry_case;
  r["confirmFaults"] = Faults(job.confirm_faults);
  if (job.resources_arrived) r["resourcesArrived"] = *job.resources_arrived;
  r["onlyDumpOrExit"] = job.only_dump_or_exit;
  if (job.staged_signal) r["stagedSignal"] = SignalJson(*job.staged_signal);
  r["om"] = {{"kind", job.om == OmKind::kSwitchNic
                          ? "switchNic"
                          : (job.om == OmKind::kStressTest ? "stressTest" : "none")},
             {"nicRanks", job.nic.ranks},
             {"nicOps", job.nic.ops},
             {"stress", StressParamsJson(job.stress)},
             {"stressFaultReported", job.stress_fault_reported},
             {"stressIsolated", job.stress_isolated},
             {"nicRecorded", job.nic_recorded}};
  r["hotSwitch"] = {
      {"podRank", job.hot_switch.pod_rank},       {"podUid", job.hot_switch.pod_uid},
      {"podName", job.hot_switch.pod_name},       {"backupUid", job.hot_switch.backup_uid},
      {"backupName", job.hot_switch.backup_name}, {"faults", Faults(job.hot_switch.faults)}};
  r["nextId"] = job.next_id;
  r["awaitingSignal"] = job.awaiting_signal;
  if (job.pending_signal) r["pendingSignal"] = SignalJson(*job.pending_signal);
  if (job.report_signal) r["reportSignal"] = SignalJson(*job.report_signal);
  r["awaitingWrite"] = job.awaiting_write;
  if (job.pending_write) {
    const PendingWrite& w = *job.pending_write;
    r["pendingWrite"] = {
        {"podGroup", w.pod_group}, {"op", std::string(ResetOperationName(w.op))},
        {"ranks", w.ranks},        {"restartFaultProcess", w.restart_fault_process},
        {"attempts", w.attempts},  {"patch", w.patch}};
  }
  r["timers"] = ordered_json::object();
  for (const auto& [kind, at] : job.timers)
    r["timers"][std::string(TimerKindName(kind))] = TimeText(at);
  r["scheduleWatch"] = job.schedule_watch;
  if (job.pre_exit) {
    r["preExit"] = {{"faults", Faults(job.pre_exit->faults)}, {"pods", IntMap(job.pre_exit->pods)}};
  }
  r["hwFaultPods"] = job.hw_fault_pods;
  r["mailboxes"] = MailboxesJson(job.mailboxes);
  r["cycleSignalled"] = job.cycle_signalled;
  r["hwSnapshot"] = job.hw_snapshot;
  r["everSubscribed"] = job.ever_subscribed;
  r["cycles"] = job.cycles;
  r["history"] = ordered_json::array();
  for (const HistoryEntry& e : job.history) {
    r["history"].push_back(
        {{"at", TimeText(e.at)}, {"from", e.from}, {"event", e.event}, {"to", e.to}});
  }
  return r;
}

absl::StatusOr<JobRecovery> RecordFromJson(const ordered_json& record) {
  try {
    JobRecovery job = ReadRecord(record);
    job.resumed = true;
    return job;
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("recovery record: ", e.what()));
  }
}

std::string RecordConfigMapName(std::string_view job_id) {
  // Job ids are UIDs (lower-case already); lower-casing keeps any other id a valid name.
  return absl::AsciiStrToLower(absl::StrCat(Sv(kRecordPrefix), Sv(job_id)));
}

absl::Status CheckRecordName(std::string_view job_id) {
  // The store's own rule, so that what is accepted here is what the store will write.
  store::Object probe = RecordConfigMap(job_id, "default", "");
  absl::Status valid = store::ValidateObject(store::kConfigMaps, probe);
  if (valid.ok()) return valid;
  return absl::InvalidArgumentError(absl::StrCat(
      "jobId \"", Sv(job_id), "\" cannot name its recovery record: ", valid.message()));
}

store::Object RecordConfigMap(const JobRecovery& job, std::string_view ns) {
  return RecordConfigMap(job.job_id, ns, CanonicalJson(RecordToJson(job)));
}

store::Object RecordConfigMap(std::string_view job_id, std::string_view ns,
                              std::string record_text) {
  store::Object cm;
  cm["apiVersion"] = "v1";
  cm["kind"] = "ConfigMap";
  cm["metadata"]["name"] = RecordConfigMapName(job_id);
  cm["metadata"]["namespace"] = std::string(ns);
  cm["metadata"]["labels"][std::string(kRecordLabel)] = "true";
  cm["data"][std::string(kRecordKey)] = std::move(record_text);
  return cm;
}

absl::StatusOr<JobRecovery> RecordFromConfigMap(const store::Object& config_map) {
  const std::string what =
      absl::StrCat("configmap ", store::NamespaceOf(config_map), "/", store::NameOf(config_map));
  const std::string text = config_map.value(
      nlohmann::ordered_json::json_pointer("/data/" + std::string(kRecordKey)), "");
  if (text.empty()) return absl::NotFoundError(absl::StrCat(what, ": no ", Sv(kRecordKey)));
  absl::StatusOr<ordered_json> parsed = ParseJson(text, what);
  if (!parsed.ok()) return parsed.status();
  absl::StatusOr<JobRecovery> job = RecordFromJson(*parsed);
  if (!job.ok()) return Annotate(job.status(), what);
  return job;
}

}  // namespace clusterd::recovery
