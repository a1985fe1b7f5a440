#pragma once

#include <string>
#include <string_view>

namespace clusterd::model {

// `operator` values of job-summary signals and ConfigMaps.
inline constexpr std::string_view kJobOperatorAdd = "add";
inline constexpr std::string_view kJobOperatorDelete = "delete";

// The job-summary signal of jobs-ranktable-diagnosis.md §3.3 (job.JobSummarySignal on the
// wire); every field is a string.
struct JobSummarySignal {
  std::string uuid;
  std::string job_id;
  std::string job_name;
  std::string ns;
  std::string framework;
  std::string job_status;
  std::string time;  // record creation, Unix seconds
  std::string cm_index = "0";
  std::string total;
  std::string hccl_json;
  std::string delete_time;
  std::string shared_tor_ip;
  std::string master_addr;
  std::string op;  // "operator"
  std::string sid;
  bool operator==(const JobSummarySignal&) const = default;
};

}  // namespace clusterd::model
