#include "cluster/rank_table_global_feed.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/status_util.h"
#include "model/pod_info.h"

namespace clusterd::cluster {
namespace {

constexpr char kRankTableGlobalFeedLog[] = "global-rank-table";
constexpr std::string_view kConsumerSelector = "mx-consumer-cim=true";

Counter& GenerationCounter(std::string_view result) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_global_rank_table_generations_total",
      "MindIE global rank-table generations: pushed, failed (retried) or dropped (after the "
      "last retry).",
      {{"result", std::string(result)}});
}

std::optional<InstanceConfigMap> InstanceOf(const store::Object& cm) {
  const std::string name = store::NameOf(cm);
  if (!absl::StartsWith(name,
                        absl::string_view(kRingsConfigPrefix.data(), kRingsConfigPrefix.size()))) {
    return std::nullopt;
  }
  InstanceConfigMap out;
  out.ns = store::NamespaceOf(cm);
  out.name = name;
  if (auto md = cm.find("metadata"); md != cm.end() && md->is_object()) {
    if (auto labels = md->find("labels"); labels != md->end() && labels->is_object()) {
      for (const auto& [k, v] : labels->items()) {
        if (v.is_string()) out.labels[k] = v.get<std::string>();
      }
    }
  }
  if (!out.labels.contains(std::string(model::kLabelMindIeJobId))) return std::nullopt;
  if (auto data = cm.find("data"); data != cm.end() && data->is_object()) {
    if (auto h = data->find(kRingsConfigHcclKey); h != data->end() && h->is_string()) {
      out.hccl_json = h->get<std::string>();
    }
  }
  return out;
}

std::vector<MindIePod> ToMindIePods(const std::vector<model::PodInfo>& pods) {
  std::vector<MindIePod> out;
  for (const auto& p : pods) out.push_back({p.ns, p.name, p.host_ip, p.pod_ip});
  return out;
}

}  // namespace

GlobalRankTableFeed::GlobalRankTableFeed(store::ObjectStore& store, JobRegistry& registry,
                                         Clock& clock, Options options,
                                         store::InformerFactory* informers)
    : own_informers_(informers == nullptr ? std::make_unique<store::InformerFactory>(store)
                                          : nullptr),
      informers_(informers != nullptr ? informers : own_informers_.get()),
      registry_(registry),
      options_(options),
      pushed_(GenerationCounter("pushed")),
      failed_(GenerationCounter("failed")),
      dropped_(GenerationCounter("dropped")),
      controller_({.name = "global_rank_table",
                   .thread_name = "rank-tables",
                   .base_retry_delay = options.base_retry_delay,
                   .max_retry_delay = options.max_retry_delay,
                   .background = true},
                  clock, [this](const std::string& job_id, int retries) {
                    return Reconcile(job_id, retries);
                  }) {}

GlobalRankTableFeed::~GlobalRankTableFeed() { Stop(); }

void GlobalRankTableFeed::SetSink(Sink sink) { sink_ = std::move(sink); }

absl::Status GlobalRankTableFeed::Start() {
  registry_.AddInstanceListener([this](const std::string& job_id) { controller_.Enqueue(job_id); });
  store::SharedInformer& cms = informers_->For(store::kConfigMaps);
  if (absl::Status s = cms.Start(); !s.ok()) {
    return Annotate(s, "global rank tables: watching configmaps");
  }
  // The ConfigMaps there now only rebuild the instances; their changes queue generations.
  registration_ =
      cms.AddHandler({.filter = {.selector = *store::LabelSelector::Parse(kConsumerSelector)},
                      .on_event = [this](const store::WatchEvent& e) { OnConfigMapEvent(e); },
                      .on_replay = [this](const store::WatchEvent& e) { (void)Record(e); }});
  return absl::OkStatus();
}

void GlobalRankTableFeed::Stop() {
  registration_.reset();
  controller_.Stop();
  if (own_informers_ != nullptr) own_informers_->Stop();
}

void GlobalRankTableFeed::Request(const std::string& job_id, absl::Duration delay) {
  controller_.EnqueueAfter(job_id, delay);
}

std::optional<std::string> GlobalRankTableFeed::Record(const store::WatchEvent& event) {
  std::optional<InstanceConfigMap> instance = InstanceOf(event.object());
  if (!instance.has_value()) return std::nullopt;
  const std::string key = instance->ns + "/" + instance->name;
  std::string job_id = instance->labels.at(std::string(model::kLabelMindIeJobId));
  absl::MutexLock lock(&mu_);
  if (event.type == store::WatchEventType::kDeleted) {
    instances_.erase(key);
  } else {
    instances_[key] = *std::move(instance);
  }
  return job_id;
}

void GlobalRankTableFeed::OnConfigMapEvent(const store::WatchEvent& event) {
  if (std::optional<std::string> job_id = Record(event)) controller_.Enqueue(*job_id);
}

absl::StatusOr<model::GlobalRankTable> GlobalRankTableFeed::Generate(
    const std::string& job_id) const {
  std::optional<std::string> ns = registry_.NamespaceOfInstance(job_id, kAppMindIeServer);
  std::vector<InstanceConfigMap> instances;
  {
    absl::MutexLock lock(&mu_);
    if (!ns.has_value()) {
      // No server PodGroup known: the namespace of the instance ConfigMaps themselves.
      for (const auto& [key, cm] : instances_) {
        if (cm.labels.at(std::string(model::kLabelMindIeJobId)) == job_id &&
            (!ns.has_value() || cm.ns < *ns)) {
          ns = cm.ns;
        }
      }
    }
    if (!ns.has_value()) {
      return absl::NotFoundError(absl::StrCat(
          "global rank table of ", job_id, ": no server instance and no rings-config ConfigMap"));
    }
    for (const auto& [key, cm] : instances_) {
      if (cm.ns == *ns && cm.labels.at(std::string(model::kLabelMindIeJobId)) == job_id) {
        instances.push_back(cm);
      }
    }
  }
  return BuildGlobalRankTable(
      job_id, std::move(instances),
      ToMindIePods(registry_.PodsOfInstance(*ns, job_id, kAppMindIeCoordinator)),
      ToMindIePods(registry_.PodsOfInstance(*ns, job_id, kAppMindIeController)));
}

runtime::Result GlobalRankTableFeed::Reconcile(const std::string& job_id, int retries) {
  absl::Status status;
  absl::StatusOr<model::GlobalRankTable> table = Generate(job_id);
  if (!table.ok()) {
    status = table.status();
  } else if (!sink_) {
    status = absl::FailedPreconditionError("no rank-table publisher");
  } else {
    status = sink_(job_id, model::SerializeGlobalRankTable(*table));
  }
  if (status.ok()) {
    pushed_.Increment();
    LogInfo(kRankTableGlobalFeedLog, "global rank table pushed",
            {{"job", job_id}, {"ranks", table->RankCount()}, {"groups", table->groups.size()}});
    return runtime::Result::Done();
  }
  if (retries >= options_.max_requeues) {
    dropped_.Increment();
    LogWarn(kRankTableGlobalFeedLog, "global rank table request dropped after retries",
            {{"job", job_id}, {"error", status}});
    return runtime::Result::Done();
  }
  failed_.Increment();
  LogInfo(kRankTableGlobalFeedLog, "global rank table not delivered; will retry",
          {{"job", job_id}, {"error", status}});
  return runtime::Result::Retry(status);
}

}  // namespace clusterd::cluster
