#include "cluster/node_object.h"

#include "common/json_util.h"

namespace clusterd::cluster {
namespace {

std::string StringField(const store::Object& o, std::string_view key) {
  return StringOr(o, key, "");
}

// The array `status.<key>` of the Node, or null.
const store::Object* StatusArray(const store::Object& node, std::string_view key) {
  auto status = node.find("status");
  if (status == node.end() || !status->is_object()) return nullptr;
  auto array = status->find(std::string(key));
  return array != status->end() && array->is_array() ? &*array : nullptr;
}

}  // namespace

bool NodeIsReady(const store::Object& node) {
  const store::Object* conditions = StatusArray(node, "conditions");
  if (conditions == nullptr) return false;
  for (const auto& c : *conditions) {
    if (StringField(c, "type") == "Ready") return StringField(c, "status") == "True";
  }
  return false;
}

std::string NodeInternalIp(const store::Object& node) {
  const store::Object* addresses = StatusArray(node, "addresses");
  if (addresses == nullptr) return "";
  for (const auto& a : *addresses) {
    if (StringField(a, "type") == "InternalIP") return StringField(a, "address");
  }
  return "";
}

std::string NodeSerial(const store::Object& node) {
  auto md = node.find("metadata");
  if (md == node.end() || !md->is_object()) return "";
  auto ann = md->find("annotations");
  if (ann == md->end()) return "";
  return StringField(*ann, kNodeSerialAnnotation);
}

}  // namespace clusterd::cluster
