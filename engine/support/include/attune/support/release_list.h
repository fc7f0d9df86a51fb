// Copyright attune authors.
//
// Lists a tool generates from a project's releases (stacks/megatron/arguments.txt from
// tools/megatron_arguments.py, stacks/slime/arguments.txt, stacks/automodel/config_sections.txt):
// '#' comment lines, one "# Revisions read: A ... Z" line naming the revisions read, oldest
// first, then one entry a line.
//
// Pure functions apart from the file read; thread-safe.
#ifndef ATTUNE_SUPPORT_RELEASE_LIST_H_
#define ATTUNE_SUPPORT_RELEASE_LIST_H_

#include <functional>
#include <string>
#include <vector>

#include "attune/status.h"

namespace attune::support {

struct ReleaseList {
  std::vector<std::string> entries;  // in file order
  std::string first, last;           // the oldest and newest revisions read
};

// What a list's entries must look like: `valid` decides, `expected` says it in an error
// ("one flag such as --global-batch-size").
struct ReleaseListEntry {
  std::function<bool(const std::string&)> valid;
  std::string expected;
};

// Parses `text`. `source` names the file in errors ("FILE:LINE: expected ..., got '...'"), and
// every error says to regenerate the file with `tool`. An entry `entry` refuses, no entries or no
// revisions line is InvalidArgument.
Result<ReleaseList> ParseReleaseList(const std::string& text, const std::string& source,
                                     const std::string& tool, const ReleaseListEntry& entry);

// Reads and parses the file at `path`; NotFound when it cannot be read.
Result<ReleaseList> LoadReleaseList(const std::string& path, const std::string& tool,
                                    const ReleaseListEntry& entry);

}  // namespace attune::support

#endif  // ATTUNE_SUPPORT_RELEASE_LIST_H_
