#pragma once

#include <string_view>

#include "absl/strings/string_view.h"

namespace clusterd::recovery {

// Debian's Abseil has its own string_view; constants of this room are std::string_view.
inline absl::string_view Sv(std::string_view s) { return absl::string_view(s.data(), s.size()); }

}  // namespace clusterd::recovery
