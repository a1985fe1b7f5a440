#include "common/data_dir.h"

#include <filesystem>
#include <system_error>

#include "common/subprocess.h"

#ifndef CLUSTERD_INSTALL_DATA_DIR
#define CLUSTERD_INSTALL_DATA_DIR "/usr/share/clusterd"
#endif
#ifndef CLUSTERD_SOURCE_DATA_DIR
#define CLUSTERD_SOURCE_DATA_DIR ""
#endif

namespace clusterd {

std::string DefaultDataDir() {
  const std::filesystem::path relocated =
      std::filesystem::path(ExecutableDir()) / ".." / "share" / "clusterd";
  for (const std::filesystem::path& dir :
       {relocated, std::filesystem::path(CLUSTERD_INSTALL_DATA_DIR),
        std::filesystem::path(CLUSTERD_SOURCE_DATA_DIR)}) {
    std::error_code ec;
    if (!dir.empty() && std::filesystem::is_regular_file(dir / "faultCode.json", ec)) {
      return std::filesystem::weakly_canonical(dir, ec).string();
    }
  }
  return CLUSTERD_INSTALL_DATA_DIR;
}

}  // namespace clusterd
