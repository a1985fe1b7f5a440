#include "cluster/job_summary.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "model/pod_group_info.h"

namespace clusterd::cluster {
namespace {

using model::JobSummarySignal;
using model::RankTable;

std::string Seconds(absl::Time t) { return std::to_string(absl::ToUnixSeconds(t)); }

store::Object BaseConfigMap(const JobRecord& r, int64_t index) {
  store::Object labels = {{std::string(kLabelOutsideJobInfo), "true"}};
  if (r.resource_type != model::kResourceTypeNpu) {
    labels[std::string(kLabelRingController)] = kRingControllerAscend910;
  }
  return store::Object{{"apiVersion", "v1"},
                       {"kind", "ConfigMap"},
                       {"metadata",
                        {{"name", JobSummaryConfigMapName(r.name, index)},
                         {"namespace", r.ns},
                         {"labels", std::move(labels)}}},
                       {"data", store::Object::object()}};
}

void PutCommon(const JobRecord& r, store::Object& data) {
  data[std::string(kKeyJobName)] = r.name;
  data[std::string(kKeyJobId)] = r.job_id;
  data[std::string(kKeyFramework)] = r.framework;
  data[std::string(kKeyJobStatus)] = std::string(model::ToString(r.status));
}

size_t CountRankIds(std::string_view json) {
  size_t n = 0;
  for (size_t pos = json.find("rank_id"); pos != std::string_view::npos;
       pos = json.find("rank_id", pos + 7)) {
    ++n;
  }
  return n;
}

}  // namespace

std::string JobSummaryConfigMapName(std::string_view job_name, int64_t index) {
  std::string name = absl::StrCat(std::string(kJobSummaryPrefix),
                                  absl::string_view(job_name.data(), job_name.size()));
  if (index > 0) absl::StrAppend(&name, "-", index);
  return name;
}

std::vector<std::string> SliceRankTable(const RankTable& table, size_t max_bytes) {
  if (!table.server_list.has_value() || table.server_list->empty()) return {};
  const auto& servers = *table.server_list;
  const size_t n = servers.size();
  std::vector<std::string> server_json;
  server_json.reserve(n);
  for (const auto& s : servers) server_json.push_back(model::SerializeRankTableServer(s));

  // rank_list entries belong to the server holding their rank id; both lists are sorted by
  // rank id, so each server's ranks form one run.
  absl::flat_hash_map<std::string, size_t> server_of_rank;
  for (size_t i = 0; i < n; ++i) {
    for (const auto& d : servers[i].devices) server_of_rank[d.rank_id] = i;
  }
  std::vector<std::vector<std::string>> ranks_of(n);
  for (const auto& r : table.rank_list) {
    auto it = server_of_rank.find(std::to_string(r.rank_id));
    if (it != server_of_rank.end()) ranks_of[it->second].push_back(model::SerializeRankV2(r));
  }

  // Size accounting is exact but for "total", sized for the largest possible slice count.
  RankTable head = table;
  head.rank_list.clear();
  head.total = static_cast<int64_t>(n);
  const size_t base = model::SerializeRankTableParts(head, {}, false, {}).size();
  const size_t rank_list_overhead = std::string(",\"rank_list\":[]").size();

  std::vector<std::pair<size_t, size_t>> runs;  // [begin, end) of servers
  for (size_t begin = 0; begin < n;) {
    size_t end = begin + 1;
    size_t server_bytes = server_json[begin].size();
    size_t rank_bytes = 0, rank_count = 0;
    for (const auto& r : ranks_of[begin]) rank_bytes += r.size();
    rank_count += ranks_of[begin].size();
    auto size_of = [&](size_t servers_count, size_t sb, size_t rb, size_t rc) {
      size_t size = base + sb + (servers_count - 1);
      if (rc > 0) size += rank_list_overhead + rb + (rc - 1);
      return size;
    };
    while (end < n) {
      size_t sb = server_bytes + server_json[end].size();
      size_t rb = rank_bytes, rc = rank_count;
      for (const auto& r : ranks_of[end]) rb += r.size();
      rc += ranks_of[end].size();
      if (size_of(end - begin + 1, sb, rb, rc) > max_bytes) break;
      server_bytes = sb;
      rank_bytes = rb;
      rank_count = rc;
      ++end;
    }
    runs.emplace_back(begin, end);
    begin = end;
  }

  RankTable slice_head = table;
  slice_head.total = static_cast<int64_t>(runs.size());
  std::vector<std::string> slices;
  slices.reserve(runs.size());
  for (const auto& [begin, end] : runs) {
    std::vector<std::string> part(server_json.begin() + begin, server_json.begin() + end);
    std::vector<std::string> ranks;
    for (size_t i = begin; i < end; ++i)
      ranks.insert(ranks.end(), ranks_of[i].begin(), ranks_of[i].end());
    slices.push_back(model::SerializeRankTableParts(slice_head, part, false, ranks));
  }
  return slices;
}

ConfigMapWrite InitSummaryWrite(const JobRecord& r) {
  store::Object cm = BaseConfigMap(r, 0);
  store::Object& data = cm["data"];
  PutCommon(r, data);
  data[std::string(kKeyJobStatus)] = std::string(model::kJobStatusPending);
  data[std::string(kKeyCmIndex)] = "0";
  data[std::string(kKeyTotal)] = "1";
  data[std::string(kKeyHcclJson)] = kInitHcclJson;
  data[std::string(kKeyOperator)] = model::kJobOperatorAdd;
  data[std::string(kKeyTime)] = Seconds(r.create_time);
  data[std::string(kKeySid)] = r.sid;
  return {std::move(cm), WriteMode::kCreateFirst};
}

std::vector<ConfigMapWrite> UpdateSummaryWrites(const JobRecord& r,
                                                const std::vector<std::string>& slices,
                                                absl::Time now) {
  std::vector<ConfigMapWrite> writes;
  for (int64_t i = 0; i < r.total_cm_num; ++i) {
    store::Object cm = BaseConfigMap(r, i);
    store::Object& data = cm["data"];
    PutCommon(r, data);
    data[std::string(kKeyCmIndex)] = std::to_string(i);
    data[std::string(kKeyTotal)] = std::to_string(r.total_cm_num);
    data[std::string(kKeyHcclJson)] = i < static_cast<int64_t>(slices.size()) ? slices[i] : "";
    data[std::string(kKeyOperator)] = model::kJobOperatorAdd;
    data[std::string(kKeyTime)] = Seconds(r.create_time);
    data[std::string(kKeySid)] = r.sid;
    if (model::IsFinished(r.status)) data[std::string(kKeyDeleteTime)] = Seconds(now);
    if (r.framework == kFrameworkPytorch) {
      data[std::string(kKeySharedTorIp)] = r.shared_tor_ip;
      data[std::string(kKeyMasterAddr)] = r.master_addr;
    }
    writes.push_back({std::move(cm), WriteMode::kUpdateFirst});
  }
  return writes;
}

std::vector<ConfigMapWrite> PreDeleteSummaryWrites(const JobRecord& r,
                                                   const std::vector<std::string>& slices) {
  std::vector<ConfigMapWrite> writes;
  std::string hccl(kInitHcclJson);
  for (int64_t i = 0; i < r.total_cm_num; ++i) {
    // As the original: an index beyond the recomputed slices keeps the previous value.
    if (i < static_cast<int64_t>(slices.size())) hccl = slices[i];
    store::Object cm = BaseConfigMap(r, i);
    store::Object& data = cm["data"];
    PutCommon(r, data);
    data[std::string(kKeyCmIndex)] = std::to_string(i);
    data[std::string(kKeyTotal)] = std::to_string(r.total_cm_num);
    data[std::string(kKeyHcclJson)] = hccl;
    data[std::string(kKeyOperator)] = model::kJobOperatorDelete;
    data[std::string(kKeyTime)] = Seconds(r.create_time);
    data[std::string(kKeySid)] = r.sid;
    data[std::string(kKeyDeleteTime)] = Seconds(r.delete_time);
    if (r.framework == kFrameworkPytorch) {
      data[std::string(kKeySharedTorIp)] = r.shared_tor_ip;
      data[std::string(kKeyMasterAddr)] = r.master_addr;
    }
    writes.push_back({std::move(cm), WriteMode::kCreateFirst});
  }
  return writes;
}

std::string LimitSignalHcclJson(std::string hccl_json) {
  if (CountRankIds(hccl_json) > kMaxSignalRanks) return "";
  return hccl_json;
}

JobSummarySignal SummarySignal(const JobRecord& r, std::string_view op, std::string hccl_json,
                               absl::Time now) {
  JobSummarySignal s;
  s.job_id = r.job_id;
  s.job_name = r.name;
  s.ns = r.ns;
  s.framework = r.framework;
  s.job_status = std::string(model::ToString(r.status));
  s.time = Seconds(r.create_time);
  s.total = std::to_string(r.total_cm_num);
  s.hccl_json = LimitSignalHcclJson(std::move(hccl_json));
  s.delete_time = model::IsFinished(r.status) ? Seconds(now) : "";
  if (r.framework == kFrameworkPytorch) {
    s.shared_tor_ip = r.shared_tor_ip;
    s.master_addr = r.master_addr;
  }
  s.op = std::string(op);
  s.sid = r.sid;
  return s;
}

std::vector<std::vector<JobSummarySignal>> SnapshotBatches(const std::vector<JobRecord>& records,
                                                           absl::Time now) {
  std::vector<std::vector<JobSummarySignal>> batches;
  std::vector<JobSummarySignal> current;
  size_t current_npus = 0;
  for (const JobRecord& r : records) {
    const size_t npus = r.rank_table.DeviceCount();
    if (npus > kMaxSignalRanks) {
      if (!current.empty()) batches.push_back(std::move(current));
      current.clear();
      current_npus = 0;
      JobSummarySignal s = SummarySignal(r, model::kJobOperatorAdd, "", now);
      batches.push_back({std::move(s)});
      continue;
    }
    if (!current.empty() && current_npus + npus > kMaxSignalRanks) {
      batches.push_back(std::move(current));
      current.clear();
      current_npus = 0;
    }
    current.push_back(
        SummarySignal(r, model::kJobOperatorAdd, model::SerializeRankTable(r.rank_table), now));
    current_npus += npus;
  }
  if (!current.empty()) batches.push_back(std::move(current));
  return batches;
}

}  // namespace clusterd::cluster
