#pragma once

#include <string>

#include "attune/status.h"

namespace attune::log {

// Adds what a failure caused by the file system (a full disk, a read-only mount) means for the
// user: that nothing acknowledged was lost and what to do. The OS's or RocksDB's message says what
// failed. Other failures get `otherwise` appended ("; <otherwise>") when it is not empty.
// Corruption is returned unchanged: its own message carries the advice.
Status WithResourceAdvice(Status s, const std::string& dir, const std::string& otherwise = "");

}  // namespace attune::log
