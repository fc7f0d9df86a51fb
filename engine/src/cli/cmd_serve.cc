// `attune serve [ROOT...]`: the live dashboard (docs/serve.md). Read-only.
#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <ostream>

#include "cli/args.h"
#include "plugin/plugin_host.h"
#include "serve/server.h"

namespace attune::cli {

namespace {

std::atomic<bool> g_stop{false};
extern "C" void OnServeStopSignal(int) { g_stop.store(true); }

Result<std::string> NewToken() {
  std::ifstream random("/dev/urandom", std::ios::binary);
  unsigned char bytes[16];
  if (!random.read(reinterpret_cast<char*>(bytes), sizeof(bytes))) {
    return Status::IoError("cannot read /dev/urandom to make a token; give --token TOKEN");
  }
  static const char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) {
    token += kHex[b >> 4];
    token += kHex[b & 15];
  }
  return token;
}

Status CheckRoots(const std::vector<std::string>& roots) {
  for (const auto& r : roots) {
    std::error_code ec;
    if (!std::filesystem::is_directory(r, ec)) {
      return Status::InvalidArgument("ROOT '" + r +
                                     "' is not a directory; give folders that hold "
                                     "campaign directories (or campaign directories themselves)");
    }
  }
  return Status::Ok();
}

}  // namespace

int RunServe(const std::vector<std::string>& args, Env& env) {
  ArgParser p("serve [ROOT...] [--port N] [--bind ADDR] [--token T]",
              "Serves a live, read-only dashboard of every campaign directory under the ROOTs "
              "(default: the current directory): campaigns list, campaign pages, a JSON API under "
              "/api/ and live updates. Binds 127.0.0.1; any other address needs a token (one is "
              "generated and printed when --token is not given). docs/serve.md.");
  p.Options()("port", po::value<unsigned>()->default_value(8080), "TCP port (0: any free port)")(
      "bind", po::value<std::string>()->default_value("127.0.0.1"), "address to listen on")(
      "token", po::value<std::string>(),
      "every request must carry it (?token=, a Bearer header or the cookie the page sets)")(
      "max-connections", po::value<unsigned>()->default_value(64), "open connections at most")(
      "max-streams", po::value<unsigned>()->default_value(32),
      "live-update (event stream) clients at most");
  p.Positional("root", -1);
  int code = 0;
  if (!p.Parse(args, env, &code)) return code;
  serve::ServeOptions options;
  options.roots = p.Has("root") ? p.GetList("root") : std::vector<std::string>{"."};
  if (Status s = CheckRoots(options.roots); !s.ok()) return ReportError(env, "serve", s, false);
  const unsigned port = p.vm()["port"].as<unsigned>();
  if (port > 65535)
    return ReportError(
        env, "serve",
        Status::InvalidArgument("--port " + std::to_string(port) + " is not a TCP port (0..65535)"),
        false);
  options.port = static_cast<unsigned short>(port);
  options.bind = p.Get("bind");
  options.max_connections = p.vm()["max-connections"].as<unsigned>();
  options.max_event_streams = p.vm()["max-streams"].as<unsigned>();
  options.web_dir = (std::filesystem::path(DefaultDataDir()) / "web").string();
  auto loopback = serve::IsLoopback(options.bind);
  if (!loopback.ok()) {
    return ReportError(env, "serve",
                       Status::InvalidArgument("--bind " + loopback.status().message() +
                                               " (e.g. 127.0.0.1, 0.0.0.0, ::1)"),
                       false);
  }
  bool generated = false;
  if (p.Has("token")) {
    options.token = p.Get("token");
    if (options.token.size() < 8) {
      return ReportError(env, "serve",
                         Status::InvalidArgument("--token must be at least 8 characters"), false);
    }
  } else if (!*loopback) {
    auto token = NewToken();
    if (!token.ok()) return ReportError(env, "serve", token.status(), false);
    options.token = *token;
    generated = true;
  }
  std::signal(SIGINT, OnServeStopSignal);
  std::signal(SIGTERM, OnServeStopSignal);
  std::signal(SIGPIPE, SIG_IGN);
  Status s = serve::Serve(options, &g_stop, [&](const std::string& line) {
    if (line.rfind("warning:", 0) == 0) {
      *env.err << "attune serve: " << line << "\n";
      return;
    }
    std::string url = "http://" + line + "/";
    if (!options.token.empty()) url += "?token=" + options.token;
    *env.out << "attune serve: " << url
             << (generated ? "  (generated token; every request needs it)" : "") << "\nserving "
             << options.roots.size() << " root(s) read-only; Ctrl-C stops" << std::endl;
  });
  if (!s.ok()) return ReportError(env, "serve", s, false);
  return kExitOk;
}

}  // namespace attune::cli
