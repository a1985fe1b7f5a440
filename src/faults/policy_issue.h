#pragma once

#include <string>
#include <vector>

namespace clusterd::faults {

// Something wrong in a policy file that the §4/§5/§8 rules tolerate (an entry ignored, a field
// defaulted). Parsers are pure and collect these; the agent logs one line per issue and counts
// it in clusterd_npu_agent_policy_issues_total{file,kind}.
struct PolicyIssue {
  std::string kind;     // "entry_ignored", "field_defaulted", "code_skipped", ...
  std::string message;  // names the entry and the rule it broke
};
using PolicyIssues = std::vector<PolicyIssue>;

}  // namespace clusterd::faults
