// Copyright attune authors.
//
// Where the code that calls this was loaded from. Plugins link attune::support statically, so in a
// plugin these name the plugin's own shared library, and in the attune executable the executable.
// A plugin uses ThisModuleDir() to tell a child `attune` process where to find it again
// (`attune --plugin-path DIR PLUGIN COMMAND ...`), whatever search path the parent was given.
//
// Thread-safety: pure (asks the dynamic loader).
#ifndef ATTUNE_SUPPORT_MODULE_PATH_H_
#define ATTUNE_SUPPORT_MODULE_PATH_H_

#include <string>

namespace attune::support {

// The absolute path of the module (shared library or executable) holding this function's code;
// "" when the dynamic loader cannot tell.
std::string ThisModulePath();

// Its directory; "" when unknown.
std::string ThisModuleDir();

}  // namespace attune::support

#endif  // ATTUNE_SUPPORT_MODULE_PATH_H_
