#include "base/crash_point.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace attune {
namespace {

struct Armed {
  std::string name;
  long remaining = 0;  // hits left before the kill; 0 = disarmed
};

Armed& Config() {
  // Read once: the suite sets the variable before starting the process.
  static Armed armed = [] {
    Armed a;
    const char* spec = std::getenv("ATTUNE_CRASH_AT");
    if (!spec || !*spec) return a;
    std::string s(spec);
    auto colon = s.rfind(':');
    a.name = s.substr(0, colon);
    a.remaining = colon == std::string::npos ? 1 : std::atol(s.c_str() + colon + 1);
    return a;
  }();
  return armed;
}

}  // namespace

void CrashPoint(std::string_view name) {
  Armed& armed = Config();
  if (armed.remaining <= 0 || armed.name != name) return;
  if (--armed.remaining == 0) kill(getpid(), SIGKILL);
}

}  // namespace attune
