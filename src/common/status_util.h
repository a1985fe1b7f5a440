#pragma once

#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace clusterd {

// `status` with `context` prefixed to its message ("context: message"), keeping the code and
// payloads, so each layer can say which object it was working on without losing why it
// failed. OK stays OK.
inline absl::Status Annotate(const absl::Status& status, std::string_view context) {
  if (status.ok()) return status;
  // Spelled out because this Abseil's string_view is not std::string_view.
  const absl::string_view prefix(context.data(), context.size());
  absl::Status annotated(status.code(), status.message().empty()
                                            ? std::string(prefix)
                                            : absl::StrCat(prefix, ": ", status.message()));
  status.ForEachPayload([&annotated](absl::string_view type_url, const absl::Cord& payload) {
    annotated.SetPayload(type_url, payload);
  });
  return annotated;
}

namespace status_internal {

inline const absl::Status& ToStatus(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& ToStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

}  // namespace status_internal
}  // namespace clusterd

#define CLUSTERD_STATUS_CONCAT_INNER_(a, b) a##b
#define CLUSTERD_STATUS_CONCAT_(a, b) CLUSTERD_STATUS_CONCAT_INNER_(a, b)

// Returns the status of `expr` (an absl::Status or absl::StatusOr<T>) from the enclosing
// function when it is not OK.
#define CLUSTERD_RETURN_IF_ERROR(expr)                                                     \
  do {                                                                                     \
    if (const absl::Status clusterd_status_ = ::clusterd::status_internal::ToStatus(expr); \
        !clusterd_status_.ok()) {                                                          \
      return clusterd_status_;                                                             \
    }                                                                                      \
  } while (false)

// Evaluates `expr` (an absl::StatusOr<T>); on error returns its status from the enclosing
// function, otherwise moves the value into `lhs`, which may declare a variable
// (`auto x`, `std::string x`) or name an existing one. Expands to several statements: do not
// use it as the body of an unbraced if/for. A type containing a comma needs an alias.
#define CLUSTERD_ASSIGN_OR_RETURN(lhs, expr)                                                      \
  CLUSTERD_ASSIGN_OR_RETURN_IMPL_(CLUSTERD_STATUS_CONCAT_(clusterd_status_or_, __COUNTER__), lhs, \
                                  expr)

#define CLUSTERD_ASSIGN_OR_RETURN_IMPL_(status_or, lhs, expr) \
  auto status_or = (expr);                                    \
  if (!status_or.ok()) return std::move(status_or).status();  \
  lhs = *std::move(status_or)
