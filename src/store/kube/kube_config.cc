#include "store/kube/kube_config.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "absl/strings/escaping.h"
#include "store/strings.h"
#include "yaml-cpp/yaml.h"

namespace clusterd::store::kube {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(Cat(what, ": cannot read ", path, ": ", std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string StringOf(const YAML::Node& node, const char* key) {
  if (!node || !node.IsMap()) return "";
  YAML::Node v = node[key];
  if (!v || !v.IsScalar()) return "";
  return v.as<std::string>();
}

// The `field` map of the entry named `name` of a kubeconfig list (clusters, users, contexts).
std::optional<YAML::Node> Named(const YAML::Node& list, const std::string& name,
                                const char* field) {
  if (!list || !list.IsSequence()) return std::nullopt;
  for (const auto& entry : list) {
    if (StringOf(entry, "name") != name) continue;
    YAML::Node value = entry[field];
    if (value && value.IsMap()) return value;
    return YAML::Node(YAML::NodeType::Map);
  }
  return std::nullopt;
}

absl::StatusOr<std::string> Base64Field(const YAML::Node& node, const char* key,
                                        std::string_view who) {
  std::string encoded = StringOf(node, key);
  std::string decoded;
  if (!absl::Base64Unescape(encoded, &decoded)) {
    return absl::InvalidArgumentError(Cat(who, ": ", key, " is not valid base64"));
  }
  return decoded;
}

}  // namespace

absl::StatusOr<KubeConfig> LoadInClusterConfig(
    std::string_view root, const std::function<const char*(const char*)>& getenv) {
  auto env = [&](const char* name) -> std::string {
    const char* v = getenv ? getenv(name) : std::getenv(name);
    return v == nullptr ? "" : v;
  };
  std::string host = env("KUBERNETES_SERVICE_HOST");
  std::string port = env("KUBERNETES_SERVICE_PORT");
  if (host.empty() || port.empty()) {
    return absl::FailedPreconditionError(
        "kube store: not running in a Kubernetes pod (KUBERNETES_SERVICE_HOST/PORT are not "
        "set); pass --kubeconfig FILE to use a kubeconfig");
  }
  KubeConfig config;
  config.source = "in-cluster";
  config.server =
      Cat("https://", host.find(':') != std::string::npos ? Cat("[", host, "]") : host, ":", port);
  config.token_file = Cat(root, "/token");
  config.ca_file = Cat(root, "/ca.crt");
  auto token = ReadFile(config.token_file, "kube store (in-cluster)");
  if (!token.ok()) return token.status();
  if (!std::filesystem::exists(config.ca_file)) {
    return absl::NotFoundError(
        Cat("kube store (in-cluster): the service-account CA ", config.ca_file, " is missing"));
  }
  if (auto ns = ReadFile(Cat(root, "/namespace"), "kube store (in-cluster)"); ns.ok()) {
    config.ns = std::string(Trim(*ns));
  }
  return config;
}

absl::StatusOr<KubeConfig> LoadKubeconfig(const std::string& path, std::string_view context) {
  std::string who = Cat("kubeconfig ", path);
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return absl::NotFoundError(Cat(who, ": cannot read the file"));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(Cat(who, ": not valid YAML: ", e.what()));
  }
  if (!root.IsMap()) return absl::InvalidArgumentError(Cat(who, ": not a kubeconfig"));
  std::string context_name =
      context.empty() ? StringOf(root, "current-context") : std::string(context);
  if (context_name.empty()) {
    return absl::InvalidArgumentError(Cat(who, ": no current-context and no context given"));
  }
  std::optional<YAML::Node> found_ctx = Named(root["contexts"], context_name, "context");
  if (!found_ctx) {
    return absl::NotFoundError(Cat(who, ": context \"", context_name, "\" not found"));
  }
  const YAML::Node& ctx = *found_ctx;
  who = Cat(who, " (context ", context_name, ")");
  std::string cluster_name = StringOf(ctx, "cluster");
  std::string user_name = StringOf(ctx, "user");
  std::optional<YAML::Node> found_cluster = Named(root["clusters"], cluster_name, "cluster");
  if (!found_cluster) {
    return absl::NotFoundError(Cat(who, ": cluster \"", cluster_name, "\" not found"));
  }
  const YAML::Node& cluster = *found_cluster;
  std::optional<YAML::Node> user = Named(root["users"], user_name, "user");
  if (!user_name.empty() && !user) {
    return absl::NotFoundError(Cat(who, ": user \"", user_name, "\" not found"));
  }
  std::filesystem::path dir = std::filesystem::absolute(path).parent_path();
  auto resolve = [&](std::string p) {
    if (p.empty() || std::filesystem::path(p).is_absolute()) return p;
    return (dir / p).string();
  };

  KubeConfig config;
  config.source = who;
  config.server = StringOf(cluster, "server");
  while (!config.server.empty() && config.server.back() == '/') config.server.pop_back();
  if (config.server.empty())
    return absl::InvalidArgumentError(Cat(who, ": the cluster has no server"));
  if (!config.server.starts_with("https://")) {
    return absl::InvalidArgumentError(
        Cat(who, ": server \"", config.server, "\" is not https://; clusterd talks only TLS"));
  }
  config.ns = StringOf(ctx, "namespace");
  config.insecure_skip_tls_verify = StringOf(cluster, "insecure-skip-tls-verify") == "true";
  config.ca_file = resolve(StringOf(cluster, "certificate-authority"));
  if (!StringOf(cluster, "certificate-authority-data").empty()) {
    auto pem = Base64Field(cluster, "certificate-authority-data", who);
    if (!pem.ok()) return pem.status();
    config.ca_pem = *std::move(pem);
  }
  if (user) {
    if ((*user)["exec"] || (*user)["auth-provider"]) {
      return absl::UnimplementedError(
          Cat(who, ": user \"", user_name,
              "\" uses an exec or auth-provider plugin; clusterd supports tokens and client "
              "certificates only"));
    }
    if (!StringOf(*user, "username").empty() || !StringOf(*user, "password").empty()) {
      return absl::UnimplementedError(
          Cat(who, ": user \"", user_name,
              "\" uses basic authentication, which clusterd does not support"));
    }
    config.token = StringOf(*user, "token");
    config.token_file = resolve(StringOf(*user, "tokenFile"));
    config.client_cert_file = resolve(StringOf(*user, "client-certificate"));
    config.client_key_file = resolve(StringOf(*user, "client-key"));
    if (!StringOf(*user, "client-certificate-data").empty()) {
      auto pem = Base64Field(*user, "client-certificate-data", who);
      if (!pem.ok()) return pem.status();
      config.client_cert_pem = *std::move(pem);
    }
    if (!StringOf(*user, "client-key-data").empty()) {
      auto pem = Base64Field(*user, "client-key-data", who);
      if (!pem.ok()) return pem.status();
      config.client_key_pem = *std::move(pem);
    }
  }
  bool has_cert = !config.client_cert_file.empty() || !config.client_cert_pem.empty();
  bool has_key = !config.client_key_file.empty() || !config.client_key_pem.empty();
  if (has_cert != has_key) {
    return absl::InvalidArgumentError(
        Cat(who, ": a client certificate needs its key and a key its certificate"));
  }
  return config;
}

}  // namespace clusterd::store::kube
