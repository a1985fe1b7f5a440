#include "model/go_json.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/sv.h"

namespace clusterd::model::go_json {
namespace {

absl::Status WrongType(std::string_view what, const Json& value, std::string_view want) {
  return absl::InvalidArgumentError(
      absl::StrCat("field \"", Sv(what), "\" is ", value.type_name(), ", want ", Sv(want)));
}

// The field, or nullptr when it is missing or null (Go leaves the zero value).
const Json* Field(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

}  // namespace

absl::Status ExpectObject(const Json& value, std::string_view what, bool allow_null) {
  if (value.is_object() || (allow_null && value.is_null())) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(Sv(what), " is ", value.type_name(), ", want object"));
}

absl::Status ToInt64(const Json& value, std::string_view what, int64_t* out) {
  if (value.is_number_unsigned()) {
    const uint64_t u = value.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return absl::InvalidArgumentError(absl::StrCat("field \"", Sv(what), "\" overflows int64"));
    }
    *out = static_cast<int64_t>(u);
    return absl::OkStatus();
  }
  if (value.is_number_integer()) {
    *out = value.get<int64_t>();
    return absl::OkStatus();
  }
  return WrongType(what, value, "integer");
}

absl::Status ReadString(const Json& obj, std::string_view key, std::string* out) {
  const Json* v = Field(obj, key);
  if (v == nullptr) return absl::OkStatus();
  if (!v->is_string()) return WrongType(key, *v, "string");
  *out = v->get<std::string>();
  return absl::OkStatus();
}

absl::Status ReadBool(const Json& obj, std::string_view key, bool* out) {
  const Json* v = Field(obj, key);
  if (v == nullptr) return absl::OkStatus();
  if (!v->is_boolean()) return WrongType(key, *v, "bool");
  *out = v->get<bool>();
  return absl::OkStatus();
}

absl::Status ReadInt64(const Json& obj, std::string_view key, int64_t* out) {
  const Json* v = Field(obj, key);
  if (v == nullptr) return absl::OkStatus();
  return ToInt64(*v, key, out);
}

absl::Status ReadInt32(const Json& obj, std::string_view key, int32_t* out) {
  int64_t wide = *out;
  if (absl::Status s = ReadInt64(obj, key, &wide); !s.ok()) return s;
  if (wide < std::numeric_limits<int32_t>::min() || wide > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat("field \"", Sv(key), "\" overflows int32"));
  }
  *out = static_cast<int32_t>(wide);
  return absl::OkStatus();
}

absl::Status ReadUint32(const Json& obj, std::string_view key, uint32_t* out) {
  int64_t wide = *out;
  if (absl::Status s = ReadInt64(obj, key, &wide); !s.ok()) return s;
  if (wide < 0 || wide > std::numeric_limits<uint32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat("field \"", Sv(key), "\" overflows uint32"));
  }
  *out = static_cast<uint32_t>(wide);
  return absl::OkStatus();
}

absl::Status ReadStringMap(const Json& obj, std::string_view key,
                           std::map<std::string, std::string>* out, bool* was_null) {
  const Json* v = Field(obj, key);
  if (was_null != nullptr) *was_null = v == nullptr;
  out->clear();
  if (v == nullptr) return absl::OkStatus();
  if (!v->is_object()) return WrongType(key, *v, "object");
  for (const auto& [k, value] : v->items()) {
    if (value.is_null()) {
      (*out)[k] = "";
      continue;
    }
    if (!value.is_string()) return WrongType(absl::StrCat(Sv(key), ".", k), value, "string");
    (*out)[k] = value.get<std::string>();
  }
  return absl::OkStatus();
}

absl::Status ReadStringArray(const Json& obj, std::string_view key, std::vector<std::string>* out,
                             bool* was_null) {
  const Json* v = Field(obj, key);
  if (was_null != nullptr) *was_null = v == nullptr;
  out->clear();
  if (v == nullptr) return absl::OkStatus();
  if (!v->is_array()) return WrongType(key, *v, "array");
  for (const Json& e : *v) {
    if (e.is_null()) {
      out->emplace_back();
      continue;
    }
    if (!e.is_string()) return WrongType(absl::StrCat(Sv(key), "[]"), e, "string");
    out->push_back(e.get<std::string>());
  }
  return absl::OkStatus();
}

absl::Status ReadInt64Array(const Json& obj, std::string_view key, std::vector<int64_t>* out,
                            bool* was_null) {
  const Json* v = Field(obj, key);
  if (was_null != nullptr) *was_null = v == nullptr;
  out->clear();
  if (v == nullptr) return absl::OkStatus();
  if (!v->is_array()) return WrongType(key, *v, "array");
  for (const Json& e : *v) {
    int64_t n = 0;
    if (!e.is_null()) {
      if (absl::Status s = ToInt64(e, absl::StrCat(Sv(key), "[]"), &n); !s.ok()) return s;
    }
    out->push_back(n);
  }
  return absl::OkStatus();
}

}  // namespace clusterd::model::go_json
