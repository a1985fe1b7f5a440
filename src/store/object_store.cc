#include "store/object_store.h"

#include <algorithm>

#include "store/admission.h"
#include "store/dir/dir_store.h"
#include "store/kube/kube_store.h"
#include "store/memory/memory_store.h"
#include "store/strings.h"

namespace clusterd::store {
namespace {

constexpr size_t kMaxSubdomainLength = 253;
constexpr size_t kMaxLabelLength = 63;

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// RFC 1123 label: lower-case alphanumerics and '-', starting and ending alphanumeric.
bool IsDns1123Label(std::string_view s) {
  if (s.empty() || s.size() > kMaxLabelLength) return false;
  if (!IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return IsLowerAlnum(c) || c == '-'; });
}

// RFC 1123 subdomain: dot-separated labels, at most 253 characters in all.
bool IsDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > kMaxSubdomainLength) return false;
  for (std::string_view label : Split(s, '.')) {
    if (label.empty() || !IsLowerAlnum(label.front()) || !IsLowerAlnum(label.back())) return false;
    for (char c : label) {
      if (!IsLowerAlnum(c) && c != '-') return false;
    }
  }
  return true;
}

// The name part of a label key or a label value: [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?.
bool IsQualifiedNamePart(std::string_view s) {
  if (s.empty() || s.size() > kMaxLabelLength) return false;
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [&](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

// Label key: optional DNS subdomain prefix and '/', then a qualified name part.
bool IsLabelKey(std::string_view key) {
  size_t slash = key.find('/');
  if (slash == std::string_view::npos) return IsQualifiedNamePart(key);
  return IsDns1123Subdomain(key.substr(0, slash)) && IsQualifiedNamePart(key.substr(slash + 1));
}

bool IsLabelValue(std::string_view value) { return value.empty() || IsQualifiedNamePart(value); }

std::string StringField(const Object& o, std::string_view field) {
  if (!o.is_object()) return "";
  auto meta = o.find("metadata");
  if (meta == o.end() || !meta->is_object()) return "";
  auto it = meta->find(field);
  if (it == meta->end() || !it->is_string()) return "";
  return it->get<std::string>();
}

absl::Status CheckStringMap(const Object& metadata, std::string_view field, std::string_view who) {
  auto it = metadata.find(field);
  if (it == metadata.end()) return absl::OkStatus();
  if (!it->is_object()) {
    return absl::InvalidArgumentError(
        Cat(who, ": metadata.", field, " must be an object of strings"));
  }
  for (const auto& [k, v] : it->items()) {
    if (!v.is_string()) {
      return absl::InvalidArgumentError(
          Cat(who, ": metadata.", field, ".", k, " must be a string, not ", v.type_name()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool IsClusterScoped(std::string_view resource) { return resource == kNodes; }

bool IsKnownResource(std::string_view resource) {
  return std::find(kKnownResources.begin(), kKnownResources.end(), resource) !=
         kKnownResources.end();
}

std::string ObjectKey::ToString() const {
  if (ns.empty()) return Cat(resource, "/", name);
  return Cat(resource, "/", ns, "/", name);
}

absl::StatusOr<LabelSelector> LabelSelector::Parse(std::string_view text) {
  LabelSelector selector;
  if (Trim(text).empty()) return selector;
  auto error = [&](std::string_view term, std::string_view why) {
    return absl::InvalidArgumentError(Cat("label selector \"", text, "\": term \"", term,
                                          "\": ", why,
                                          " (want key=value, key==value, key!=value, "
                                          "key or !key, separated by commas)"));
  };
  for (std::string_view raw : Split(text, ',')) {
    std::string_view term = Trim(raw);
    if (term.empty()) return error(raw, "empty requirement");
    Requirement req;
    std::string_view key;
    std::string_view value;
    if (term.front() == '!') {
      req.op = Op::kNotExists;
      key = Trim(term.substr(1));
      if (key.find_first_of("=!") != std::string_view::npos) {
        return error(term, "'!key' takes no value");
      }
    } else if (size_t pos = term.find("!="); pos != std::string_view::npos) {
      req.op = Op::kNotEquals;
      key = term.substr(0, pos);
      value = term.substr(pos + 2);
    } else if (size_t pos = term.find("=="); pos != std::string_view::npos) {
      req.op = Op::kEquals;
      key = term.substr(0, pos);
      value = term.substr(pos + 2);
    } else if (size_t pos = term.find('='); pos != std::string_view::npos) {
      req.op = Op::kEquals;
      key = term.substr(0, pos);
      value = term.substr(pos + 1);
    } else {
      req.op = Op::kExists;
      key = term;
    }
    key = Trim(key);
    value = Trim(value);
    if (key.empty()) return error(term, "missing label key");
    if (!IsLabelKey(key)) return error(term, Cat("invalid label key \"", key, "\""));
    if (!IsLabelValue(value)) {
      return error(term, Cat("invalid label value \"", value, "\""));
    }
    req.key = std::string(key);
    req.value = std::string(value);
    selector.requirements_.push_back(std::move(req));
  }
  return selector;
}

bool LabelSelector::Matches(const Object& object) const {
  if (requirements_.empty()) return true;
  const Object* labels = nullptr;
  if (object.is_object()) {
    auto meta = object.find("metadata");
    if (meta != object.end() && meta->is_object()) {
      auto it = meta->find("labels");
      if (it != meta->end() && it->is_object()) labels = &*it;
    }
  }
  auto lookup = [&](const std::string& key) -> const Object* {
    if (labels == nullptr) return nullptr;
    auto it = labels->find(key);
    if (it == labels->end() || !it->is_string()) return nullptr;
    return &*it;
  };
  for (const Requirement& req : requirements_) {
    const Object* v = lookup(req.key);
    switch (req.op) {
      case Op::kEquals:
        if (v == nullptr || v->get_ref<const std::string&>() != req.value) return false;
        break;
      case Op::kNotEquals:  // as in Kubernetes, an absent label satisfies key!=value
        if (v != nullptr && v->get_ref<const std::string&>() == req.value) return false;
        break;
      case Op::kExists:
        if (v == nullptr) return false;
        break;
      case Op::kNotExists:
        if (v != nullptr) return false;
        break;
    }
  }
  return true;
}

std::string LabelSelector::ToString() const {
  std::string out;
  for (const Requirement& r : requirements_) {
    if (!out.empty()) out += ',';
    switch (r.op) {
      case Op::kEquals:
        out += r.key + "=" + r.value;
        break;
      case Op::kNotEquals:
        out += r.key + "!=" + r.value;
        break;
      case Op::kExists:
        out += r.key;
        break;
      case Op::kNotExists:
        out += "!" + r.key;
        break;
    }
  }
  return out;
}

namespace {

constexpr std::string_view kFieldSelectorSyntax =
    " (want field=value, field==value or field!=value, separated by commas; '\\', ',' and '=' "
    "in a value escaped with '\\')";

// Splits at the commas that are not escaped.
std::vector<std::string_view> SplitFieldTerms(std::string_view text) {
  std::vector<std::string_view> terms;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == ',') {
      terms.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  terms.push_back(text.substr(start));
  return terms;
}

// Kubernetes' escaping of a field selector value.
std::string EscapeFieldValue(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == ',' || c == '=') out += '\\';
    out += c;
  }
  return out;
}

absl::StatusOr<std::string> UnescapeFieldValue(std::string_view value) {
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '=' || value[i] == ',') {
      return absl::InvalidArgumentError(Cat("'", std::string(1, value[i]), "' not escaped"));
    }
    if (value[i] != '\\') {
      out += value[i];
      continue;
    }
    if (i + 1 == value.size() ||
        (value[i + 1] != '\\' && value[i + 1] != ',' && value[i + 1] != '=')) {
      return absl::InvalidArgumentError("invalid escape sequence");
    }
    out += value[++i];
  }
  return out;
}

// The value of a dotted path as a field selector reads it: a string, else "".
std::string FieldValue(const Object& object, std::string_view path) {
  const Object* cur = &object;
  for (std::string_view part : Split(path, '.')) {
    if (!cur->is_object()) return "";
    auto it = cur->find(part);
    if (it == cur->end()) return "";
    cur = &*it;
  }
  return cur->is_string() ? cur->get<std::string>() : "";
}

}  // namespace

absl::StatusOr<FieldSelector> FieldSelector::Parse(std::string_view text) {
  FieldSelector selector;
  auto error = [&](std::string_view term, std::string_view why) {
    return absl::InvalidArgumentError(
        Cat("field selector \"", text, "\": term \"", term, "\": ", why, kFieldSelectorSyntax));
  };
  for (std::string_view raw : SplitFieldTerms(text)) {
    std::string_view term = Trim(raw);
    if (term.empty()) continue;  // as Kubernetes: "a=b,,c=d" is "a=b,c=d"
    // The operator is the first one in the term, as Kubernetes reads it ("a=b!=c" is a = "b!=c",
    // which the escaping of '=' makes unambiguous).
    size_t pos = term.find_first_of("!=");
    while (pos != std::string_view::npos && term[pos] == '!' && term.substr(pos, 2) != "!=") {
      pos = term.find_first_of("!=", pos + 1);
    }
    if (pos == std::string_view::npos) return error(term, "no operator");
    Requirement req;
    size_t op_size = 1;
    if (term.substr(pos, 2) == "!=") {
      req.op = Op::kNotEquals;
      op_size = 2;
    } else {
      req.op = Op::kEquals;
      if (term.substr(pos, 2) == "==") op_size = 2;
    }
    std::string_view field = Trim(term.substr(0, pos));
    if (field.empty()) return error(term, "missing field");
    absl::StatusOr<std::string> value = UnescapeFieldValue(Trim(term.substr(pos + op_size)));
    if (!value.ok()) return error(term, std::string(value.status().message()));
    req.field = std::string(field);
    req.value = *std::move(value);
    selector.requirements_.push_back(std::move(req));
  }
  return selector;
}

FieldSelector FieldSelector::Equal(std::string_view field, std::string_view value) {
  FieldSelector selector;
  selector.requirements_.push_back({std::string(field), Op::kEquals, std::string(value)});
  return selector;
}

bool FieldSelector::Matches(const Object& object) const {
  for (const Requirement& req : requirements_) {
    const bool equal = FieldValue(object, req.field) == req.value;
    if (equal != (req.op == Op::kEquals)) return false;
  }
  return true;
}

std::string FieldSelector::ToString() const {
  std::string out;
  for (const Requirement& r : requirements_) {
    if (!out.empty()) out += ',';
    out += r.field + (r.op == Op::kEquals ? "=" : "!=") + EscapeFieldValue(r.value);
  }
  return out;
}

std::string_view ToString(WatchEventType type) {
  switch (type) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
  }
  return "UNKNOWN";
}

absl::StatusOr<SharedObjectList> ObjectStore::ListShared(std::string_view resource,
                                                         const ListOptions& options) {
  absl::StatusOr<ObjectList> list = List(resource, options);
  if (!list.ok()) return list.status();
  SharedObjectList shared;
  shared.items.reserve(list->items.size());
  for (Object& o : list->items)
    shared.items.push_back(std::make_shared<const Object>(std::move(o)));
  shared.resource_version = std::move(list->resource_version);
  return shared;
}

std::string NameOf(const Object& o) { return StringField(o, "name"); }
std::string NamespaceOf(const Object& o) { return StringField(o, "namespace"); }
std::string ResourceVersionOf(const Object& o) { return StringField(o, "resourceVersion"); }
std::string UidOf(const Object& o) { return StringField(o, "uid"); }

ObjectKey KeyOf(std::string_view resource, const Object& o) {
  return ObjectKey{std::string(resource), IsClusterScoped(resource) ? "" : NamespaceOf(o),
                   NameOf(o)};
}

void ApplyMergePatch(Object& target, const Object& patch) {
  if (!patch.is_object()) {
    target = patch;
    return;
  }
  if (!target.is_object()) target = Object::object();
  for (const auto& [key, value] : patch.items()) {
    if (value.is_null()) {
      target.erase(key);
    } else {
      ApplyMergePatch(target[key], value);
    }
  }
}

// Kubernetes refuses a ConfigMap whose data and binaryData (keys and values, the latter
// decoded) add up to more than 1 MiB (1,048,576 bytes). Every backend refuses it too, so that
// what works on the embedded stores works on a cluster, and a dir store never holds a file it
// will not read back.
absl::Status CheckConfigMapSize(const Object& o, const std::string& who) {
  size_t total = 0;
  for (std::string_view field : {"data", "binaryData"}) {
    auto it = o.find(field);
    if (it == o.end() || !it->is_object()) continue;
    for (const auto& [key, value] : it->items()) {
      if (!value.is_string()) continue;
      // The values only, binaryData decoded, as the API server counts (a 1 MiB value under
      // a one-letter key is kept there; keys counted, the store refused it).
      const size_t size = value.get_ref<const std::string&>().size();
      total += field == "data" ? size : size / 4 * 3;
    }
  }
  if (total <= kMaxConfigMapDataBytes) return absl::OkStatus();
  return absl::InvalidArgumentError(Cat(who, ": data too long: ", total,
                                        " bytes, a ConfigMap holds at most ",
                                        kMaxConfigMapDataBytes, " bytes"));
}

absl::Status ValidateObject(std::string_view resource, const Object& o) {
  if (absl::Status s = CheckResource(resource); !s.ok()) return s;
  if (!o.is_object()) {
    return absl::InvalidArgumentError(
        Cat(resource, ": object must be a JSON object, not ", o.type_name()));
  }
  auto meta = o.find("metadata");
  if (meta == o.end() || !meta->is_object()) {
    return absl::InvalidArgumentError(Cat(resource, ": metadata must be an object"));
  }
  auto name_it = meta->find("name");
  if (name_it == meta->end() || !name_it->is_string() ||
      name_it->get_ref<const std::string&>().empty()) {
    return absl::InvalidArgumentError(Cat(resource, ": metadata.name is required"));
  }
  const std::string& name = name_it->get_ref<const std::string&>();
  std::string who = Cat(resource, " \"", name, "\"");
  if (!IsDns1123Subdomain(name)) {
    return absl::InvalidArgumentError(
        Cat(who,
            ": metadata.name must be a DNS-1123 subdomain (lower-case alphanumerics, '-' and '.', "
            "starting and ending alphanumeric, at most 253 characters)"));
  }
  auto ns_it = meta->find("namespace");
  bool has_ns =
      ns_it != meta->end() && !(ns_it->is_string() && ns_it->get_ref<const std::string&>().empty());
  if (has_ns && !ns_it->is_string()) {
    return absl::InvalidArgumentError(Cat(who, ": metadata.namespace must be a string"));
  }
  if (IsClusterScoped(resource)) {
    if (has_ns) {
      return absl::InvalidArgumentError(
          Cat(who, ": ", resource, " are cluster-scoped, metadata.namespace must be absent"));
    }
  } else {
    if (!has_ns) {
      return absl::InvalidArgumentError(Cat(who, ": metadata.namespace is required"));
    }
    const std::string& ns = ns_it->get_ref<const std::string&>();
    who = Cat(resource, " ", ns, "/", name);
    if (!IsDns1123Label(ns)) {
      return absl::InvalidArgumentError(
          Cat(who,
              ": metadata.namespace must be a DNS-1123 label (lower-case alphanumerics and '-', "
              "starting and ending alphanumeric, at most 63 characters)"));
    }
  }
  for (std::string_view field : {"uid", "resourceVersion", "creationTimestamp"}) {
    auto it = meta->find(field);
    if (it != meta->end() && !it->is_string()) {
      return absl::InvalidArgumentError(Cat(who, ": metadata.", field, " must be a string"));
    }
  }
  if (absl::Status s = CheckStringMap(*meta, "labels", who); !s.ok()) return s;
  if (absl::Status s = CheckStringMap(*meta, "annotations", who); !s.ok()) return s;
  return resource == kConfigMaps ? CheckConfigMapSize(o, who) : absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ObjectStore>> OpenStore(std::string_view spec) {
  return OpenStore(spec, StoreOptions{});
}

absl::StatusOr<std::unique_ptr<ObjectStore>> OpenStore(std::string_view spec,
                                                       const StoreOptions& options) {
  if (spec == "memory") return std::unique_ptr<ObjectStore>(std::make_unique<MemoryStore>());
  if (spec.starts_with("dir:") && spec.size() > 4) {
    auto store = DirStore::Open(std::string(spec.substr(4)));
    if (!store.ok()) return store.status();
    return std::unique_ptr<ObjectStore>(std::move(*store));
  }
  if (spec == "kube" || (spec.starts_with("kube:") && spec.size() > 5)) {
    std::string kubeconfig = spec == "kube" ? options.kubeconfig : std::string(spec.substr(5));
    absl::StatusOr<kube::KubeConfig> config =
        kubeconfig.empty() ? kube::LoadInClusterConfig()
                           : kube::LoadKubeconfig(kubeconfig, options.kube_context);
    if (!config.ok()) return config.status();
    kube::KubeStore::Options kube_options;
    kube_options.config = *std::move(config);
    kube_options.scoped_reads = options.kube_scoped_reads;
    auto store = kube::KubeStore::Open(std::move(kube_options));
    if (!store.ok()) return store.status();
    return std::unique_ptr<ObjectStore>(std::move(*store));
  }
  if (!options.kubeconfig.empty()) {
    return absl::InvalidArgumentError(
        Cat("store \"", spec, "\": a kubeconfig applies to the kube store only"));
  }
  return absl::InvalidArgumentError(Cat("store \"", spec,
                                        "\": want \"memory\", \"dir:PATH\" or \"kube\" (or "
                                        "\"kube:KUBECONFIG\")"));
}

}  // namespace clusterd::store
