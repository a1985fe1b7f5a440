#include "sim/clusterd_waits.h"

#include "absl/strings/str_cat.h"
#include "httplib.h"
#include "nlohmann/json.hpp"

namespace clusterd::sim {

std::string ClusterdWaitText(const std::string& http_address, const std::string& job_id) {
  httplib::Client http("http://" + http_address);
  http.set_connection_timeout(0, 200000);
  http.set_read_timeout(0, 300000);
  auto res = http.Get(absl::StrCat("/api/clusterd/v1/recovery/", job_id));
  if (!res || res->status != 200) return "";
  const nlohmann::json body = nlohmann::json::parse(res->body, nullptr, false);
  if (!body.is_object() || !body.contains("waiting") || !body["waiting"].is_array()) return "";
  // The latest deadline is the one the job waits out (the phase's own timer outlasts a grace).
  std::string text;
  double most = -1;
  for (const nlohmann::json& w : body["waiting"]) {
    const double left = w.value("secondsLeft", -1.0);
    if (left < 0 || left <= most) continue;
    most = left;
    text = absl::StrCat("waits for ", w.value("for", "a timer"), ", ", static_cast<int64_t>(left),
                        "s left");
  }
  return text;
}

}  // namespace clusterd::sim
