// Copyright attune authors.
//
// Test fixture shared by the agent plugins' CLI tests: runs one of the scripted local model
// servers in tests/fake_model/ (Messages, Responses or Gemini API: they take the same command
// line) with a scenario, waits until it listens on 127.0.0.1, and reads back what the CLI sent.
#ifndef ATTUNE_TESTS_SCRIPTED_SERVER_H_
#define ATTUNE_TESTS_SCRIPTED_SERVER_H_

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace attune::testing {

class ScriptedServer {
 public:
  // Starts `/usr/bin/python3 script --scenario dir/scenario.json --log dir/requests.jsonl
  // --port-file dir/port.txt --lifetime 300 --max-requests 100`; throws when it does not listen
  // within 10 s. `what` names the server in errors.
  ScriptedServer(const std::string& script, const std::filesystem::path& dir,
                 const nlohmann::json& scenario, const std::string& what);
  ~ScriptedServer();  // SIGTERM, then waits
  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;

  int port() const { return port_; }
  // The bodies of the logged POST requests whose path `wanted` accepts, in order.
  std::vector<nlohmann::json> PostBodies(const std::function<bool(const std::string& path)>& wanted) const;

 private:
  std::filesystem::path dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace attune::testing

#endif  // ATTUNE_TESTS_SCRIPTED_SERVER_H_
