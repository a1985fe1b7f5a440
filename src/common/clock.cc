#include "common/clock.h"

namespace clusterd {

Clock& Clock::Real() {
  static RealClock* clock = new RealClock();
  return *clock;
}

}  // namespace clusterd
