// ABI guard: the plugin ABI is every header in engine/include/attune. Whenever one changes,
// kAbiVersion must be bumped (old plugins must then be refused) and the hash below updated.
#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "attune/hash.h"
#include "attune/plugin.h"

namespace attune {
namespace {

namespace fs = std::filesystem;

// kAbiVersion -> SHA-256 of the headers' contents concatenated in file-name order, i.e.
//   cd engine/include/attune && cat $(ls *.h | LC_ALL=C sort) | sha256sum
const std::map<uint32_t, std::string> kRecordedAbiHashes = {
    {1, "7541165f04c5c5970eb1e7ca553ea957ec51b2c2a18d31ab2f49916fe99ee5db"},
    {2, "10210a73c3aa9a183529f491a5756b506dab811fcec0864a2897c95ad8dfc045"},
    {3, "22d84d2ecdaacdf12d7ea03aae20d44aec5df3cae953a52cc07a95f5804fe4e3"},
    {4, "6a649821012801c395133cce00d741e6084ebfb2c1ff8188d0d42ceb1017b99a"},
    {5, "41150dd1286e4b61f1cc876a1aee2122f9b0886f54af084792dfbb6c5d7a45a6"},
    {6, "4432602adc1757dc4c7bcda2764b1e74654f64d6cc0a58ea5798efc0d710f6a2"},
    {7, "0aa87508af3e6465261ea1a324849f601aca94e02a5f96e726868de2b6fdd6e1"},
    {8, "48edf96253a9029170302e2deb2108a481155d60fdf7a9985b6b3b3c95bacd48"},
    {9, "967e6861ff40505f34028dd0f7e35341e7dfee463e5c1759423c849571c90095"},
    {10, "8cbbd01c0ef1875ca000cfdfe7ed2444847842b9ba31a999895c4d07982c2b49"},
    {11, "72f0ec8cd8b93a2b1a6b7d58406f931a0ab2c4d4b42d6230ef4e6392e571c75d"},
    {12, "d8be28f79782a5b6c24b47395e1a864d254ffc3d25e05fba56415493fca55e7a"},
    {13, "3efb0e916a318604085d2053f9918a6afa3c01041d6339317926eedf7b1b2523"},
    {14, "d5b3346a68e853cfc8bb922ed19c403e5cfb8fc7adcdaec28b68c1b64686e992"},
    {15, "d6dced2a4e3e1352c17f2dd5d2628a8d91cbf2b0dfb5fd41d2e9521c2d269304"},
    {16, "05b3c85e326c575880e2f46b6c6c38d5b18e85409b4e6c4fb64177e5fa0d38fb"},
    {17, "beeca425d78a8a20ba19f11f33501b8f6f65a31f669daee9962247afcb83acd8"},
    {18, "173389274a7c19189ea16a2a3e84016c51be05721482bd672ec871ec2d61a1d1"},
};

std::string HeadersHash() {
  std::vector<fs::path> headers;
  for (const auto& e : fs::directory_iterator(std::string(ATTUNE_SOURCE_DIR) +
                                              "/engine/include/attune")) {
    if (e.path().extension() == ".h") headers.push_back(e.path());
  }
  std::sort(headers.begin(), headers.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
  std::string all;
  for (const auto& h : headers) {
    std::ifstream in(h, std::ios::binary);
    all.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return Sha256Hex(all);
}

TEST_CASE("the plugin ABI headers match the hash recorded for kAbiVersion", "[plugin][abi]") {
  std::string actual = HeadersHash();
  auto recorded = kRecordedAbiHashes.find(kAbiVersion);
  INFO("engine/include/attune changed (headers hash " << actual << "). Bump kAbiVersion in "
       "engine/include/attune/plugin.h and add {" << kAbiVersion + 1 << ", \"<new hash>\"} to "
       "kRecordedAbiHashes in tests/unit/plugin/abi_test.cc (the hash after the bump changes "
       "again: rerun this test and copy the hash it prints).");
  REQUIRE(recorded != kRecordedAbiHashes.end());
  CHECK(recorded->second == actual);
}

}  // namespace
}  // namespace attune
