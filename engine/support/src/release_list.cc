// Copyright attune authors.
#include "attune/support/release_list.h"

#include <fstream>
#include <sstream>

namespace attune::support {
namespace {

constexpr const char* kRevisionsLine = "# Revisions read:";

}  // namespace

Result<ReleaseList> ParseReleaseList(const std::string& text, const std::string& source,
                                     const std::string& tool, const ReleaseListEntry& entry) {
  const std::string regenerate = "; regenerate the file with " + tool;
  ReleaseList out;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind(kRevisionsLine, 0) == 0) {
      std::istringstream revs(line.substr(std::string(kRevisionsLine).size()));
      std::string rev;
      while (revs >> rev) {
        if (out.first.empty()) out.first = rev;
        out.last = rev;
      }
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    if (!entry.valid(line)) {
      return Status::InvalidArgument(source + ":" + std::to_string(number) + ": expected " +
                                     entry.expected + ", got '" + line + "'" + regenerate);
    }
    out.entries.push_back(line);
  }
  if (out.entries.empty() || out.first.empty()) {
    return Status::InvalidArgument(source + ": no entries, or no '" + kRevisionsLine + "' line" +
                                   regenerate);
  }
  return out;
}

Result<ReleaseList> LoadReleaseList(const std::string& path, const std::string& tool,
                                    const ReleaseListEntry& entry) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::NotFound(path + ": cannot read (is the data directory right? it should hold " +
                            "the file, which " + tool + " generates)");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return ParseReleaseList(text.str(), path, tool, entry);
}

}  // namespace attune::support
