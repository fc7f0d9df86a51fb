// Copyright attune authors.
//
// The plugin contract. A plugin is a shared library (a CMake MODULE) that exports exactly one
// Boost.DLL alias, `attune_plugin`, a function returning a pointer to a static PluginDescriptor.
// Use the ATTUNE_PLUGIN macro at the bottom of this file; never write the alias by hand.
//
// Rules:
//  - The host checks `abi_version` against kAbiVersion before calling anything else and refuses a
//    mismatch with a message that names the file, both versions and the fix (rebuild).
//  - kAbiVersion changes whenever any header in engine/include/attune changes; a test recomputes
//    the headers' hash and fails when they change without a bump (tests/unit/plugin/abi_test.cc).
//  - C++ types cross the boundary, so host and plugins must be built by the same compiler major
//    version against the same libstdc++ (true for everything built in one tree).
//  - No exception crosses the boundary: every virtual below is noexcept in spirit; a plugin catches
//    inside and returns a Status. ATTUNE_PLUGIN wraps the factory in a catch-all.
//  - The host never unloads a library, so objects created by a plugin may live as long as the
//    process.
//  - Thread-safety: the engine calls one plugin object from one thread at a time.
#ifndef ATTUNE_PLUGIN_H_
#define ATTUNE_PLUGIN_H_

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include <boost/dll/alias.hpp>
#include <nlohmann/json.hpp>

#include "attune/status.h"

namespace attune {

// Bump on every change to any header in engine/include/attune.
inline constexpr uint32_t kAbiVersion = 18;

enum class PluginKind { kStack, kLauncher, kAgent };
const char* PluginKindName(PluginKind kind);  // "stack", "launcher", "agent"

enum class LogLevel { kDebug, kInfo, kWarn, kError };

// What the host gives a plugin when it creates one. Valid for the call to the factory; plugins
// copy what they keep.
struct PluginContext {
  nlohmann::json config = nlohmann::json::object();  // the workflow's `with:` for this plugin
  std::string campaign_dir;   // the campaign's directory (empty outside a campaign, e.g. CLI tools)
  std::string data_dir;       // the root holding stacks/, skill/, workflows/ (knowledge as data)
  std::string attune_binary;  // absolute path of the running `attune` executable
  uint64_t seed = 0;          // the campaign seed (plugins derive their own streams from it)
  // Where plugin diagnostics go (the host's log). Never null when the host creates a plugin.
  std::function<void(LogLevel, const std::string&)> log;
};

// A plugin-provided CLI command: `attune <plugin-name> <command> ARGS...`.
struct PluginCommand {
  std::string name;     // "predict"
  std::string summary;  // one line for --help
};

// Base of every plugin object.
class Plugin {
 public:
  virtual ~Plugin() = default;
  // The name it was registered under ("megatron", "sim", "heuristic").
  virtual std::string Name() const = 0;
  // Extra CLI commands this plugin offers (none by default).
  virtual std::vector<PluginCommand> Commands() const { return {}; }
  // Runs one of Commands(); returns the process exit code (0 ok, 1 failure, 2 usage).
  virtual int RunCommand(const std::string& command, const std::vector<std::string>& args,
                         std::ostream& out, std::ostream& err);
};

// The factory every plugin exports through its descriptor.
using PluginFactory = Result<std::unique_ptr<Plugin>> (*)(const PluginContext& context);

struct PluginDescriptor {
  uint32_t abi_version;  // kAbiVersion of the headers the plugin was built against
  PluginKind kind;
  const char* name;     // unique among loaded plugins: [a-z0-9-]+
  const char* version;  // the plugin's own version, recorded in the campaign log
  PluginFactory create;
  // The schema of the plugin's options (the workflow's `with:` block, PluginContext::config) as
  // JSON text in the JSON Schema subset of docs/plugins.md "Options", or nullptr when the plugin
  // declares none. The host reads it WITHOUT creating the plugin: `attune validate` and
  // `attune run` check every `with:` block against it (keys with did-you-mean, types, ranges,
  // file:line:col) before anything is recorded, and the host refuses to load a library whose
  // schema does not compile. The factory should validate its config with the same text
  // (attune::support::ValidateOptions) so that the plugin and `attune validate` agree.
  // Static storage; never freed.
  const char* options_schema = nullptr;
};

}  // namespace attune

// The single exported symbol's alias name.
#define ATTUNE_PLUGIN_SYMBOL "attune_plugin"

// Declares a plugin library. FACTORY is `Result<std::unique_ptr<Plugin>>(const PluginContext&)`.
// Use once per library, at namespace scope:
//   ATTUNE_PLUGIN(attune::PluginKind::kStack, "megatron", "0.1.0", megatron::Create)
// A plugin that takes options declares their schema (a `const char*` to static JSON text):
//   ATTUNE_PLUGIN_WITH_OPTIONS(attune::PluginKind::kLauncher, "local", "0.1.0",
//                              local::CreateLocalLauncher, local::kOptionsSchema)
#define ATTUNE_PLUGIN(KIND, NAME, VERSION, FACTORY) \
  ATTUNE_PLUGIN_WITH_OPTIONS(KIND, NAME, VERSION, FACTORY, nullptr)

#define ATTUNE_PLUGIN_WITH_OPTIONS(KIND, NAME, VERSION, FACTORY, OPTIONS_SCHEMA)               \
  namespace attune_plugin_export {                                                              \
  inline ::attune::Result<std::unique_ptr<::attune::Plugin>> SafeCreate(                        \
      const ::attune::PluginContext& context) {                                                 \
    try {                                                                                       \
      return FACTORY(context);                                                                  \
    } catch (const std::exception& e) {                                                         \
      return ::attune::Status::Internal(std::string("plugin '") + NAME +                        \
                                        "' threw from its factory: " + e.what());               \
    } catch (...) {                                                                             \
      return ::attune::Status::Internal(std::string("plugin '") + NAME +                        \
                                        "' threw a non-standard exception from its factory");   \
    }                                                                                           \
  }                                                                                             \
  inline const ::attune::PluginDescriptor kDescriptor{::attune::kAbiVersion, KIND, NAME,        \
                                                      VERSION, &SafeCreate, OPTIONS_SCHEMA};    \
  extern "C" __attribute__((visibility("default"))) const ::attune::PluginDescriptor*           \
  attune_plugin_descriptor_v1() {                                                               \
    return &kDescriptor;                                                                        \
  }                                                                                             \
  }                                                                                             \
  BOOST_DLL_ALIAS(attune_plugin_export::attune_plugin_descriptor_v1, attune_plugin)

#endif  // ATTUNE_PLUGIN_H_
