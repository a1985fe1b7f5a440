#pragma once

// Bounds on what one request may carry (issue 16), checked by every handler before it reads,
// logs or echoes a field: the transport's 4 MiB message limit alone let one Init carry a 4 MiB
// jobId that was then logged twice per call. Pure checks plus the one rate-limited log every
// refusal of bad input goes through. Unit-tested in tests/unit/server/request_limits_test.cc.
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/clock.h"
#include "common/rate_limiter.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace clusterd::server {

// Ids, names, roles, codes and map keys: a Kubernetes UID is 36 bytes, an object name at most
// 253.
inline constexpr size_t kMaxIdBytes = 256;
// `jobNsName` is "<namespace>/<jobName>": 63 + 1 + 253 bytes.
inline constexpr size_t kMaxJobNsNameBytes = 320;
// Free text (Status.info, a public fault's description of up to 512 runes, stress-test results).
inline constexpr size_t kMaxTextBytes = 4096;

// Requests of a type that carries only ids (every field a singular string or number:
// ClientInfo, SwitchNicRequest, StressTestRequest, ...) are bounded as a whole, far below the
// transport's 4 MiB (which stays, as the original's, for the types with lists): the largest
// valid encoding, i.e. each string field at its bound plus kFieldOverheadBytes per field (tag,
// length, a number), plus kSmallMessageSlackBytes. ClientInfo: 64 + 2 * (256 + 16) = 608 bytes.
// Unknown fields count, so a 4 MiB unknown field in an Init is refused before anything reads it.
inline constexpr size_t kFieldOverheadBytes = 16;
inline constexpr size_t kSmallMessageSlackBytes = 64;

// The size bound of requests of `type`; 0 when the type has repeated, map or message fields
// (bounded by the transport's limit and the per-field checks only).
size_t MessageLimitOf(const google::protobuf::Descriptor& type);

// OK, or ResourceExhausted "request is <n> bytes, over the limit of <m> for <Type>".
absl::Status CheckRequestSize(const google::protobuf::Message& request);

// The bound of one string field, by its proto name.
size_t StringLimitOf(const google::protobuf::FieldDescriptor& field);

// OK, or InvalidArgument naming the first string of `request` over its bound, nested messages
// and map entries included: "status.info is 8192 bytes, over the limit of 4096". The value
// itself is never part of the message.
absl::Status CheckRequestStrings(const google::protobuf::Message& request);

// CheckRequestSize, then CheckRequestStrings, for a call of `method`. A refusal is counted
// (clusterd_grpc_bad_requests_total{method,reason="message_too_large" / "field_too_long"}),
// logged through BadInputLog, and returned as "<reason>, method=<method>" (ResourceExhausted /
// InvalidArgument): the handler answers it with the protocol's invalid-parameter code or as a
// gRPC status (RESOURCE_EXHAUSTED / INVALID_ARGUMENT).
absl::Status CheckRequestBounds(absl::string_view method, const google::protobuf::Message& request);

// Counts one refused request: clusterd_grpc_bad_requests_total{method,reason}.
void CountBadRequest(absl::string_view method, absl::string_view reason);

// The rate limit of log lines about bad input: a flood of bad requests must not flood the log
// (every request is still counted in a metric). At most `burst` lines at once, then one per
// 1/lines_per_second; each line that goes out names how many were suppressed before it.
// Thread-safe.
class BadInputLog {
 public:
  BadInputLog(Clock& clock, double lines_per_second, int64_t burst)
      : bucket_(lines_per_second, burst, clock) {}

  // True when a line may be written now; *suppressed is then the number of lines refused since
  // the last one that was allowed.
  bool Admit(int64_t* suppressed);

  // The process-wide log (real clock, 1 line/s after a burst of 10).
  static BadInputLog& Default();

 private:
  TokenBucket bucket_;
  std::atomic<int64_t> suppressed_{0};
};

}  // namespace clusterd::server
