#pragma once

// What clusterd's recovery controller of a job waits for now, for the progress line:
// "waits for the pre-exit grace, 7s left" ("" when it waits on no timer, or clusterd does not
// answer within a fraction of a second).
#include <string>

namespace clusterd::sim {

std::string ClusterdWaitText(const std::string& http_address, const std::string& job_id);

}  // namespace clusterd::sim
