#include "server/request_limits.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/metrics.h"

namespace clusterd::server {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

absl::Status TooLong(const std::string& path, size_t size, size_t limit) {
  return absl::InvalidArgumentError(
      absl::StrCat(path, " is ", size, " bytes, over the limit of ", limit));
}

absl::Status CheckStrings(const Message& message, const std::string& prefix) {
  const Reflection* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    const std::string name = absl::StrCat(prefix, field->name());
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
      const size_t limit = StringLimitOf(*field);
      std::string scratch;
      if (field->is_repeated()) {
        const int n = reflection->FieldSize(message, field);
        for (int i = 0; i < n; ++i) {
          const std::string& value =
              reflection->GetRepeatedStringReference(message, field, i, &scratch);
          if (value.size() > limit)
            return TooLong(absl::StrCat(name, "[", i, "]"), value.size(), limit);
        }
      } else {
        const std::string& value = reflection->GetStringReference(message, field, &scratch);
        if (value.size() > limit) return TooLong(name, value.size(), limit);
      }
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (field->is_repeated()) {
        const int n = reflection->FieldSize(message, field);
        for (int i = 0; i < n; ++i) {
          absl::Status s = CheckStrings(reflection->GetRepeatedMessage(message, field, i),
                                        absl::StrCat(name, "[", i, "]."));
          if (!s.ok()) return s;
        }
      } else {
        absl::Status s =
            CheckStrings(reflection->GetMessage(message, field), absl::StrCat(name, "."));
        if (!s.ok()) return s;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

size_t StringLimitOf(const FieldDescriptor& field) {
  const std::string& name = field.name();
  if (name == "info" || name == "description" || name == "result") return kMaxTextBytes;
  if (name == "jobNsName") return kMaxJobNsNameBytes;
  return kMaxIdBytes;
}

absl::Status CheckRequestStrings(const Message& request) { return CheckStrings(request, ""); }

size_t MessageLimitOf(const google::protobuf::Descriptor& type) {
  size_t limit = kSmallMessageSlackBytes;
  for (int i = 0; i < type.field_count(); ++i) {
    const FieldDescriptor& field = *type.field(i);
    if (field.is_repeated() || field.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) return 0;
    limit += kFieldOverheadBytes;
    if (field.cpp_type() == FieldDescriptor::CPPTYPE_STRING) limit += StringLimitOf(field);
  }
  return limit;
}

absl::Status CheckRequestSize(const Message& request) {
  const size_t limit = MessageLimitOf(*request.GetDescriptor());
  if (limit == 0) return absl::OkStatus();
  // Unknown fields count too: they are what an oversized request of these types carries.
  const size_t size = request.ByteSizeLong();
  if (size <= limit) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat("request is ", size,
                                                   " bytes, over the limit of ", limit, " for ",
                                                   request.GetDescriptor()->name()));
}

absl::Status CheckRequestBounds(absl::string_view method, const Message& request) {
  // The strings first: a field over its bound is the more precise reason.
  if (absl::Status s = CheckRequestStrings(request); !s.ok()) {
    CountBadRequest(method, "field_too_long");
    if (int64_t suppressed = 0; BadInputLog::Default().Admit(&suppressed)) {
      LogWarn("grpc", "request refused: a field is too long",
              {{"method", method}, {"error", s.message()}, {"suppressed", suppressed}});
    }
    return absl::InvalidArgumentError(absl::StrCat(s.message(), ", method=", method));
  }
  absl::Status s = CheckRequestSize(request);
  if (s.ok()) return s;
  CountBadRequest(method, "message_too_large");
  if (int64_t suppressed = 0; BadInputLog::Default().Admit(&suppressed)) {
    LogWarn("grpc", "request refused: message too large",
            {{"method", method}, {"error", s.message()}, {"suppressed", suppressed}});
  }
  return absl::ResourceExhaustedError(absl::StrCat(s.message(), ", method=", method));
}

void CountBadRequest(absl::string_view method, absl::string_view reason) {
  MetricsRegistry::Default()
      .GetCounter("clusterd_grpc_bad_requests_total",
                  "gRPC requests refused as bad input (undecodable body, field too long, message "
                  "too large), by "
                  "method and reason.",
                  {{"method", std::string(method)}, {"reason", std::string(reason)}})
      .Increment();
}

bool BadInputLog::Admit(int64_t* suppressed) {
  if (!bucket_.TryAcquire()) {
    suppressed_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  *suppressed = suppressed_.exchange(0, std::memory_order_relaxed);
  return true;
}

BadInputLog& BadInputLog::Default() {
  static BadInputLog* log = new BadInputLog(Clock::Real(), 1, 10);
  return *log;
}

}  // namespace clusterd::server
