#include "cluster/job_uuid.h"

#include <cstdint>
#include <random>

namespace clusterd::cluster {

std::string NewJobUuid() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  uint64_t hi = rng(), lo = rng();
  hi = (hi & 0xFFFFFFFFFFFF0FFFull) | 0x0000000000004000ull;  // version 4
  lo = (lo & 0x3FFFFFFFFFFFFFFFull) | 0x8000000000000000ull;  // RFC 4122 variant
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  auto put = [&](uint64_t v, int nibbles) {
    for (int i = nibbles - 1; i >= 0; --i) out.push_back(kHex[(v >> (4 * i)) & 0xF]);
  };
  put(hi >> 32, 8);
  out.push_back('-');
  put((hi >> 16) & 0xFFFF, 4);
  out.push_back('-');
  put(hi & 0xFFFF, 4);
  out.push_back('-');
  put(lo >> 48, 4);
  out.push_back('-');
  put(lo & 0xFFFFFFFFFFFFull, 12);
  return out;
}

}  // namespace clusterd::cluster
