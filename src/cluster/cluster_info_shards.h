#pragma once

// Placement of per-node entries into the numbered cluster-info ConfigMaps of one kind
// (`cluster-info-device-<n>`, `cluster-info-switch-<n>`; fault-pipeline.md §1.4 "Splitting").
//
// The original recomputes the split from scratch on every write, so one node's fault can move
// entries between ConfigMaps and rewrite all of them. Here placement is stable: an entry stays
// in its shard while it fits; a new entry goes to the first shard with room (first fit, in
// index order) while the shard stays under 75 % of the limit, leaving room for entries to grow;
// a shard never exceeds `limit_bytes` unless a single entry alone is larger
// (it then gets a shard of its own, as in the original). So a change to one node dirties one
// shard (two when its grown entry has to move). Shards are never deleted: an empty or unused one
// is written as "". Not thread-safe; owned by the fault centre's worker.
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace clusterd::cluster {

class ClusterInfoShards {
 public:
  // 800 KiB, a safety margin under the 1 MiB ConfigMap limit (§1.4).
  static constexpr size_t kDefaultLimitBytes = 819200;

  // New entries are placed only while a shard stays within `fill_ratio` of the limit, so that
  // entries can grow (a node gaining faults) without moving to another shard.
  static constexpr double kDefaultFillRatio = 0.75;

  ClusterInfoShards(std::string name_prefix, size_t limit_bytes = kDefaultLimitBytes,
                    double fill_ratio = kDefaultFillRatio);

  // Sets `key`'s entry (rendered JSON). Marks the shards whose content changed.
  void Upsert(const std::string& key, std::string entry);
  void Remove(const std::string& key);
  bool Contains(const std::string& key) const { return entries_.count(key) != 0; }

  // Shards changed since the last call, ascending.
  std::vector<size_t> TakeDirty();
  // Marks every shard ever used dirty (a full re-publication).
  void MarkAllDirty();

  // The data value of shard `index`: the CJ map of its entries, or "" when it holds none.
  std::string Render(size_t index) const;
  std::string Name(size_t index) const;
  // Shards ever used (the remembered chunk count).
  size_t Count() const { return shards_.size(); }
  size_t EntryCount() const { return entries_.size(); }
  // The shard holding `key`, or -1.
  long ShardOf(const std::string& key) const;
  // Serialised size of shard `index` as Render would produce it.
  size_t ShardBytes(size_t index) const;

 private:
  struct Entry {
    size_t shard = 0;
    std::string json;
    size_t bytes = 0;  // "<quoted key>:<json>"
  };
  struct Shard {
    std::set<std::string> keys;
    size_t entry_bytes = 0;  // sum of Entry::bytes
  };
  static size_t SerialisedSize(const Shard& s);
  size_t Place(size_t bytes);  // first shard with room, possibly a new one
  void Detach(const std::string& key, Entry& e);

  const std::string prefix_;
  const size_t limit_;
  const size_t fill_;
  std::map<std::string, Entry> entries_;
  std::vector<Shard> shards_;
  std::set<size_t> dirty_;
};

}  // namespace clusterd::cluster
