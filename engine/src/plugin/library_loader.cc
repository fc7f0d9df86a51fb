#include "plugin/library_loader.h"

#include <boost/dll/library_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "attune/support/json_schema.h"

namespace attune::plugin {
namespace {

namespace fs = std::filesystem;

// Every library ever loaded, deliberately leaked: unloading would invalidate objects, vtables
// and type_info that plugins handed out (the Boost.DLL "missuses" list).
std::vector<boost::dll::shared_library*>& LoadedLibraries() {
  static auto* libraries = new std::vector<boost::dll::shared_library*>();
  return *libraries;
}

bool IsElf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' &&
         magic[3] == 'F';
}

Status CheckFile(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return Status::NotFound("plugin library " + path + " does not exist; check the path, "
                            "--plugin-path and ATTUNE_PLUGIN_PATH");
  }
  if (!fs::is_regular_file(path, ec) || !IsElf(path)) {
    return Status::InvalidArgument(path + " is not a shared object (ELF); it is not an attune "
                                   "plugin: remove it from the plugin directory");
  }
  return Status::Ok();
}

Status CheckAliasExported(const std::string& path) {
  std::vector<std::string> symbols;
  try {
    boost::dll::library_info info(path);
    symbols = info.symbols("boostdll");
  } catch (const std::exception& e) {
    // library_info reports an unreadable ELF by throwing; say so with its words.
    return Status::InvalidArgument(path + " is not a readable shared object: " + e.what());
  }
  if (std::find(symbols.begin(), symbols.end(), ATTUNE_PLUGIN_SYMBOL) == symbols.end()) {
    return Status::InvalidArgument(
        path + " does not export the attune plugin entry point '" ATTUNE_PLUGIN_SYMBOL
               "': it is not an attune plugin, or its sources lack ATTUNE_PLUGIN(...). Build "
               "plugins with attune_add_plugin() and the ATTUNE_PLUGIN macro (docs/plugins.md)");
  }
  return Status::Ok();
}

Result<boost::dll::shared_library*> Load(const std::string& path) {
  auto mode = boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local;
  try {
    auto lib = std::make_unique<boost::dll::shared_library>(path, mode);
    LoadedLibraries().push_back(lib.get());
    return lib.release();
  } catch (const std::exception& e) {
    // The throwing overload keeps dlerror's text ("undefined symbol: X"), which the
    // error_code overload loses.
    return Status::InvalidArgument(
        "plugin library " + path + " could not be loaded: " + e.what() +
        ". A missing dependency or an undefined symbol usually means the plugin was built "
        "against another attune or library version: rebuild it (cmake --build build)");
  }
}

bool IsPluginNameChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }

}  // namespace

Status CheckDescriptorFields(const PluginDescriptor& d, const std::string& where) {
  if (d.kind != PluginKind::kStack && d.kind != PluginKind::kLauncher &&
      d.kind != PluginKind::kAgent) {
    return Status::InvalidArgument(where + ": the descriptor has an unknown plugin kind " +
                                   std::to_string(static_cast<int>(d.kind)));
  }
  std::string name = d.name ? d.name : "";
  if (name.empty() || !std::all_of(name.begin(), name.end(), IsPluginNameChar)) {
    return Status::InvalidArgument(where + ": plugin name '" + name +
                                   "' must be non-empty and use only [a-z0-9-]");
  }
  if (d.version == nullptr || d.create == nullptr) {
    return Status::InvalidArgument(where + ": plugin '" + name +
                                   "' has no version or no factory in its descriptor");
  }
  if (d.options_schema != nullptr) {
    auto schema = support::JsonSchema::Parse(d.options_schema);
    if (!schema.ok()) {
      return Status::InvalidArgument(where + ": plugin '" + name + "' declares an invalid " +
                                     schema.status().message() +
                                     "; fix its ATTUNE_PLUGIN_WITH_OPTIONS schema (docs/plugins.md "
                                     "\"Options\")");
    }
  }
  return Status::Ok();
}

Result<const PluginDescriptor*> LoadLibraryDescriptor(const std::string& path) {
  ATTUNE_RETURN_IF_ERROR(CheckFile(path));
  ATTUNE_RETURN_IF_ERROR(CheckAliasExported(path));
  ATTUNE_ASSIGN_OR_RETURN(boost::dll::shared_library * lib, Load(path));
  const PluginDescriptor* d = nullptr;
  try {
    auto& entry = lib->get_alias<const PluginDescriptor*()>(ATTUNE_PLUGIN_SYMBOL);
    d = entry();
  } catch (const std::exception& e) {
    // get_alias throws when the alias cannot be resolved; the entry itself is noexcept C code.
    return Status::InvalidArgument(path + ": cannot resolve '" ATTUNE_PLUGIN_SYMBOL "': " +
                                   e.what());
  }
  if (d == nullptr) {
    return Status::InvalidArgument(path + ": its '" ATTUNE_PLUGIN_SYMBOL "' returned no "
                                   "descriptor; use the ATTUNE_PLUGIN macro");
  }
  if (d->abi_version != kAbiVersion) {
    return Status::FailedPrecondition(
        path + " was built for attune plugin ABI " + std::to_string(d->abi_version) +
        " but this attune uses ABI " + std::to_string(kAbiVersion) +
        "; rebuild the plugin against this attune's headers (engine/include/attune)");
  }
  ATTUNE_RETURN_IF_ERROR(CheckDescriptorFields(*d, path));
  return d;
}

}  // namespace attune::plugin
