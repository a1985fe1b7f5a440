#pragma once

#include <cstddef>
#include <string_view>

namespace clusterd {

// Length of the well-formed UTF-8 sequence that starts at s[i] (a byte >= 0x80), or 0 when
// there is none: a stray continuation byte, an overlong form, a surrogate, a code point above
// U+10FFFF or a sequence cut short. This is the Unicode definition, which Go's
// utf8.DecodeRuneInString (a RuneError of width 1 there) and nlohmann's strict dump (type_error
// 316) both apply.
size_t WellFormedUtf8Length(std::string_view s, size_t i);

}  // namespace clusterd
