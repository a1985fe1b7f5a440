#include "model/npu_name_list.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace clusterd::model {

std::vector<std::string> SplitNpuNames(std::string_view joined) {
  std::vector<std::string> out;
  for (absl::string_view part :
       absl::StrSplit(absl::string_view(joined.data(), joined.size()), ',')) {
    part = absl::StripAsciiWhitespace(part);
    if (!part.empty()) out.emplace_back(part);
  }
  return out;
}

std::string JoinNpuNames(const std::vector<std::string>& names) {
  return absl::StrJoin(names, ",");
}

}  // namespace clusterd::model
