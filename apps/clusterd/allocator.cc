#include "allocator.h"

#include "absl/strings/str_cat.h"

#ifdef CLUSTERD_WITH_MIMALLOC
#include <mimalloc.h>
#endif

namespace clusterd {

std::string AllocatorName() {
#ifdef CLUSTERD_WITH_MIMALLOC
  // Linked as a shared library ahead of libc, mimalloc takes every malloc and operator new of
  // the process. Calling into it here also keeps the linker from dropping it as unused.
  const int v = mi_version();  // e.g. 209 for 2.0.9
  return absl::StrCat("mimalloc ", v / 100, ".", (v / 10) % 10, ".", v % 10);
#else
  return "glibc";
#endif
}

}  // namespace clusterd
