#pragma once

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "faults/fault_policy.h"
#include "gtest/gtest.h"

namespace clusterd::faults::testing {

inline std::string ReadDataFile(const std::string& name) {
  std::ifstream in(std::string(CLUSTERD_DATA_DIR) + "/" + name);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// The shipped faultCode.json / faultCustomization.json / SwitchFaultCode.json, optionally with
// another customisation text.
inline FaultPolicyPtr ShippedPolicy(const std::string& customization = "") {
  PolicyIssues issues;
  auto codes = FaultCodeCatalog::Parse(ReadDataFile("faultCode.json"), &issues);
  auto custom = FaultCustomization::Parse(
      customization.empty() ? ReadDataFile("faultCustomization.json") : customization, &issues);
  auto switches = SwitchFaultCatalog::Parse(ReadDataFile("SwitchFaultCode.json"), &issues);
  EXPECT_TRUE(codes.ok()) << codes.status();
  EXPECT_TRUE(custom.ok()) << custom.status();
  EXPECT_TRUE(switches.ok()) << switches.status();
  auto policy = std::make_shared<FaultPolicy>();
  policy->codes = *std::move(codes);
  policy->customization = *std::move(custom);
  policy->switch_codes = *std::move(switches);
  return policy;
}

}  // namespace clusterd::faults::testing
