#include "attune/support/printf.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

namespace attune::support {

std::string StrFormat(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  int n = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string out(static_cast<size_t>(std::max(0, n)) + 1, '\0');
  std::vsnprintf(out.data(), out.size(), format, args);
  va_end(args);
  out.resize(static_cast<size_t>(std::max(0, n)));
  return out;
}

}  // namespace attune::support
