// Copyright attune authors.
//
// printf into a std::string, for fixed-format text (log lines the simulator renders, messages with
// numbers printed as C prints them). Plugins link attune::support but not fmt.
#ifndef ATTUNE_SUPPORT_PRINTF_H_
#define ATTUNE_SUPPORT_PRINTF_H_

#include <string>

namespace attune::support {

__attribute__((format(printf, 1, 2))) std::string StrFormat(const char* format, ...);

}  // namespace attune::support

#endif  // ATTUNE_SUPPORT_PRINTF_H_
