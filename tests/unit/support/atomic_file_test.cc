// support::WriteFileAtomically: the content lands whole under the name, replaces an older version,
// leaves no temporary file, and a failure names the step and the path with the system's reason.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "attune/support/atomic_file.h"

namespace attune::support {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Dir {
  Dir() : path(fs::temp_directory_path() / ("attune-atomic-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Dir() { fs::remove_all(path); }
  fs::path path;
};

TEST_CASE("a file is written whole, replaced whole, and no temporary file is left", "[support]") {
  Dir dir;
  const fs::path target = dir.path / "record.json";
  for (Durability d : {Durability::kPowerLoss, Durability::kCrashOnly}) {
    REQUIRE(WriteFileAtomically(target.string(), "first\n", d).ok());
    CHECK(Read(target) == "first\n");
    const std::string big(1 << 20, 'x');
    REQUIRE(WriteFileAtomically(target.string(), big, d).ok());
    CHECK(Read(target) == big);
    REQUIRE(WriteFileAtomically(target.string(), "", d).ok());
    CHECK(Read(target).empty());
  }
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir.path)) {
    ++files;
    CHECK(entry.path().filename() == "record.json");
  }
  CHECK(files == 1);
}

TEST_CASE("a write that cannot happen names the step, the path and the reason", "[support]") {
  Dir dir;
  const std::string missing = (dir.path / "no-such-dir" / "f").string();
  Status s = WriteFileAtomically(missing, "x");
  CHECK(s.code() == StatusCode::kIoError);
  CHECK_THAT(s.message(), Catch::StartsWith("cannot create " + missing + ".tmp."));
  CHECK_THAT(s.message(), Catch::EndsWith(": No such file or directory"));
  // A directory in the way of the rename: the temporary file is removed again.
  fs::create_directories(dir.path / "taken");
  fs::create_directories(dir.path / "taken" / "inner");
  s = WriteFileAtomically((dir.path / "taken").string(), "x");
  CHECK(s.code() == StatusCode::kIoError);
  CHECK_THAT(s.message(), Catch::Contains("cannot rename a new version onto"));
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir.path)) {
    (void)entry;
    ++files;
  }
  CHECK(files == 1);  // only "taken"
}

}  // namespace
}  // namespace attune::support
