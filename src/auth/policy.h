#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "common/file_change.h"
#include "auth/principal.h"
#include "common/clock.h"

namespace clusterd::auth {

// Who may act for a job without a credential (the original clients cannot present one).
enum class JobIdentity {
  kPodIp,     // only from the podIP of one of the job's pods
  kLoopback,  // as kPodIp, and any loopback caller (embedded: everything runs on one host)
  kAny,       // anyone (the original's behaviour)
};

absl::string_view JobIdentityName(JobIdentity j);

// One rule: the principals it names (by user name or group) get `permissions`, limited to
// `resources` when that is not empty (pubfault:send: the request's `resource` sender names;
// datatrace:write: jobNsName). "*" as a permission grants every permission.
struct PolicyRule {
  std::vector<std::string> users;
  std::vector<std::string> groups;
  std::vector<std::string> permissions;
  std::vector<std::string> resources;
};

// The authorisation policy (clusterd --auth-policy FILE, YAML or JSON):
//   jobIdentity: podIP            # podIP | loopback | any
//   rules:
//   - users: [ccae-sender]
//     permissions: [pubfault:send]
//     resources: [CCAE]
//   - groups: [clusterd:operators]
//     permissions: ["*"]
struct Policy {
  JobIdentity job_identity = JobIdentity::kPodIp;
  std::vector<PolicyRule> rules;

  bool Allows(const Principal& who, absl::string_view permission,
              absl::string_view resource = "") const;
};

enum class DeploymentMode { kEmbedded, kKubernetes };

// Built-in defaults. Embedded: jobIdentity loopback, and anonymous loopback callers may do
// everything (today's behaviour on one host). Kubernetes: jobIdentity podIP, and only the
// groups clusterd:operators and system:masters get permissions.
Policy DefaultPolicy(DeploymentMode mode);

absl::StatusOr<Policy> ParsePolicy(absl::string_view text);
// The policy as JSON, as it is logged at start and served at /api/clusterd/v1/policy.
std::string PolicyJson(const Policy& policy);

// The policy in force: a file re-read when it changes (a file that no longer parses keeps the
// previous policy, logged and counted), or a built-in default.
class PolicySource {
 public:
  static absl::StatusOr<std::unique_ptr<PolicySource>> Open(const std::string& path,
                                                            DeploymentMode mode,
                                                            const Clock& clock);
  explicit PolicySource(Policy fixed)
      : current_(std::make_shared<const Policy>(std::move(fixed))) {}

  std::shared_ptr<const Policy> Current();
  const std::string& path() const { return path_; }

 private:
  PolicySource(std::string path, const Clock& clock, Policy initial)
      : path_(path),
        change_(std::make_unique<FileChange>(std::move(path), clock)),
        current_(std::make_shared<const Policy>(std::move(initial))) {}

  std::string path_;
  std::unique_ptr<FileChange> change_;  // null: a built-in policy
  absl::Mutex mu_;
  std::shared_ptr<const Policy> current_ ABSL_GUARDED_BY(mu_);
};

}  // namespace clusterd::auth
