// Feeds reset.json (the data of a `reset-config-<job>` ConfigMap, mounted into every pod of a
// job) to each of its readers: the model's parser with and without its checkCode, the training
// agent's parser and reset decision, and the recovery controller's four rewrites of it (§11.1),
// which start from whatever text the ConfigMap holds.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "client/reset_config_file.h"
#include "common/check_code.h"
#include "fuzz_util.h"
#include "model/reset_info.h"
#include "recovery/reset_config.h"

using namespace clusterd;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::AsText(data, size);

  // model: unchecked, then with the checkCode the canonical form asks for.
  absl::StatusOr<model::TaskResetInfo> info = model::ParseTaskResetInfo(text);
  if (info.ok()) {
    (void)model::ParseTaskResetInfo(text, model::TaskResetInfoCheckCode(*info));
    (void)model::ParseTaskResetInfo(model::RenderTaskResetInfo(*info));
  }
  (void)model::ParseTaskResetInfo(text, "0");

  // The training agent: checkCode over the exact bytes, then the action for its ranks.
  (void)client::VerifyResetCheckCode(text, Sha256Hex(text));
  absl::StatusOr<client::ResetConfig> config = client::ParseResetConfig(text);
  if (config.ok()) {
    const std::vector<int64_t> own_ranks = {0, 1, 7};
    (void)client::DecideResetAction(std::nullopt, *config, own_ranks);
    (void)client::DecideResetAction(client::ResetConfig{}, *config, own_ranks);
    (void)client::DecideResetAction(*config, client::ResetConfig{}, own_ranks);
    (void)config->HotResetMode();
  }

  // The recovery controller's rewrites, over the text as the old body.
  const absl::Time now = absl::FromUnixSeconds(1718000000);
  for (recovery::ResetOperation op :
       {recovery::ResetOperation::kClear, recovery::ResetOperation::kNotifyFaultFlushing,
        recovery::ResetOperation::kFault, recovery::ResetOperation::kRestartAllProcess}) {
    absl::StatusOr<recovery::TaskResetInfo> next =
        recovery::ApplyResetOperation(text, op, {3, 1, 3}, /*restart_fault_process=*/true, now);
    if (next.ok()) (void)recovery::RenderResetJson(*next);
  }
  store::Object cm = {{"apiVersion", "v1"},
                      {"kind", "ConfigMap"},
                      {"metadata",
                       {{"name", recovery::ResetConfigMapName("job")},
                        {"namespace", "default"},
                        {"resourceVersion", "7"}}},
                      {"data", {{"reset.json", std::string(text)}, {"checkCode", "x"}}}};
  (void)recovery::ResetConfigMapUpdate(cm, recovery::ResetOperation::kFault, {0}, false, now);
  (void)recovery::ParseResetOperation(text);
  return 0;
}
