// The claim a program takes on a dir store (clusterd's PATH/.clusterd.lock). flock(2) locks
// belong to open file descriptions, so two claims in one process conflict as two processes'
// would.

#include "store/dir/instance_lock.h"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/strings.h"
#include "store_test_util.h"

namespace clusterd::store {
namespace instance_lock_test {

using ::testing::HasSubstr;
using Mode = InstanceLock::Mode;

class InstanceLockTest : public ::testing::Test {
 protected:
  testing::TempDir tmp_;
  std::string path_ = tmp_.path() + "/.clusterd.lock";
};

TEST_F(InstanceLockTest, AnExclusiveClaimRefusesAnyOtherAndNamesTheHolder) {
  auto first = InstanceLock::Acquire(path_, Mode::kExclusive);
  ASSERT_TRUE(first.ok()) << first.status();
  for (Mode mode : {Mode::kExclusive, Mode::kShared}) {
    auto second = InstanceLock::Acquire(path_, mode);
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(std::string(second.status().message()), HasSubstr(Cat("pid ", getpid())));
    EXPECT_THAT(std::string(second.status().message()), HasSubstr(path_));
    EXPECT_THAT(std::string(second.status().message()), HasSubstr("exclusively"));
  }
  first->reset();  // released: free again
  EXPECT_TRUE(InstanceLock::Acquire(path_, Mode::kExclusive).ok());
}

TEST_F(InstanceLockTest, SharedClaimsCoexistAndKeepOutAnExclusiveOne) {
  auto a = InstanceLock::Acquire(path_, Mode::kShared);
  auto b = InstanceLock::Acquire(path_, Mode::kShared);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  auto alone = InstanceLock::Acquire(path_, Mode::kExclusive);
  ASSERT_FALSE(alone.ok());
  EXPECT_THAT(std::string(alone.status().message()), HasSubstr(Cat("pid ", getpid())));
  EXPECT_THAT(std::string(alone.status().message()), HasSubstr("shared"));
}

TEST_F(InstanceLockTest, ThePidIsTheFirstLineWhateverAnEarlierHolderLeft) {
  std::ofstream(path_) << "1234567\n";  // a longer pid from an earlier holder
  auto lock = InstanceLock::Acquire(path_, Mode::kShared);
  ASSERT_TRUE(lock.ok()) << lock.status();
  int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(InstanceLock::RecordedPid(fd), getpid());
  close(fd);
  // What a concurrent holder's shorter write over a longer one leaves.
  std::ofstream(path_) << "42\n567\n";
  fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_EQ(InstanceLock::RecordedPid(fd), 42);
  close(fd);
  std::ofstream(path_, std::ios::trunc) << "";
  fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_EQ(InstanceLock::RecordedPid(fd), std::nullopt);
  close(fd);
}

}  // namespace instance_lock_test
}  // namespace clusterd::store
