#include "cluster/data_trace.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/log.h"
#include "common/sv.h"

namespace clusterd::cluster {
namespace {

constexpr char kDataTraceLog[] = "data-trace";

DataTraceResult Result(int32_t code, std::string message, bool rpc_error) {
  DataTraceResult r;
  r.code = code;
  r.message = std::move(message);
  r.rpc_error = rpc_error;
  return r;
}

Counter& ModifyCounter(std::string_view result) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_data_trace_modifications_total",
      "ModifyTrainingDataTraceSwitch calls by result (ok, bad_request, notify_failed, "
      "configmap_failed).",
      {{"result", std::string(result)}});
}

}  // namespace

std::optional<std::pair<std::string, std::string>> ParseJobNsName(std::string_view job_ns_name) {
  std::vector<std::string> parts = absl::StrSplit(Sv(job_ns_name), '/');
  if (parts.size() != 2) return std::nullopt;
  return std::make_pair(parts[0], parts[1]);
}

store::Object DataTraceConfigMap(std::string_view ns, std::string_view job_name,
                                 const model::OwnerReference* owner,
                                 const model::ProfilingSwitch& value) {
  store::Object metadata = {{"name", absl::StrCat(Sv(kDataTracePrefix), Sv(job_name))},
                            {"namespace", std::string(ns)},
                            {"labels", {{std::string(kLabelReset), "true"}}}};
  if (owner != nullptr && !owner->uid.empty()) {
    metadata["ownerReferences"] = store::Object::array({owner->raw});
  }
  return store::Object{
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata", std::move(metadata)},
      {"data", {{std::string(kProfilingSwitchKey), model::SerializeProfilingSwitch(value)}}}};
}

DataTraceSwitches::DataTraceSwitches(store::ObjectStore& store, const JobRegistry& registry)
    : store_(store), registry_(registry) {}

void DataTraceSwitches::SetNotifier(Notifier notifier) { notifier_ = std::move(notifier); }

DataTraceResult DataTraceSwitches::Modify(std::string_view job_ns_name,
                                          const model::ProfilingSwitch& value) {
  auto parsed = ParseJobNsName(job_ns_name);
  if (!parsed.has_value()) {
    ModifyCounter("bad_request").Increment();
    return Result(kDataTraceInvalidParameter, std::string(kBadJobNsName), true);
  }
  // Named references, not a structured binding: the lambda below captures them (clang before
  // 16 cannot capture bindings).
  const std::string& ns = parsed->first;
  const std::string& name = parsed->second;
  const std::string nsname = absl::StrCat(ns, "/", name);

  std::optional<JobRecord> job = registry_.FindJobByName(ns, name);
  bool mounted = false;
  if (job.has_value()) {
    std::vector<model::PodInfo> pods = registry_.PodsOfJob(job->job_id);
    mounted = !pods.empty();
    for (const auto& p : pods) mounted &= p.mounts_data_trace;
  }

  // The gRPC path: the running job's subscriber.
  auto notify = [&]() -> absl::Status {
    std::optional<JobRecord> running = registry_.FindJobByName(ns, name, /*running_only=*/true);
    if (!running.has_value()) return absl::NotFoundError("no such job");
    if (!notifier_)
      return absl::NotFoundError(absl::StrCat("publisher for job ", running->job_id, " not found"));
    return notifier_(running->job_id, value);
  };

  if (!mounted) {
    if (absl::Status s = notify(); !s.ok()) {
      ModifyCounter("notify_failed").Increment();
      // Info, not a warning: the caller gets the code and decides (the slow-node writer falls
      // back to the ConfigMap; an RPC client sees the refusal), and the counter keeps count.
      LogInfo(kDataTraceLog, "profiling switch not delivered", {{"job", nsname}, {"error", s}});
      return Result(kDataTraceServerFault, std::string(kNotifyFailed), true);
    }
    ModifyCounter("ok").Increment();
    LogInfo(kDataTraceLog, "profiling switch sent", {{"job", nsname}});
    return Result(kDataTraceOk, std::string(kSwitchChanged), false);
  }

  if (absl::Status s = notify(); !s.ok()) {
    LogInfo(kDataTraceLog, "profiling switch subscriber not notified",
            {{"job", nsname}, {"error", s}});
  }
  const std::string cm_name = absl::StrCat(Sv(kDataTracePrefix), name);
  const model::OwnerReference* owner = job.has_value() ? &job->owner : nullptr;
  absl::StatusOr<store::Object> existing =
      store_.Get(store::ObjectKey{std::string(store::kConfigMaps), ns, cm_name});
  if (!existing.ok() && !absl::IsNotFound(existing.status())) {
    ModifyCounter("configmap_failed").Increment();
    LogWarn(kDataTraceLog, "data-trace configmap unreadable",
            {{"job", nsname}, {"error", existing.status()}});
    return Result(kDataTraceNotFound, absl::StrCat("failed to found configmap:[", nsname, "]"),
                  true);
  }
  if (!existing.ok()) {
    absl::StatusOr<store::Object> created =
        store_.Create(store::kConfigMaps, DataTraceConfigMap(ns, name, owner, value));
    if (!created.ok()) {
      ModifyCounter("configmap_failed").Increment();
      LogWarn(kDataTraceLog, "data-trace configmap not created",
              {{"job", nsname}, {"error", created.status()}});
      return Result(kDataTraceServerFault,
                    absl::StrCat("failed to create comfigmap:[", nsname, "]"), true);
    }
  } else {
    store::Object cm = *std::move(existing);
    if (owner != nullptr && !owner->uid.empty()) {
      cm["metadata"]["ownerReferences"] = store::Object::array({owner->raw});
    }
    if (!cm.contains("data") || !cm["data"].is_object()) cm["data"] = store::Object::object();
    cm["data"][std::string(kProfilingSwitchKey)] = model::SerializeProfilingSwitch(value);
    absl::StatusOr<store::Object> updated = store_.Update(store::kConfigMaps, std::move(cm));
    if (!updated.ok()) {
      ModifyCounter("configmap_failed").Increment();
      LogWarn(kDataTraceLog, "data-trace configmap not updated",
              {{"job", nsname}, {"error", updated.status()}});
      return Result(kDataTraceServerFault,
                    absl::StrCat("failed to update comfigmap:[", nsname, "]"), true);
    }
  }
  ModifyCounter("ok").Increment();
  LogInfo(kDataTraceLog, "profiling switch written", {{"job", nsname}, {"configmap", cm_name}});
  return Result(kDataTraceOk, std::string(kSwitchChanged), false);
}

