#pragma once

#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

// Debian's Abseil (20220623) is built with its own absl::string_view
// (ABSL_OPTION_USE_STD_STRING_VIEW 0), so absl::StrCat and friends do not accept
// std::string_view. The store works in std::string_view and uses these instead.
namespace clusterd::store {

inline absl::string_view ToAbsl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

namespace strings_internal {
template <typename T>
decltype(auto) CatArg(const T& v) {
  if constexpr (std::is_same_v<T, std::string_view>) {
    return ToAbsl(v);
  } else {
    return (v);
  }
}
}  // namespace strings_internal

// absl::StrCat that also takes std::string_view.
template <typename... Args>
std::string Cat(const Args&... args) {
  return absl::StrCat(strings_internal::CatArg(args)...);
}

// Without leading and trailing ASCII whitespace.
inline std::string_view Trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\r\f\v";
  size_t begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(kSpace) - begin + 1);
}

// Splits at every `sep`; "" gives one empty piece, like absl::StrSplit.
inline std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  for (;;) {
    size_t pos = s.find(sep);
    parts.push_back(s.substr(0, pos));
    if (pos == std::string_view::npos) return parts;
    s.remove_prefix(pos + 1);
  }
}

}  // namespace clusterd::store
