#pragma once

#include <string_view>

#include "absl/strings/string_view.h"

namespace clusterd {

// Debian's Abseil has its own string_view type, not an alias of std::string_view: wrap a
// std::string_view before handing it to absl::StrCat, absl::StrSplit and the like.
inline absl::string_view Sv(std::string_view s) { return absl::string_view(s.data(), s.size()); }

}  // namespace clusterd
