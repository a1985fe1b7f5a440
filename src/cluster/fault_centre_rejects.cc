#include "cluster/fault_centre_rejects.h"

#include <string>

#include "common/log.h"

namespace clusterd::cluster {

Counter& FaultCentreRejected(std::string_view kind, std::string_view reason) {
  return MetricsRegistry::Default().GetCounter(
      "clusterd_fault_centre_rejected_total",
      "Inputs the fault centre rejected or dropped, by kind and reason (checkcode, malformed, "
      "oversized, too_many_records, invalid_entry, rate_limited, invalid, cache_full, "
      "unknown_job, unknown_rank, no_fault).",
      {{"kind", std::string(kind)}, {"reason", std::string(reason)}});
}

void RejectFaultInput(std::string_view kind, std::string_view reason, std::string_view message) {
  FaultCentreRejected(kind, reason).Increment();
  LogWarn("fault-centre", message, {{"kind", kind}, {"reason", reason}});
}

}  // namespace clusterd::cluster
