// The cost of authorisation on a call's path (issue 17's bar: under 5 % added at p99 of report
// -> first signal, which is about 1.3-2 ms, docs/benchmarks.md): the job-identity check of a
// Recover call against the pod-IP index of a large cluster, a token's check, and the refusal of
// a forged caller (which also logs and counts).
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "auth/authorizer.h"
#include "auth/pod_identity_index.h"
#include "auth/policy.h"
#include "auth/token_file.h"
#include "benchmark/benchmark.h"
#include "common/clock.h"
#include "common/log.h"

namespace clusterd::auth {
namespace auth_bench {

// `jobs` jobs of 16 pods each, every pod with its own IP (10.x.y.z).
void Fill(PodIdentityIndex& index, int jobs) {
  for (int j = 0; j < jobs; ++j) {
    for (int p = 0; p < 16; ++p) {
      const int n = j * 16 + p;
      index.Set(absl::StrCat("ns/job", j, "-", p),
                absl::StrCat("10.", (n >> 16) & 255, ".", (n >> 8) & 255, ".", n & 255),
                absl::StrCat("uid-", j));
    }
  }
}

std::string PeerOf(int job, int pod) {
  const int n = job * 16 + pod;
  return absl::StrCat("ipv4:10.", (n >> 16) & 255, ".", (n >> 8) & 255, ".", n & 255, ":40000");
}

// A job's own pod acting for it (the path of every TaskD call on Kubernetes).
void BM_ActForJobFromItsPod(benchmark::State& state) {
  PodIdentityIndex index;
  const int jobs = static_cast<int>(state.range(0));
  Fill(index, jobs);
  PolicySource policy(DefaultPolicy(DeploymentMode::kKubernetes));
  Authorizer authorizer({.policy = &policy, .pods = &index}, Clock::Real());
  int i = 0;
  for (auto _ : state) {
    const int job = (i * 7919) % jobs;
    Caller caller{PeerOf(job, i % 16), "", ""};
    const std::string id = absl::StrCat("uid-", job);
    benchmark::DoNotOptimize(authorizer.ActForJob("/Recover/ReportProcessFault", caller, id));
    ++i;
  }
  state.counters["pods"] = static_cast<double>(index.size());
}
BENCHMARK(BM_ActForJobFromItsPod)->Arg(64)->Arg(1024)->Arg(4096);

// The same call with the caller's strings prepared outside the loop: the check alone.
void BM_ActForJobCheckOnly(benchmark::State& state) {
  PodIdentityIndex index;
  Fill(index, 1024);
  PolicySource policy(DefaultPolicy(DeploymentMode::kKubernetes));
  Authorizer authorizer({.policy = &policy, .pods = &index}, Clock::Real());
  Caller caller{PeerOf(512, 3), "", ""};
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        authorizer.ActForJob("/Recover/ReportProcessFault", caller, "uid-512"));
  }
}
BENCHMARK(BM_ActForJobCheckOnly);

// An operator call with a bearer token from a token file (its change check included).
void BM_PermitWithAToken(benchmark::State& state) {
  char path[] = "/tmp/clusterd-auth-bench-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) {
    state.SkipWithError("mkstemp failed");
    return;
  }
  const std::string line = "s3cret,ops,1,\"clusterd:operators\"\n";
  const bool written = write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  close(fd);
  auto tokens = TokenFileAuthenticator::Open(path, Clock::Real());
  if (!written || !tokens.ok()) {
    state.SkipWithError("cannot write or read the token file");
    unlink(path);
    return;
  }
  PolicySource policy(DefaultPolicy(DeploymentMode::kKubernetes));
  Authorizer authorizer({.policy = &policy, .tokens = tokens->get()}, Clock::Real());
  Caller caller{"ipv4:10.9.9.9:4000", "Bearer s3cret", ""};
  for (auto _ : state) {
    benchmark::DoNotOptimize(authorizer.Permit("/Recover/StressTest", caller, "stresstest"));
  }
  unlink(path);
}
BENCHMARK(BM_PermitWithAToken);

// A forged caller refused (the message, the metric; the log line is rate-limited).
void BM_ForgedCallerRefused(benchmark::State& state) {
  PodIdentityIndex index;
  Fill(index, 1024);
  PolicySource policy(DefaultPolicy(DeploymentMode::kKubernetes));
  Authorizer authorizer({.policy = &policy, .pods = &index}, Clock::Real());
  Caller caller{"ipv4:10.200.0.1:4000", "", ""};
  for (auto _ : state) {
    benchmark::DoNotOptimize(authorizer.ActForJob("/Recover/ReportProcessFault", caller, "uid-5"));
  }
}
BENCHMARK(BM_ForgedCallerRefused);

}  // namespace auth_bench
}  // namespace clusterd::auth
