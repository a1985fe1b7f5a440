#pragma once

#include <string>

namespace clusterd {

// The directory of the shipped data files (faultCode.json and the other policy files) when
// --data-dir is not given, first that holds faultCode.json of:
//   <directory of the executable>/../share/clusterd   an installed tree, whatever its prefix;
//   the install prefix's share/clusterd configured at build time;
//   the source tree's data/                           running from the build tree.
// When none does, the configured install path (start-up then names the missing file).
std::string DefaultDataDir();

}  // namespace clusterd
