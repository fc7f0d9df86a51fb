// Copyright attune authors.
//
// A stand-in for the `attune` binary in the codex integration tests:
// `[--plugin-path DIR] codex guard|stop ARGS` runs the plugin's real hooks (RunCodexHook), as
// `attune` would through the plugin's command table (after sleeping the seconds in
// <campaign>/test_guard_stuck_s, when that file exists); `status DIR --json` prints
// DIR/test_status.json, which the test writes (exit 1 when missing).
#include <chrono>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "codex_hooks.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() >= 2 && args[0] == "--plugin-path") args.erase(args.begin(), args.begin() + 2);
  if (args.size() >= 4 && args[0] == "codex" && args[1] == "guard" && args[2] == "--campaign-dir") {
    // A test that needs a stuck guard writes the seconds to wait into this file.
    double stuck_s = 0;
    if (std::ifstream(args[3] + "/test_guard_stuck_s") >> stuck_s) {
      std::this_thread::sleep_for(std::chrono::duration<double>(stuck_s));
    }
  }
  if (args.size() >= 2 && args[0] == "codex") {
    return attune::agents::RunCodexHook(args[1],
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
  std::cerr << "attune (test stand-in): supports only `codex guard|stop ...` and "
               "`status DIR --json`\n";
  return 2;
}
