// Copyright attune authors.
//
// A stand-in for the `attune` binary in the gemini integration tests:
// `[--plugin-path DIR] gemini guard|stop ARGS` runs the plugin's real hooks (RunGeminiHook), as
// `attune` would through the plugin's command table; `status DIR --json` prints
// DIR/test_status.json, which the test writes (exit 1 when missing).
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "gemini_hooks.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() >= 2 && args[0] == "--plugin-path") args.erase(args.begin(), args.begin() + 2);
  if (args.size() >= 2 && args[0] == "gemini") {
    return attune::agents::RunGeminiHook(args[1],
                                         std::vector<std::string>(args.begin() + 2, args.end()),
                                         std::cin, std::cout, std::cerr);
  }
  if (args.size() >= 2 && args[0] == "status") {
    std::ifstream f(args[1] + "/test_status.json");
    if (!f) {
      std::cerr << "attune (test stand-in): no " << args[1] << "/test_status.json\n";
      return 1;
    }
    std::cout << f.rdbuf();
    return 0;
  }
  std::cerr << "attune (test stand-in): supports only `gemini guard|stop ...` and "
               "`status DIR --json`\n";
  return 2;
}
