// Copyright attune authors.
//
// WriteFileAtomically: the one way attune and its plugins replace a file so that a crash at any
// moment leaves either the old content or the complete new one under the name, never a mix or an
// empty file. The text goes to a temporary file next to the target (unique per process), which is
// fsynced, renamed over the target, and the directory is fsynced so that the rename itself
// survives a power loss. Durability::kCrashOnly skips both fsyncs: still atomic against a killed
// process, for state that can be rebuilt after a power loss (the simulated cluster's records).
//
// Errors are kIoError "cannot <step> <path>: <strerror>", so that a full disk or a read-only mount
// is recognisable (log/resource_advice.h adds what to do). Thread-safe for distinct targets.
#ifndef ATTUNE_SUPPORT_ATOMIC_FILE_H_
#define ATTUNE_SUPPORT_ATOMIC_FILE_H_

#include <string>
#include <string_view>

#include "attune/status.h"

namespace attune::support {

enum class Durability { kPowerLoss, kCrashOnly };

Status WriteFileAtomically(const std::string& path, std::string_view text,
                           Durability durability = Durability::kPowerLoss);

}  // namespace attune::support

#endif  // ATTUNE_SUPPORT_ATOMIC_FILE_H_
