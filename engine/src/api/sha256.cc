#include <openssl/evp.h>

#include <array>
#include <cstdio>

#include "attune/hash.h"

namespace attune {
namespace {

std::array<unsigned char, 32> Digest(std::string_view data) {
  std::array<unsigned char, 32> out{};
  unsigned int len = 0;
  // EVP_Digest is one call: no context to leak on any path.
  EVP_Digest(data.data(), data.size(), out.data(), &len, EVP_sha256(), nullptr);
  return out;
}

}  // namespace

std::string Sha256Hex(std::string_view data) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(64);
  for (unsigned char byte : Digest(data)) {
    hex.push_back(kHex[byte >> 4]);
    hex.push_back(kHex[byte & 0xf]);
  }
  return hex;
}

unsigned long long StableHash64(std::string_view data) {
  auto digest = Digest(data);
  unsigned long long value = 0;
  for (int i = 0; i < 8; ++i) value = (value << 8) | digest[i];
  return value;
}

}  // namespace attune
