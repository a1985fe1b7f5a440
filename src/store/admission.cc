#include "store/admission.h"

#include <sys/random.h>

#include <array>
#include <cerrno>
#include <charconv>

#include "absl/strings/str_format.h"
#include "store/strings.h"

namespace clusterd::store {
namespace {

// Metadata fields in the order Kubernetes prints them; other fields keep their own order.
constexpr std::array<std::string_view, 7> kMetadataOrder = {
    "name",       "generateName",     "namespace", "uid", "resourceVersion",
    "generation", "creationTimestamp"};

int MetadataRank(std::string_view field) {
  for (size_t i = 0; i < kMetadataOrder.size(); ++i) {
    if (kMetadataOrder[i] == field) return static_cast<int>(i);
  }
  return -1;
}

absl::Status ConflictError(const ObjectKey& key, std::string_view wanted, std::string_view stored) {
  return absl::AbortedError(Cat("409 Conflict: ", key.ToString(),
                                ": resourceVersion precondition \"", wanted,
                                "\" does not match the stored resourceVersion \"", stored, "\""));
}

Object& MetadataOf(Object& o) {
  auto it = o.find("metadata");
  if (it == o.end() || !it->is_object()) {
    // Put a missing metadata after apiVersion/kind, as kubectl prints it.
    Object rebuilt = Object::object();
    bool placed = false;
    for (auto& [k, v] : o.items()) {
      if (!placed && k != "apiVersion" && k != "kind") {
        rebuilt["metadata"] = Object::object();
        placed = true;
      }
      if (k != "metadata") rebuilt[k] = std::move(v);
    }
    if (!placed) rebuilt["metadata"] = Object::object();
    o = std::move(rebuilt);
  }
  return o["metadata"];
}

}  // namespace

absl::Status CheckResource(std::string_view resource) {
  if (IsKnownResource(resource)) return absl::OkStatus();
  std::string known;
  for (std::string_view r : kKnownResources) known += Cat(known.empty() ? "" : ", ", r);
  return absl::InvalidArgumentError(
      Cat("unknown resource \"", resource, "\" (known: ", known, ")"));
}

absl::Status CheckKey(const ObjectKey& key) {
  if (absl::Status s = CheckResource(key.resource); !s.ok()) return s;
  if (key.name.empty()) {
    return absl::InvalidArgumentError(Cat(key.ToString(), ": name is required"));
  }
  if (IsClusterScoped(key.resource) && !key.ns.empty()) {
    return absl::InvalidArgumentError(
        Cat(key.ToString(), ": ", key.resource, " are cluster-scoped, not namespaced"));
  }
  if (!IsClusterScoped(key.resource) && key.ns.empty()) {
    return absl::InvalidArgumentError(
        Cat(key.ToString(), ": namespace is required for ", key.resource));
  }
  return absl::OkStatus();
}

absl::Status CheckNamespaceFilter(std::string_view resource, std::string_view ns) {
  if (absl::Status s = CheckResource(resource); !s.ok()) return s;
  if (IsClusterScoped(resource) && !ns.empty()) {
    return absl::InvalidArgumentError(
        Cat(resource, " are cluster-scoped: a namespace filter (\"", ns, "\") does not apply"));
  }
  return absl::OkStatus();
}

absl::Status CheckFieldSelector(std::string_view resource, const FieldSelector& fields) {
  for (const FieldSelector::Requirement& r : fields.requirements()) {
    const bool supported =
        r.field == "metadata.name" ||
        (r.field == "metadata.namespace" && !IsClusterScoped(resource)) ||
        (resource == kPods && (r.field == "spec.nodeName" || r.field == "status.phase"));
    if (!supported) {
      return absl::InvalidArgumentError(Cat(resource, ": field selector \"", fields.ToString(),
                                            "\": field label not supported: ", r.field));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckReadFilter(std::string_view resource, std::string_view ns,
                             const FieldSelector& fields) {
  if (absl::Status s = CheckNamespaceFilter(resource, ns); !s.ok()) return s;
  return CheckFieldSelector(resource, fields);
}

absl::StatusOr<Object> AdmitCreate(std::string_view resource, Object object, absl::Time now) {
  if (absl::Status s = ValidateObject(resource, object); !s.ok()) return s;
  Object& meta = object["metadata"];
  if (IsClusterScoped(resource)) meta.erase("namespace");  // drop an empty ""
  meta.erase("resourceVersion");
  if (UidOf(object).empty()) SetMetadataField(object, "uid", NewUid());
  SetMetadataField(object, "creationTimestamp", FormatTimestamp(now));
  return object;
}

absl::StatusOr<Object> AdmitUpdate(std::string_view resource, const Object& stored, Object update) {
  if (absl::Status s = ValidateObject(resource, update); !s.ok()) return s;
  ObjectKey key = KeyOf(resource, update);
  std::string wanted = ResourceVersionOf(update);
  std::string current = ResourceVersionOf(stored);
  if (!wanted.empty() && wanted != current) return ConflictError(key, wanted, current);
  std::string uid = UidOf(update);
  if (!uid.empty() && uid != UidOf(stored)) {
    return absl::AbortedError(Cat("409 Conflict: ", key.ToString(), ": uid \"", uid,
                                  "\" does not match the stored uid \"", UidOf(stored), "\""));
  }
  Object& meta = update["metadata"];
  if (IsClusterScoped(resource)) meta.erase("namespace");
  meta.erase("resourceVersion");
  SetMetadataField(update, "uid", UidOf(stored));
  const auto& stored_meta = stored["metadata"];
  if (auto it = stored_meta.find("creationTimestamp"); it != stored_meta.end() && it->is_string()) {
    SetMetadataField(update, "creationTimestamp", it->get<std::string>());
  }
  return update;
}

absl::StatusOr<Object> AdmitPatch(const ObjectKey& key, const Object& stored,
                                  const Object& merge_patch) {
  if (!merge_patch.is_object()) {
    return absl::InvalidArgumentError(Cat(
        key.ToString(), ": a merge patch must be a JSON object, not ", merge_patch.type_name()));
  }
  auto patch_meta = merge_patch.find("metadata");
  if (patch_meta != merge_patch.end() && patch_meta->is_object()) {
    if (auto rv = patch_meta->find("resourceVersion");
        rv != patch_meta->end() && rv->is_string() && !rv->get_ref<const std::string&>().empty()) {
      std::string current = ResourceVersionOf(stored);
      if (rv->get_ref<const std::string&>() != current) {
        return ConflictError(key, rv->get<std::string>(), current);
      }
    }
    for (std::string_view field : {"name", "namespace", "uid"}) {
      auto it = patch_meta->find(field);
      if (it == patch_meta->end() || it->is_null()) continue;
      const auto& stored_meta = stored["metadata"];
      auto old = stored_meta.find(field);
      if (old == stored_meta.end() || *old != *it) {
        return absl::InvalidArgumentError(
            Cat(key.ToString(), ": metadata.", field, " cannot be changed"));
      }
    }
  }
  Object next = stored;
  ApplyMergePatch(next, merge_patch);
  // Immutable fields survive a patch that nulls them.
  const auto& stored_meta = stored["metadata"];
  for (std::string_view field : {"name", "namespace", "uid", "creationTimestamp"}) {
    if (auto it = stored_meta.find(field); it != stored_meta.end() && it->is_string()) {
      SetMetadataField(next, field, it->get<std::string>());
    } else {
      MetadataOf(next).erase(field);
    }
  }
  MetadataOf(next).erase("resourceVersion");
  if (absl::Status s = ValidateObject(key.resource, next); !s.ok()) return s;
  return next;
}

absl::Status AdmitDelete(const ObjectKey& key, const Object& stored,
                         std::string_view resource_version) {
  std::string current = ResourceVersionOf(stored);
  if (!resource_version.empty() && resource_version != current) {
    return ConflictError(key, resource_version, current);
  }
  return absl::OkStatus();
}

void SetMetadataField(Object& object, std::string_view field, std::string value) {
  Object& meta = MetadataOf(object);
  if (auto it = meta.find(field); it != meta.end()) {
    *it = std::move(value);
    return;
  }
  int rank = MetadataRank(field);
  if (rank < 0) {
    meta[std::string(field)] = std::move(value);
    return;
  }
  // Insert before the first field that Kubernetes prints later (or that is not a known one).
  Object rebuilt = Object::object();
  bool placed = false;
  for (auto& [k, v] : meta.items()) {
    int r = MetadataRank(k);
    if (!placed && (r < 0 || r > rank)) {
      rebuilt[std::string(field)] = value;
      placed = true;
    }
    rebuilt[k] = std::move(v);
  }
  if (!placed) rebuilt[std::string(field)] = std::move(value);
  meta = std::move(rebuilt);
}

namespace {

// Equal members, in the same order, leaving `skipped` out on both sides.
bool SameMembersExcept(const Object& a, const Object& b, std::string_view skipped) {
  auto x = a.begin();
  auto y = b.begin();
  while (true) {
    while (x != a.end() && x.key() == skipped) ++x;
    while (y != b.end() && y.key() == skipped) ++y;
    if (x == a.end() || y == b.end()) return x == a.end() && y == b.end();
    if (x.key() != y.key() || *x != *y) return false;
    ++x;
    ++y;
  }
}

}  // namespace

bool ChangesNothing(const Object& stored, const Object& admitted) {
  if (!stored.is_object() || !admitted.is_object() || stored.size() != admitted.size()) {
    return false;
  }
  for (auto x = stored.begin(), y = admitted.begin(); x != stored.end(); ++x, ++y) {
    if (x.key() != y.key()) return false;
    if (x.key() == "metadata" && x->is_object() && y->is_object()) {
      if (!SameMembersExcept(*x, *y, "resourceVersion")) return false;
    } else if (*x != *y) {
      return false;
    }
  }
  return true;
}

void SetResourceVersion(Object& object, uint64_t resource_version) {
  SetMetadataField(object, "resourceVersion", Cat(resource_version));
}

std::optional<uint64_t> ParseResourceVersion(std::string_view text) {
  if (text.empty()) return std::nullopt;
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

uint64_t ResourceVersionNumber(const Object& o) {
  return ParseResourceVersion(ResourceVersionOf(o)).value_or(0);
}

std::string NewUid() {
  std::array<uint8_t, 16> b{};
  size_t got = 0;
  while (got < b.size()) {
    ssize_t n = getrandom(b.data() + got, b.size() - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;  // cannot happen on Linux >= 3.17; fall through with what we have
    }
    got += static_cast<size_t>(n);
  }
  b[6] = static_cast<uint8_t>((b[6] & 0x0f) | 0x40);  // version 4
  b[8] = static_cast<uint8_t>((b[8] & 0x3f) | 0x80);  // RFC 4122 variant
  return absl::StrFormat("%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                         b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
                         b[12], b[13], b[14], b[15]);
}

std::string FormatTimestamp(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

absl::Status NotFoundError(const ObjectKey& key) {
  return absl::NotFoundError(Cat("404 Not Found: ", key.ToString()));
}

absl::Status AlreadyExistsError(const ObjectKey& key) {
  return absl::AlreadyExistsError(Cat("409 AlreadyExists: ", key.ToString()));
}

}  // namespace clusterd::store
