#pragma once

#include <optional>
#include <string_view>

namespace clusterd::model {

// Job statuses of jobs-ranktable-diagnosis.md §1.6, as spelled on the wire and in ConfigMaps.
enum class JobStatus { kPending, kRunning, kFailed, kComplete };

inline constexpr std::string_view kJobStatusPending = "pending";
inline constexpr std::string_view kJobStatusRunning = "running";
inline constexpr std::string_view kJobStatusFailed = "failed";
inline constexpr std::string_view kJobStatusComplete = "complete";

std::string_view ToString(JobStatus status);
std::optional<JobStatus> ParseJobStatus(std::string_view text);

// failed or complete: the statuses that carry a deleteTime.
inline bool IsFinished(JobStatus s) { return s == JobStatus::kFailed || s == JobStatus::kComplete; }

}  // namespace clusterd::model
