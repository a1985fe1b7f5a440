#include "faults/fault_event.h"

namespace clusterd::faults {

std::optional<Assertion> ParseAssertion(std::string_view text) {
  if (text == "occur") return Assertion::kOccur;
  if (text == "recover") return Assertion::kRecover;
  if (text == "once") return Assertion::kOnce;
  return std::nullopt;
}

std::string_view AssertionName(Assertion a) {
  switch (a) {
    case Assertion::kOccur:
      return "occur";
    case Assertion::kRecover:
      return "recover";
    case Assertion::kOnce:
      return "once";
  }
  return "";
}

}  // namespace clusterd::faults
