// Copyright attune authors.
//
// Content hashing used across attune (recipe ids, the event hash chain, plugin file identity).
#ifndef ATTUNE_HASH_H_
#define ATTUNE_HASH_H_

#include <string>
#include <string_view>

namespace attune {

// Lowercase hex SHA-256 of `data` (64 characters).
std::string Sha256Hex(std::string_view data);

// A 64-bit value derived from `data` (the first 8 bytes of its SHA-256), for seeding
// deterministic per-name random streams.
unsigned long long StableHash64(std::string_view data);

}  // namespace attune

#endif  // ATTUNE_HASH_H_
