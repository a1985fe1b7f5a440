#include "cluster/fault_subscriptions.h"

#include "absl/strings/str_cat.h"

namespace clusterd::cluster {

std::string FaultSubscriptions::PublisherKey(const std::string& job_id, const std::string& role) {
  return absl::StrCat(job_id, "\n", role);
}

std::string FaultSubscriptions::NormaliseJobId(const std::string& job_id) {
  return job_id.empty() ? std::string(kClusterJobId) : job_id;
}

FaultSubscriptions::Registration FaultSubscriptions::Register(const std::string& raw_job_id,
                                                              const std::string& role,
                                                              const JobKnownFn& known) {
  const std::string job_id = NormaliseJobId(raw_job_id);
  const std::string key = PublisherKey(job_id, role);
  Registration r;
  absl::MutexLock lock(&mu_);
  if (publishers_.count(key) == 0) {
    if (roles_by_job_.count(job_id) == 0 && roles_by_job_.size() >= kMaxServedJobs) {
      r.code = 500;
      r.info = absl::StrCat("jobId=", job_id, " out of max serve jobs");
      r.rpc_error = true;
      return r;
    }
    if (job_id != kClusterJobId && (!known || !known(job_id, role))) {
      r.code = 402;
      r.info = absl::StrCat("jobId=", job_id, " not exist and is not multi-instance");
      r.rpc_error = true;
      return r;
    }
  }
  Publisher& p = publishers_[key];
  p = Publisher{job_id, role, {}};
  roles_by_job_[job_id].insert(role);
  r.code = 0;
  r.info = "register success";
  r.publisher = key;
  if (job_id == kClusterJobId) {
    for (const auto& [id, entries] : entries_) {
      auto d = OfferLocked(p, key, BuildFaultMsgSignal(id, entries));
      r.initial.insert(r.initial.end(), d.begin(), d.end());
    }
  } else if (std::vector<FaultDevice> list = EntriesLocked(job_id); !list.empty()) {
    r.initial = OfferLocked(p, key, BuildFaultMsgSignal(job_id, list));
  }
  return r;
}

bool FaultSubscriptions::IsRegistered(const std::string& job_id, const std::string& role) const {
  absl::MutexLock lock(&mu_);
  return publishers_.count(PublisherKey(NormaliseJobId(job_id), role)) != 0;
}

bool FaultSubscriptions::Serves(const std::string& job_id) const {
  absl::MutexLock lock(&mu_);
  return roles_by_job_.count(job_id) != 0;
}

size_t FaultSubscriptions::ServedJobs() const {
  absl::MutexLock lock(&mu_);
  return roles_by_job_.size();
}

std::vector<FaultSubscriptions::Delivery> FaultSubscriptions::OfferLocked(Publisher& p,
                                                                          const std::string& key,
                                                                          FaultMsgSignal signal) {
  auto it = p.last_sent.find(signal.job_id);
  if (it != p.last_sent.end() && it->second.SameContent(signal)) return {};
  p.last_sent[signal.job_id] = signal;
  return {Delivery{key, std::move(signal)}};
}

std::vector<FaultDevice> FaultSubscriptions::EntriesLocked(const std::string& id) const {
  std::vector<FaultDevice> out;
  if (auto it = entries_.find(id); it != entries_.end()) out = it->second;
  if (auto m = instance_members_.find(id); m != instance_members_.end()) {
    for (const std::string& member : m->second) {
      if (member == id) continue;
      if (auto it = entries_.find(member); it != entries_.end()) {
        out.insert(out.end(), it->second.begin(), it->second.end());
      }
    }
  }
  return out;
}

std::vector<FaultSubscriptions::Delivery> FaultSubscriptions::RefreshLocked(
    const std::string& target, const JobExistsFn& exists) {
  std::vector<Delivery> out;
  const std::vector<FaultDevice> list = EntriesLocked(target);
  auto append = [&](std::vector<Delivery> d) {
    for (auto& x : d) out.push_back(std::move(x));
  };
  if (auto roles = roles_by_job_.find(target); roles != roles_by_job_.end()) {
    for (const std::string& role : roles->second) {
      const std::string key = PublisherKey(target, role);
      Publisher& p = publishers_[key];
      if (!list.empty()) {
        append(OfferLocked(p, key, BuildFaultMsgSignal(target, list)));
      } else if (auto last = p.last_sent.find(target);
                 last != p.last_sent.end() && last->second.signal_type != kSignalTypeNormal) {
        append(OfferLocked(p, key, NormalSignal(target)));
      }
    }
  }
  if (auto roles = roles_by_job_.find(std::string(kClusterJobId)); roles != roles_by_job_.end()) {
    const bool live = exists && exists(target);
    for (const std::string& role : roles->second) {
      const std::string key = PublisherKey(std::string(kClusterJobId), role);
      Publisher& p = publishers_[key];
      if (live && !list.empty()) {
        append(OfferLocked(p, key, BuildFaultMsgSignal(target, list)));
        continue;
      }
      auto last = p.last_sent.find(target);
      if (last == p.last_sent.end()) continue;
      if (!live) {
        p.last_sent.erase(last);
      } else if (last->second.signal_type != kSignalTypeNormal) {
        append(OfferLocked(p, key, NormalSignal(target)));
      }
    }
  }
  return out;
}

std::vector<FaultSubscriptions::Delivery> FaultSubscriptions::Update(const JobFaultRanks& faults,
                                                                     const JobExistsFn& exists) {
  absl::MutexLock lock(&mu_);
  const std::string& id = faults.job_id;
  std::vector<FaultDevice> entries = FaultServiceEntries(faults);
  const bool has = !entries.empty();
  if (has) {
    entries_[id] = std::move(entries);
  } else {
    entries_.erase(id);
  }
  std::string instance = faults.multi_instance_job_id;
  if (instance == id) instance.clear();
  if (auto old = instance_of_.find(id); old != instance_of_.end() && old->second != instance) {
    instance_members_[old->second].erase(id);
  }
  if (!instance.empty()) {
    instance_of_[id] = instance;
    if (has) {
      instance_members_[instance].insert(id);
    } else {
      instance_members_[instance].erase(id);
    }
  } else {
    instance_of_.erase(id);
  }
  std::vector<Delivery> out = RefreshLocked(id, exists);
  if (!instance.empty()) {
    auto more = RefreshLocked(instance, exists);
    for (auto& d : more) out.push_back(std::move(d));
  }
  return out;
}

std::vector<FaultSubscriptions::Delivery> FaultSubscriptions::JobGone(
    const std::string& job_id, const std::string& multi_instance_id) {
  absl::MutexLock lock(&mu_);
  entries_.erase(job_id);
  instance_of_.erase(job_id);
  if (!multi_instance_id.empty()) instance_members_[multi_instance_id].erase(job_id);
  auto gone = [](const std::string&) { return false; };
  std::vector<Delivery> out = RefreshLocked(job_id, gone);
  if (!multi_instance_id.empty() && multi_instance_id != job_id) {
    auto more = RefreshLocked(multi_instance_id, gone);
    for (auto& d : more) out.push_back(std::move(d));
  }
  return out;
}

}  // namespace clusterd::cluster
