#include "faults/hex_code.h"

#include <cctype>

namespace clusterd::faults {

std::optional<FaultCode> ParseHexCode(std::string_view text) {
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
    text.remove_prefix(2);
  if (text.empty() || text.size() > 16) return std::nullopt;
  FaultCode value = 0;
  for (char c : text) {
    int digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else {
      return std::nullopt;
    }
    value = (value << 4) | static_cast<FaultCode>(digit);
  }
  return value;
}

std::string MinimalHex(FaultCode code) {
  static constexpr char kDigits[] = "0123456789abcdef";
  if (code == 0) return "0";
  std::string out;
  while (code != 0) {
    out.insert(out.begin(), kDigits[code & 0xF]);
    code >>= 4;
  }
  return out;
}

std::string AsciiUpper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace clusterd::faults
