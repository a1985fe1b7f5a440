#include "test_pki.h"

#include <fstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "test_env.h"

namespace clusterd::testing {
namespace test_pki {

void Run(const std::string& cmd) {
  CommandResult r = RunCommand(cmd + " 2>&1");
  EXPECT_EQ(r.exit_code, 0) << cmd << "\n" << r.output;
}

}  // namespace test_pki

TestPki::TestPki(const std::string& dir) : dir_(dir) {
  test_pki::Run("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=test-ca -keyout " +
                dir_ + "/ca.key -out " + dir_ + "/ca.pem");
}

void TestPki::Issue(const std::string& name, const std::string& cn, bool server) {
  const std::string ext = Path(name + ".ext");
  std::ofstream(ext)
      << (server ? "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"
                 : "extendedKeyUsage=clientAuth\n");
  test_pki::Run(absl::StrCat("openssl req -newkey rsa:2048 -nodes -subj /CN=", cn, " -keyout ",
                             Path(name + ".key"), " -out ", Path(name + ".csr")));
  test_pki::Run(absl::StrCat("openssl x509 -req -days 2 -in ", Path(name + ".csr"), " -CA ",
                             Path("ca.pem"), " -CAkey ", Path("ca.key"),
                             " -CAcreateserial -extfile ", ext, " -out ", Path(name + ".pem")));
}

}  // namespace clusterd::testing
