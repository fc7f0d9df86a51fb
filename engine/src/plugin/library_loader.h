// Copyright attune authors.
//
// Loads one plugin library file and returns its checked descriptor. Checks happen in this order,
// each failure naming the file and the fix:
//   1. the file exists and is a regular file                     (kNotFound)
//   2. it is an ELF shared object                                 (kInvalidArgument)
//   3. it exports the `attune_plugin` alias (read from the file's `boostdll` section without
//      running any of its code)                                   (kInvalidArgument)
//   4. it loads with RTLD_NOW | RTLD_LOCAL (unresolved symbols fail here, with dlerror's text)
//   5. the descriptor's abi_version equals kAbiVersion, before any other field is read
//   6. kind, name and version are well-formed; the options schema, when declared, compiles
// A loaded library is kept in a process-lifetime registry and never unloaded.
#ifndef ATTUNE_ENGINE_PLUGIN_LIBRARY_LOADER_H_
#define ATTUNE_ENGINE_PLUGIN_LIBRARY_LOADER_H_

#include <string>

#include "attune/plugin.h"
#include "attune/status.h"

namespace attune::plugin {

Result<const PluginDescriptor*> LoadLibraryDescriptor(const std::string& path);

// Checks the descriptor fields after the ABI check (also used for test registrations).
Status CheckDescriptorFields(const PluginDescriptor& d, const std::string& where);

}  // namespace attune::plugin

#endif  // ATTUNE_ENGINE_PLUGIN_LIBRARY_LOADER_H_