DataTraceResult DataTraceSwitches::Get(std::string_view job_ns_name) const {
  auto parsed = ParseJobNsName(job_ns_name);
  if (!parsed.has_value())
    return Result(kDataTraceInvalidParameter, std::string(kBadJobNsName), false);
  // Named references, not a structured binding: the lambda below captures them (clang before
  // 16 cannot capture bindings).
  const std::string& ns = parsed->first;
  const std::string& name = parsed->second;
  const std::string nsname = absl::StrCat(ns, "/", name);
  absl::StatusOr<store::Object> cm = store_.Get(store::ObjectKey{
      std::string(store::kConfigMaps), ns, absl::StrCat(Sv(kDataTracePrefix), name)});
  if (!cm.ok()) {
    return Result(kDataTraceNotFound, absl::StrCat("failed to found configmap:[", nsname, "]"),
                  true);
  }
  auto data = cm->find("data");
  if (data == cm->end() || !data->is_object() || !data->contains(kProfilingSwitchKey) ||
      !(*data)[std::string(kProfilingSwitchKey)].is_string()) {
    return Result(kDataTraceNotFound, std::string(kNoSwitchField), false);
  }
  auto value =
      model::ParseProfilingSwitch((*data)[std::string(kProfilingSwitchKey)].get<std::string>(),
                                  absl::StrCat("configmap ", ns, "/data-trace-", name));
  if (!value.ok()) {
    return Result(kDataTraceServerFault, absl::StrCat("failed to convert configmap:[", nsname, "]"),
                  true);
  }
  DataTraceResult r =
      Result(kDataTraceOk, absl::StrCat("successfully get the status of job[", nsname, "]"), false);
  r.profiling_switch = *std::move(value);
  return r;
}

bool DataTraceSwitches::SubscriptionAllowed(std::string_view job_id, std::string_view role) const {
  if (registry_.FindJob(job_id).has_value()) return true;
  return registry_.NamespaceOfInstance(job_id, role).has_value();
}

}  // namespace clusterd::cluster
