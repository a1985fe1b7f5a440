#include "diagnosis/net_topology.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace clusterd::diagnosis {
namespace {

// Elements from the NPU up; equal path sets keep the lower one.
enum Layer { kNpu = 0, kRack, kRackL1Link, kL1, kL1L2Link, kL2, kPlane };

struct Element {
  Layer layer = kNpu;
  int64_t src_type = kObjectNpu;
  std::string src_id;
  int64_t dst_type = kObjectNpu;
  std::string dst_id;
  int64_t level = 1;
  std::string Key() const { return absl::StrCat(layer, "\x1f", src_id, "\x1f", dst_id); }
};

// The id of an alarm's source, lower-cased, is its public fault's influence nodeName (§7.5),
// which the fault centre accepts only as a DNS-1123 subdomain: hence '.', not '/'.
std::string RackId(const NpuNetPath& p) { return absl::StrCat(p.plane, ".rack-", p.rack); }
std::string L1Id(const NpuNetPath& p) { return absl::StrCat(p.plane, ".L1-", p.l1); }
std::string L2Id(const NpuNetPath& p) { return absl::StrCat(p.plane, ".L2-", p.l2); }

Element Single(Layer layer, int64_t type, std::string id) {
  return Element{layer, type, id, type, std::move(id), 1};
}
Element Link(Layer layer, int64_t src_type, std::string src, int64_t dst_type, std::string dst) {
  return Element{layer, src_type, std::move(src), dst_type, std::move(dst), 0};
}

// The elements a probe between two annotated NPUs of one plane runs through.
std::vector<Element> ElementsOf(const std::string& a, const NpuNetPath& pa, const std::string& b,
                                const NpuNetPath& pb) {
  std::vector<Element> out;
  out.push_back(Single(kNpu, kObjectNpu, a));
  out.push_back(Single(kNpu, kObjectNpu, b));
  out.push_back(Single(kRack, kObjectRackPlane, RackId(pa)));
  out.push_back(Single(kRack, kObjectRackPlane, RackId(pb)));
  if (pa.rack != pb.rack && !pa.l1.empty() && !pb.l1.empty()) {
    for (const NpuNetPath* p : {&pa, &pb}) {
      out.push_back(Link(kRackL1Link, kObjectRackPlane, RackId(*p), kObjectL1Plane, L1Id(*p)));
      out.push_back(Single(kL1, kObjectL1Plane, L1Id(*p)));
    }
    if (pa.l1 != pb.l1 && !pa.l2.empty() && !pb.l2.empty()) {
      for (const NpuNetPath* p : {&pa, &pb}) {
        out.push_back(Link(kL1L2Link, kObjectL1Plane, L1Id(*p), kObjectL2Plane, L2Id(*p)));
        out.push_back(Single(kL2, kObjectL2Plane, L2Id(*p)));
      }
    }
  }
  out.push_back(Single(kPlane, kObjectSuperPod, absl::StrCat("plane-", pa.plane)));
  return out;
}

// The annotated pair of a path, if both ends are known and share a plane.
bool Annotated(const FaultyPath& p, const NetTopology& t, const NpuNetPath** a,
               const NpuNetPath** b) {
  auto sa = t.find(p.src_addr), sb = t.find(p.dst_addr);
  if (sa == t.end() || sb == t.end() || sa->second.plane != sb->second.plane) return false;
  *a = &sa->second;
  *b = &sb->second;
  return true;
}

void AttributeKind(const std::vector<const FaultyPath*>& evaluated, bool loss,
                   const NetTopology& topology, std::vector<NetAlarm>& out) {
  struct Candidate {
    Element element;
    std::set<size_t> probed, faulty;
  };
  std::map<std::string, Candidate> candidates;
  std::vector<const FaultyPath*> direct;  // faulty but not annotated
  std::set<size_t> annotated_faulty;
  for (size_t i = 0; i < evaluated.size(); ++i) {
    const FaultyPath& p = *evaluated[i];
    const bool bad = loss ? p.loss : p.delay;
    const NpuNetPath *a = nullptr, *b = nullptr;
    if (!Annotated(p, topology, &a, &b)) {
      if (bad) direct.push_back(&p);
      continue;
    }
    if (bad) annotated_faulty.insert(i);
    for (Element& e : ElementsOf(p.src_addr, *a, p.dst_addr, *b)) {
      Candidate& c = candidates[e.Key()];
      c.element = std::move(e);
      c.probed.insert(i);
      if (bad) c.faulty.insert(i);
    }
  }
  std::vector<const Candidate*> full;
  for (const auto& [key, c] : candidates) {
    if (!c.faulty.empty() && c.faulty.size() == c.probed.size()) full.push_back(&c);
  }
  // Root causes: not strictly inside another fully faulty element's paths; equal sets keep the
  // lower layer, then the smaller key.
  std::vector<const Candidate*> causes;
  for (const Candidate* c : full) {
    bool dominated = false;
    for (const Candidate* o : full) {
      if (o == c || o->probed.size() < c->probed.size()) continue;
      if (!std::includes(o->probed.begin(), o->probed.end(), c->probed.begin(), c->probed.end())) {
        continue;
      }
      if (o->probed.size() > c->probed.size() ||
          std::pair(o->element.layer, o->element.Key()) <
              std::pair(c->element.layer, c->element.Key())) {
        dominated = true;
        break;
      }
    }
    if (!dominated) causes.push_back(c);
  }
  std::sort(causes.begin(), causes.end(), [](const Candidate* x, const Candidate* y) {
    return std::pair(x->element.layer, x->element.Key()) <
           std::pair(y->element.layer, y->element.Key());
  });
  std::set<size_t> covered;
  for (const Candidate* c : causes) {
    std::vector<const FaultyPath*> contributing;
    for (size_t i : c->faulty) contributing.push_back(evaluated[i]);
    NetAlarm a = AlarmOver(contributing, loss);
    a.src_type = c->element.src_type;
    a.src_id = c->element.src_id;
    a.dst_type = c->element.dst_type;
    a.dst_id = c->element.dst_id;
    a.level = c->element.level;
    out.push_back(std::move(a));
    covered.insert(c->faulty.begin(), c->faulty.end());
  }
  for (size_t i : annotated_faulty) {
    if (!covered.count(i)) direct.push_back(evaluated[i]);
  }
  NpuDirectRootCause(std::move(direct), loss, out);
}

}  // namespace

