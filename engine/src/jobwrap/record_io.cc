// Copyright attune authors.
//
// Atomic record files for the job wrapper: the support library's writer (fsync, rename, directory
// fsync), so that the wrapper and the local launcher that reads its records agree on durability.
#include <string>

#include "attune/support/atomic_file.h"
#include "jobwrap/job_wrapper.h"

namespace attune::jobwrap {

Status WriteFileAtomically(const std::string& path, const std::string& text) {
  return support::WriteFileAtomically(path, text);
}

}  // namespace attune::jobwrap
