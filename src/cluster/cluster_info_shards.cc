#include "cluster/cluster_info_shards.h"

#include "absl/strings/str_cat.h"
#include "cluster/cluster_info_render.h"
#include "common/canonical_json.h"

namespace clusterd::cluster {

ClusterInfoShards::ClusterInfoShards(std::string name_prefix, size_t limit_bytes,
                                     double fill_ratio)
    : prefix_(std::move(name_prefix)),
      limit_(limit_bytes),
      fill_(limit_bytes == SIZE_MAX ? SIZE_MAX
                                    : static_cast<size_t>(static_cast<double>(limit_bytes) * fill_ratio)) {}

size_t ClusterInfoShards::SerialisedSize(const Shard& s) {
  if (s.keys.empty()) return 0;
  return 2 + s.entry_bytes + (s.keys.size() - 1);  // braces and commas
}

size_t ClusterInfoShards::ShardBytes(size_t index) const {
  return index < shards_.size() ? SerialisedSize(shards_[index]) : 0;
}

size_t ClusterInfoShards::Place(size_t bytes) {
  for (size_t i = 0; i < shards_.size(); ++i) {
    const Shard& s = shards_[i];
    const size_t with = s.keys.empty() ? 2 + bytes : SerialisedSize(s) + 1 + bytes;
    if (with <= fill_ || s.keys.empty()) return i;
  }
  shards_.emplace_back();
  return shards_.size() - 1;
}

void ClusterInfoShards::Detach(const std::string& key, Entry& e) {
  Shard& s = shards_[e.shard];
  s.keys.erase(key);
  s.entry_bytes -= e.bytes;
  dirty_.insert(e.shard);
}

void ClusterInfoShards::Upsert(const std::string& key, std::string entry) {
  const size_t bytes = QuoteGoString(key).size() + 1 + entry.size();
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    Entry& e = it->second;
    if (e.json == entry) return;
    Shard& s = shards_[e.shard];
    const size_t grown = SerialisedSize(s) - e.bytes + bytes;
    if (grown <= limit_ || s.keys.size() == 1) {
      s.entry_bytes = s.entry_bytes - e.bytes + bytes;
      e.json = std::move(entry);
      e.bytes = bytes;
      dirty_.insert(e.shard);
      return;
    }
    Detach(key, e);
    e.json = std::move(entry);
    e.bytes = bytes;
    e.shard = Place(bytes);
    Shard& target = shards_[e.shard];
    target.keys.insert(key);
    target.entry_bytes += bytes;
    dirty_.insert(e.shard);
    return;
  }
  Entry e;
  e.json = std::move(entry);
  e.bytes = bytes;
  e.shard = Place(bytes);
  Shard& target = shards_[e.shard];
  target.keys.insert(key);
  target.entry_bytes += bytes;
  dirty_.insert(e.shard);
  entries_.emplace(key, std::move(e));
}

void ClusterInfoShards::Remove(const std::string& key) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  Detach(key, it->second);
  entries_.erase(it);
}

std::vector<size_t> ClusterInfoShards::TakeDirty() {
  std::vector<size_t> out(dirty_.begin(), dirty_.end());
  dirty_.clear();
  return out;
}

void ClusterInfoShards::MarkAllDirty() {
  for (size_t i = 0; i < shards_.size(); ++i) dirty_.insert(i);
}

std::string ClusterInfoShards::Render(size_t index) const {
  if (index >= shards_.size()) return "";
  std::vector<std::pair<std::string, const std::string*>> sorted;
  sorted.reserve(shards_[index].keys.size());
  for (const std::string& key : shards_[index].keys) {
    sorted.emplace_back(key, &entries_.at(key).json);
  }
  return RenderEntryMap(sorted);
}

std::string ClusterInfoShards::Name(size_t index) const { return absl::StrCat(prefix_, index); }

long ClusterInfoShards::ShardOf(const std::string& key) const {
  auto it = entries_.find(key);
  return it == entries_.end() ? -1 : static_cast<long>(it->second.shard);
}

}  // namespace clusterd::cluster
