#pragma once

// What the fault centre and its parts refuse: one counter and one warning per refusal, by kind of
// input and reason (clusterd_fault_centre_rejected_total in docs/metrics.md).
#include <string_view>

#include "common/metrics.h"

namespace clusterd::cluster {

// kind: device-info, node-info, public-fault, manual-separation-config, not-retryable; reason:
// checkcode, malformed, oversized, too_many_records, invalid_entry, rate_limited, invalid,
// cache_full, unknown_job, unknown_rank, no_fault.
Counter& FaultCentreRejected(std::string_view kind, std::string_view reason);
// Counts the refusal and logs `message` with its kind and reason.
void RejectFaultInput(std::string_view kind, std::string_view reason, std::string_view message);

}  // namespace clusterd::cluster
