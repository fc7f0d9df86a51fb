// Copyright attune authors.
//
// PluginHost: finds, loads (Boost.DLL) and checks plugin libraries, and creates plugin objects.
//
// Search path order: --plugin-path entries, then ATTUNE_PLUGIN_PATH (colon-separated), then the
// build tree's plugins/ directory, then the install directory (<prefix>/lib/attune/plugins).
// A library file is named attune_<kind>_<name>.so. Loading never unloads (objects outlive their
// creators freely). Errors name the file and the fix: file missing, symbol missing, ABI mismatch
// (both versions), duplicate name, factory failure.
//
// Not thread-safe.
#ifndef ATTUNE_ENGINE_PLUGIN_PLUGIN_HOST_H_
#define ATTUNE_ENGINE_PLUGIN_PLUGIN_HOST_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attune/agent.h"
#include "attune/launcher.h"
#include "attune/plugin.h"
#include "attune/stack.h"
#include "attune/status.h"
#include "attune/support/json_schema.h"
#include "attune/support/names.h"

namespace attune {

struct LoadedPlugin {
  std::string name;
  std::string version;
  PluginKind kind = PluginKind::kStack;
  std::string path;    // the library file ("" for test registrations)
  std::string sha256;  // of the file, recorded in the campaign log
  const PluginDescriptor* descriptor = nullptr;
  // The compiled schema of the plugin's `with:` options; nullopt when it declares none.
  std::optional<support::JsonSchema> options_schema;
};

class PluginHost {
 public:
  explicit PluginHost(std::vector<std::string> search_path);
  ~PluginHost();

  // --plugin-path entries, ATTUNE_PLUGIN_PATH, the build tree, the install directory.
  static std::vector<std::string> DefaultSearchPath(const std::vector<std::string>& cli_paths);

  // Loads every attune_*.so in the search path. The first error stops discovery (a broken
  // library is never silently skipped).
  Status DiscoverAll();

  // Loads one library file (tests and explicit paths).
  Result<const LoadedPlugin*> LoadFile(const std::string& path);

  // Test seam: registers a descriptor without a library. Duplicate names are refused.
  Status RegisterForTesting(const PluginDescriptor* descriptor);

  // kNotFound lists what was searched and suggests the nearest name ("did you mean 'sim'?").
  Result<const LoadedPlugin*> Find(PluginKind kind, const std::string& name) const;
  std::vector<const LoadedPlugin*> List() const;
  const std::vector<std::string>& search_path() const;

  // Creating a plugin first validates ctx.config against the plugin's options schema
  // (kInvalidArgument "plugin 'x': with.key: message"), then calls its factory.
  Result<std::unique_ptr<Stack>> CreateStack(const std::string& name, const PluginContext& ctx);
  Result<std::unique_ptr<Launcher>> CreateLauncher(const std::string& name,
                                                   const PluginContext& ctx);
  Result<std::unique_ptr<Agent>> CreateAgent(const std::string& name, const PluginContext& ctx);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// The folder holding stacks/, skill/, workflows/: ATTUNE_DATA_DIR, else the source tree of a
// binary that lives in its build tree, else <exe dir>/../share/attune (an installed binary).
std::string DefaultDataDir();

// Name suggestions live in the support library; the engine uses them unqualified.
using support::NearestName;

}  // namespace attune

#endif  // ATTUNE_ENGINE_PLUGIN_PLUGIN_HOST_H_
