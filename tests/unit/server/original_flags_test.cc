// The original ClusterD's command line read by clusterd (server/original_flags.h): Go's flag
// forms, the original's ranges, refusals that name clusterd's flag, and pass-through.
#include "server/original_flags.h"

#include "gtest/gtest.h"

namespace clusterd::server {
namespace original_flags_test {

std::vector<std::string> Args(std::vector<std::string> argv) {
  argv.insert(argv.begin(), "clusterd");
  absl::StatusOr<OriginalFlagTranslation> t = TranslateOriginalFlags(argv);
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return {};
  t->args.erase(t->args.begin());
  return t->args;
}

std::string Refusal(std::vector<std::string> argv) {
  argv.insert(argv.begin(), "clusterd");
  absl::StatusOr<OriginalFlagTranslation> t = TranslateOriginalFlags(argv);
  EXPECT_FALSE(t.ok());
  return t.ok() ? "" : std::string(t.status().message());
}

TEST(OriginalFlagsTest, TheShippedCommandLineReadsAsClusterdFlags) {
  // The original's Deployment runs exactly this.
  EXPECT_EQ(Args({"-logFile=/var/log/mindx-dl/clusterd/clusterd.log", "-logLevel=0",
                  "--enable-healthz=true", "--healthz-address=11253"}),
            (std::vector<std::string>{"--log-file=/var/log/mindx-dl/clusterd/clusterd.log",
                                      "--log-level=info", "--http-open-root",
                                      "--http-listen=0.0.0.0:11253"}));
}

TEST(OriginalFlagsTest, GoFlagFormsAreAllAccepted) {
  EXPECT_EQ(Args({"-logLevel", "-1"}), std::vector<std::string>{"--log-level=debug"});
  EXPECT_EQ(Args({"--logLevel=3"}), std::vector<std::string>{"--log-level=critical"});
  EXPECT_EQ(Args({"-logLevel=1"}), std::vector<std::string>{"--log-level=warning"});
  EXPECT_EQ(Args({"-maxAge", "30", "-maxBackups=180"}),
            (std::vector<std::string>{"--log-max-age=30", "--log-max-backups=180"}));
  EXPECT_EQ(Args({"-useProxy"}), std::vector<std::string>{"--grpc-listen=127.0.0.1:8899"});
  EXPECT_EQ(Args({"-useProxy=T"}), std::vector<std::string>{"--grpc-listen=127.0.0.1:8899"});
  EXPECT_TRUE(Args({"-useProxy=false"}).empty());
  EXPECT_EQ(Args({"-version"}), std::vector<std::string>{"--version"});
  EXPECT_EQ(Args({"--tls-cert-file=/c.pem", "--tls-private-key-file", "/k.pem"}),
            (std::vector<std::string>{"--http-tls-cert=/c.pem", "--http-tls-key=/k.pem"}));
}

TEST(OriginalFlagsTest, ClusterdFlagsAndValuesPassThrough) {
  EXPECT_EQ(
      Args({"--store", "dir:/var/lib/clusterd", "--log-level=debug", "-h"}),
      (std::vector<std::string>{"--store", "dir:/var/lib/clusterd", "--log-level=debug", "-h"}));
  // After "--" nothing is a flag.
  EXPECT_EQ(Args({"--", "-logLevel=9"}), (std::vector<std::string>{"--", "-logLevel=9"}));
}

TEST(OriginalFlagsTest, ValuesTheOriginalRefusesAreRefusedNamingTheClusterdFlag) {
  EXPECT_NE(Refusal({"-logLevel=4"}).find("--log-level"), std::string::npos);
  EXPECT_NE(Refusal({"-logLevel=info"}).find("integer"), std::string::npos);
  EXPECT_NE(Refusal({"-maxAge=6"}).find("[7, 700]"), std::string::npos);
  EXPECT_NE(Refusal({"-maxAge=701"}).find("--log-max-age"), std::string::npos);
  EXPECT_NE(Refusal({"-maxBackups=0"}).find("--log-max-backups"), std::string::npos);
  EXPECT_NE(Refusal({"-maxBackups=181"}).find("(0, 180]"), std::string::npos);
  EXPECT_NE(Refusal({"--healthz-address=80"}).find("--http-listen"), std::string::npos);
  EXPECT_NE(Refusal({"-useProxy=maybe"}).find("true or false"), std::string::npos);
  EXPECT_NE(Refusal({"--enable-healthz=false"}).find("--http-listen=127.0.0.1"), std::string::npos);
  EXPECT_NE(Refusal({"-logFile"}).find("needs a value"), std::string::npos);
  EXPECT_NE(Refusal({"-logFile="}).find("stderr"), std::string::npos);
}

TEST(OriginalFlagsTest, EveryTranslationIsNoted) {
  absl::StatusOr<OriginalFlagTranslation> t =
      TranslateOriginalFlags({"clusterd", "-logLevel", "2", "-useProxy=false"});
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->notes.size(), 2u);
  EXPECT_EQ(t->notes[0], "original flag -logLevel 2 read as --log-level=error");
  EXPECT_EQ(t->notes[1], "original flag -useProxy=false read as the default");
}

}  // namespace original_flags_test
}  // namespace clusterd::server
