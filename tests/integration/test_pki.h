#pragma once

#include <string>

namespace clusterd::testing {

// A CA and certificates made with the openssl command line at test time, in `dir`: ca.pem /
// ca.key, and <name>.pem / <name>.key for each Issue. Failures are test failures.
class TestPki {
 public:
  explicit TestPki(const std::string& dir);
  // A certificate signed by the CA: for 127.0.0.1 (server) or a client with common name `cn`.
  void Issue(const std::string& name, const std::string& cn, bool server);
  std::string Path(const std::string& file) const { return dir_ + "/" + file; }

 private:
  std::string dir_;
};

}  // namespace clusterd::testing
