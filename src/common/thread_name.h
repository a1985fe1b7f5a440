#pragma once

#include <string_view>

namespace clusterd {

// Names the calling thread so `top -H`, `ps -L` and gdb show what it runs. Linux keeps at most
// 15 bytes of a thread name: longer names are cut there. The names in use are listed in the
// threading map of docs/architecture.md.
void SetCurrentThreadName(std::string_view name);

}  // namespace clusterd
