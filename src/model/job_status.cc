#include "model/job_status.h"

namespace clusterd::model {

std::string_view ToString(JobStatus status) {
  switch (status) {
    case JobStatus::kPending:
      return kJobStatusPending;
    case JobStatus::kRunning:
      return kJobStatusRunning;
    case JobStatus::kFailed:
      return kJobStatusFailed;
    case JobStatus::kComplete:
      return kJobStatusComplete;
  }
  return kJobStatusPending;
}

std::optional<JobStatus> ParseJobStatus(std::string_view text) {
  if (text == kJobStatusPending) return JobStatus::kPending;
  if (text == kJobStatusRunning) return JobStatus::kRunning;
  if (text == kJobStatusFailed) return JobStatus::kFailed;
  if (text == kJobStatusComplete) return JobStatus::kComplete;
  return std::nullopt;
}

}  // namespace clusterd::model