std::vector<NetAlarm> TopologyRootCause(const std::vector<FaultyPath>& faulty,
                                        const std::vector<FaultyPath>& evaluated,
                                        const NetTopology& topology) {
  // Every faulty path is evaluated; a caller that passes faulty paths missing from `evaluated`
  // still gets them attributed (NPU-direct or by topology).
  std::set<std::string> seen;
  std::vector<const FaultyPath*> all;
  auto add = [&](const FaultyPath& p) {
    const std::string key = absl::StrCat(p.task_id, "\x1f", p.src_type, "\x1f", p.src_addr, "\x1f",
                                         p.dst_type, "\x1f", p.dst_addr);
    if (seen.insert(key).second) all.push_back(&p);
  };
  for (const FaultyPath& p : evaluated) add(p);
  for (const FaultyPath& p : faulty) add(p);
  std::vector<NetAlarm> out;
  AttributeKind(all, true, topology, out);
  AttributeKind(all, false, topology, out);
  return out;
}

absl::StatusOr<NetTopology> NetTopologyOf(const SuperPodDevice& pod) {
  NetTopology out;
  std::map<std::string, std::string> owner;
  for (const auto& [name, node] : pod.nodes) {
    for (const auto& [phy, info] : node.npu_info) {
      if (info.addr.empty() || info.plane.empty() || node.rack_id.empty()) continue;
      auto [it, fresh] = owner.try_emplace(info.addr, name);
      if (!fresh) {
        return absl::InvalidArgumentError(absl::StrCat("super pod ", pod.super_pod_id, ": address ",
                                                       info.addr, " of node ", name,
                                                       " is also on node ", it->second));
      }
      out[info.addr] = NpuNetPath{info.plane, node.rack_id, info.l1, info.l2};
    }
  }
  return out;
}

}  // namespace clusterd::diagnosis
