#include "auth/policy.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "auth/permissions.h"
#include "common/log.h"
#include "common/metrics.h"
#include "nlohmann/json.hpp"
#include "yaml-cpp/yaml.h"

namespace clusterd::auth {

namespace {

bool Contains(const std::vector<std::string>& list, absl::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

bool Names(const PolicyRule& rule, const Principal& who) {
  if (Contains(rule.users, who.name)) return true;
  for (const std::string& g : who.groups) {
    if (Contains(rule.groups, g)) return true;
  }
  return false;
}

absl::StatusOr<std::vector<std::string>> Strings(const YAML::Node& node, absl::string_view field,
                                                 size_t rule) {
  std::vector<std::string> out;
  if (!node) return out;
  if (!node.IsSequence()) {
    return absl::InvalidArgumentError(
        absl::StrCat("rules[", rule, "].", field, " is not a list of strings"));
  }
  for (const YAML::Node& item : node) {
    if (!item.IsScalar()) {
      return absl::InvalidArgumentError(
          absl::StrCat("rules[", rule, "].", field, " has an entry that is not a string"));
    }
    out.push_back(item.as<std::string>());
  }
  return out;
}

constexpr absl::string_view kKnownPermissions[] = {
    kPermJobAct,         kPermPubFaultSend, kPermStressTest, kPermNicTrackSwitch,
    kPermDataTraceWrite, kPermRead,         kPermInject,     kPermAll};

}  // namespace

absl::string_view JobIdentityName(JobIdentity j) {
  switch (j) {
    case JobIdentity::kPodIp:
      return "podIP";
    case JobIdentity::kLoopback:
      return "loopback";
    case JobIdentity::kAny:
      return "any";
  }
  return "podIP";
}

bool Policy::Allows(const Principal& who, absl::string_view permission,
                    absl::string_view resource) const {
  for (const PolicyRule& rule : rules) {
    if (!Names(rule, who)) continue;
    if (!Contains(rule.permissions, permission) && !Contains(rule.permissions, kPermAll)) continue;
    if (rule.resources.empty() || Contains(rule.resources, "*") ||
        (!resource.empty() && Contains(rule.resources, resource))) {
      return true;
    }
  }
  return false;
}

Policy DefaultPolicy(DeploymentMode mode) {
  Policy p;
  if (mode == DeploymentMode::kEmbedded) {
    p.job_identity = JobIdentity::kLoopback;
    p.rules.push_back(PolicyRule{{std::string(kAnonymousLoopbackUser)}, {}, {"*"}, {}});
  } else {
    p.job_identity = JobIdentity::kPodIp;
    // A loopback caller inside clusterd's pod came through `kubectl port-forward`, which the
    // API server already authorised (pods/portforward): it may read, never act.
    p.rules.push_back(
        PolicyRule{{std::string(kAnonymousLoopbackUser)}, {}, {std::string(kPermRead)}, {}});
  }
  p.rules.push_back(PolicyRule{{}, {"clusterd:operators", "system:masters"}, {"*"}, {}});
  return p;
}

absl::StatusOr<Policy> ParsePolicy(absl::string_view text) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("not YAML or JSON: ", e.what()));
  }
  if (!root.IsMap()) return absl::InvalidArgumentError("the policy is not a mapping");
  Policy p;
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    if (key != "jobIdentity" && key != "rules") {
      return absl::InvalidArgumentError(absl::StrCat("unknown field \"", key, "\""));
    }
  }
  if (const YAML::Node j = root["jobIdentity"]) {
    const std::string v = j.IsScalar() ? j.as<std::string>() : "";
    if (v == "podIP") {
      p.job_identity = JobIdentity::kPodIp;
    } else if (v == "loopback") {
      p.job_identity = JobIdentity::kLoopback;
    } else if (v == "any") {
      p.job_identity = JobIdentity::kAny;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("jobIdentity is \"", v, "\"; want podIP, loopback or any"));
    }
  }
  if (const YAML::Node rules = root["rules"]) {
    if (!rules.IsSequence()) return absl::InvalidArgumentError("rules is not a list");
    size_t i = 0;
    for (const YAML::Node& r : rules) {
      if (!r.IsMap())
        return absl::InvalidArgumentError(absl::StrCat("rules[", i, "] is not a mapping"));
      for (const auto& kv : r) {
        const std::string key = kv.first.as<std::string>();
        if (key != "users" && key != "groups" && key != "permissions" && key != "resources") {
          return absl::InvalidArgumentError(
              absl::StrCat("rules[", i, "]: unknown field \"", key, "\""));
        }
      }
      PolicyRule rule;
      absl::StatusOr<std::vector<std::string>> users = Strings(r["users"], "users", i);
      absl::StatusOr<std::vector<std::string>> groups = Strings(r["groups"], "groups", i);
      absl::StatusOr<std::vector<std::string>> perms = Strings(r["permissions"], "permissions", i);
      absl::StatusOr<std::vector<std::string>> res = Strings(r["resources"], "resources", i);
      for (const auto* s : {&users, &groups, &perms, &res}) {
        if (!s->ok()) return s->status();
      }
      rule.users = *std::move(users);
      rule.groups = *std::move(groups);
      rule.permissions = *std::move(perms);
      rule.resources = *std::move(res);
      if (rule.users.empty() && rule.groups.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("rules[", i, "] names no users or groups"));
      }
      if (rule.permissions.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("rules[", i, "] grants no permissions"));
      }
      for (const std::string& perm : rule.permissions) {
        if (std::find(std::begin(kKnownPermissions), std::end(kKnownPermissions), perm) ==
            std::end(kKnownPermissions)) {
          return absl::InvalidArgumentError(
              absl::StrCat("rules[", i, "]: unknown permission \"", perm, "\""));
        }
      }
      p.rules.push_back(std::move(rule));
      ++i;
    }
  }
  return p;
}

