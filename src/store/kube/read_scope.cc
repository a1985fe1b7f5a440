#include "store/kube/read_scope.h"

#include <algorithm>
#include <vector>

#include "store/strings.h"

namespace clusterd::store::kube {

std::string ReadScope::Key() const {
  std::vector<std::string> terms;
  for (const FieldSelector::Requirement& r : fields.requirements()) {
    terms.push_back(Cat(r.field, r.op == FieldSelector::Op::kEquals ? "=" : "!=", r.value));
  }
  std::sort(terms.begin(), terms.end());
  terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
  // Length-prefixed: a value may contain any character.
  std::string key = Cat(ns.size(), ":", ns);
  for (const std::string& t : terms) key += Cat(",", t.size(), ":", t);
  return key;
}

bool ReadScope::Holds(const Object& object) const {
  return (ns.empty() || NamespaceOf(object) == ns) && fields.Matches(object);
}

bool ReadScope::Covers(const ObjectKey& key) const {
  if (!ns.empty() && ns != key.ns) return false;
  for (const FieldSelector::Requirement& r : fields.requirements()) {
    if (r.field != "metadata.name" && r.field != "metadata.namespace") return false;
  }
  Object stub;
  stub["metadata"]["name"] = key.name;
  if (!key.ns.empty()) stub["metadata"]["namespace"] = key.ns;
  return fields.Matches(stub);
}

std::string ReadScope::ToString() const {
  std::string out = ns.empty() ? "all namespaces" : Cat("namespace ", ns);
  if (!fields.Empty()) out += Cat(", fields ", fields.ToString());
  return out;
}

}  // namespace clusterd::store::kube
