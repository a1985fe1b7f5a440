#include "model/job_profiling_switch.h"

#include "absl/strings/str_cat.h"
#include "common/canonical_json.h"
#include "common/json_util.h"
#include "common/status_util.h"
#include "model/go_json.h"

namespace clusterd::model {

std::string SerializeProfilingSwitch(const ProfilingSwitch& s) {
  return absl::StrCat(
      "{\"CommunicationOperator\":", QuoteGoString(s.communication_operator),
      ",\"Step\":", QuoteGoString(s.step), ",\"SaveCheckpoint\":", QuoteGoString(s.save_checkpoint),
      ",\"FP\":", QuoteGoString(s.fp), ",\"DataLoader\":", QuoteGoString(s.data_loader), "}");
}

absl::StatusOr<ProfilingSwitch> ParseProfilingSwitch(std::string_view text, std::string_view what) {
  CLUSTERD_ASSIGN_OR_RETURN(nlohmann::ordered_json doc, ParseJson(text, what));
  if (absl::Status s = go_json::ExpectObject(doc, what, /*allow_null=*/true); !s.ok()) return s;
  ProfilingSwitch out;
  for (auto [key, field] : {std::pair<std::string_view, std::string*>{"CommunicationOperator",
                                                                      &out.communication_operator},
                            {"Step", &out.step},
                            {"SaveCheckpoint", &out.save_checkpoint},
                            {"FP", &out.fp},
                            {"DataLoader", &out.data_loader}}) {
    if (absl::Status s = go_json::ReadString(doc, key, field); !s.ok()) return Annotate(s, what);
  }
  return out;
}

}  // namespace clusterd::model
