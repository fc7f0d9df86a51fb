// Helpers any test executable may use (attune_test_main puts tests/ on the include path):
// reading a file whole, and finding the attune binary under test.
#ifndef ATTUNE_TESTS_TEST_FILES_H_
#define ATTUNE_TESTS_TEST_FILES_H_

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace attune::testing {

// The file's bytes; empty when it cannot be read.
inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

#ifdef ATTUNE_BINARY_DIR
// $ATTUNE_BIN (ctest sets it), else this build's bin/attune (ATTUNE_BINARY_DIR comes from
// attune_add_test).
inline std::string AttuneBinaryPath() {
  const char* bin = std::getenv("ATTUNE_BIN");
  return bin ? bin : std::string(ATTUNE_BINARY_DIR) + "/bin/attune";
}
#endif

}  // namespace attune::testing

#endif  // ATTUNE_TESTS_TEST_FILES_H_