std::string PolicyJson(const Policy& policy) {
  nlohmann::ordered_json out;
  out["jobIdentity"] = std::string(JobIdentityName(policy.job_identity));
  out["rules"] = nlohmann::ordered_json::array();
  for (const PolicyRule& r : policy.rules) {
    nlohmann::ordered_json rule;
    if (!r.users.empty()) rule["users"] = r.users;
    if (!r.groups.empty()) rule["groups"] = r.groups;
    rule["permissions"] = r.permissions;
    if (!r.resources.empty()) rule["resources"] = r.resources;
    out["rules"].push_back(std::move(rule));
  }
  return out.dump();
}

absl::StatusOr<std::unique_ptr<PolicySource>> PolicySource::Open(const std::string& path,
                                                                 DeploymentMode mode,
                                                                 const Clock& clock) {
  if (path.empty()) return std::make_unique<PolicySource>(DefaultPolicy(mode));
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<Policy> policy = ParsePolicy(*text);
  if (!policy.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("policy ", path, ": ", policy.status().message()));
  }
  std::unique_ptr<PolicySource> source(new PolicySource(path, clock, *std::move(policy)));
  (void)source->change_->Changed();
  return source;
}

std::shared_ptr<const Policy> PolicySource::Current() {
  if (change_ != nullptr && change_->Changed()) {
    absl::StatusOr<std::string> text = ReadWholeFile(path_);
    absl::StatusOr<Policy> policy =
        text.ok() ? ParsePolicy(*text) : absl::StatusOr<Policy>(text.status());
    if (policy.ok()) {
      auto next = std::make_shared<const Policy>(*std::move(policy));
      LogInfo("auth", "policy reloaded", {{"path", path_}, {"policy", PolicyJson(*next)}});
      absl::MutexLock lock(&mu_);
      current_ = std::move(next);
    } else {
      LogError("auth", "policy not reloaded; the previous policy stays",
               {{"path", path_}, {"error", policy.status()}});
      MetricsRegistry::Default()
          .GetCounter("clusterd_auth_reload_errors_total",
                      "Token-file or policy reloads that failed (the previous content stays).",
                      {{"file", "policy"}})
          .Increment();
    }
  }
  absl::MutexLock lock(&mu_);
  return current_;
}

}  // namespace clusterd::auth
