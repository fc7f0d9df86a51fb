// Copyright attune authors.
#include "attune/agentkit/guard.h"

#include <filesystem>
#include <set>
#include <string>
#include <system_error>
#include <utility>

#include "guard_rules.h"
#include "attune/agentkit/shell_words.h"
#include "flags.h"

namespace attune::agentkit {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxNesting = 8;

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

std::string BaseName(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

fs::path Resolve(const std::string& path, const std::string& cwd) {
  fs::path p(path);
  if (p.is_relative()) p = fs::path(cwd.empty() ? "/" : cwd) / p;
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal() : canonical;
}

class Judge {
 public:
  Judge(const GuardConfig& config, std::string cwd) : config_(config), cwd_(std::move(cwd)) {}

  GuardDecision Script(const std::string& script, int depth) {
    if (depth > kMaxNesting) return Deny("commands are nested too deeply to check");
    auto commands = SplitCommands(script);
    if (!commands.ok()) {
      return Deny("cannot read this command line (" + commands.status().message() +
                  "); write a simpler command");
    }
    for (const SimpleCommand& c : *commands) {
      GuardDecision d = Command(c, depth);
      if (!d.allow) return d;
    }
    return Allow();
  }

 private:
  GuardDecision Command(const SimpleCommand& c, int depth) {
    for (const Word& a : c.assignments) {
      GuardDecision d = Assignment(a);
      if (!d.allow) return d;
    }
    for (const Redirect& r : c.redirects) {
      GuardDecision d = Redirection(r);
      if (!d.allow) return d;
    }
    return Argv(c.argv, 0, false, depth);
  }

  GuardDecision Assignment(const Word& a) {
    if (StartsWith(a.text, "KUBECONFIG=")) {
      return Deny("setting KUBECONFIG switches the cluster configuration; this is never allowed");
    }
    return Allow();
  }

  GuardDecision Redirection(const Redirect& r) {
    if (r.op == "<" || r.op == "<&" || r.op == "<<<") return Allow();
    const std::string& t = r.target.text;
    if (r.target.dynamic) return Deny("redirection to a computed path '" + t + "'");
    if ((r.op == ">&" || r.op == "<&") &&
        (t == "-" || t.find_first_not_of("0123456789") == std::string::npos)) {
      return Allow();
    }
    if (t == "/dev/null" || t == "/dev/stdout" || t == "/dev/stderr") return Allow();
    std::string v = EventLogViolation(config_, t, cwd_);
    if (!v.empty()) return Deny("redirection '" + r.op + " " + t + "': " + v);
    return Deny("redirection '" + r.op + " " + t +
                "' writes a file; the agent is read-only "
                "(only /dev/null is allowed)");
  }

  // argv[from..] is a command; `from_stdin` when xargs will append more arguments.
  GuardDecision Argv(const std::vector<Word>& argv, size_t from, bool from_stdin, int depth) {
    if (from >= argv.size()) return Allow();
    const Word& name = argv[from];
    if (name.dynamic) return Deny("the command name '" + name.text + "' is computed; write it out");
    CommandCall call;
    call.program_path = name.text;
    call.program = BaseName(name.text);
    call.args.assign(argv.begin() + static_cast<long>(from) + 1, argv.end());
    call.args_from_stdin = from_stdin;
    return Program(call, argv, from, depth);
  }

  GuardDecision Program(const CommandCall& call, const std::vector<Word>& argv, size_t from,
                        int depth) {
    const std::string& p = call.program;
    static const std::set<std::string> kShells = {"bash", "sh", "zsh", "dash", "ksh"};
    static const std::set<std::string> kKeywords = {
        "if",   "then", "elif", "else",     "fi",     "for", "while", "until", "do",
        "done", "case", "esac", "function", "select", "{",   "}",     "[["};
    if (kKeywords.count(p)) {
      return Deny("compound shell syntax ('" + p +
                  "') is not checked by the guard; run simple "
                  "commands joined by ; && || or |");
    }
    if (p == "!" || p == "nohup" || p == "time" || p == "exec" || p == "builtin") {
      return Argv(argv, from + 1, call.args_from_stdin, depth);
    }
    if (p == "command") return CommandBuiltin(call, argv, from, depth);
    if (kShells.count(p)) return Shell(call, depth);
    if (p == "eval") return Eval(call, depth);
    if (p == "env") return Env(argv, from + 1, call.args_from_stdin, depth);
    if (p == "sudo" || p == "doas")
      return SkipOptions(argv, from + 1, {"-u", "-g", "-C", "-h", "-p", "-U"}, false,
                         call.args_from_stdin, depth);
    if (p == "nice" || p == "ionice" || p == "stdbuf")
      return SkipOptions(argv, from + 1, {"-n", "-c", "-p", "-o", "-e", "-i"}, false,
                         call.args_from_stdin, depth);
    if (p == "timeout")
      return SkipOptions(argv, from + 1, {"-s", "-k", "--signal", "--kill-after"}, true,
                         call.args_from_stdin, depth);
    if (p == "xargs")
      return SkipOptions(argv, from + 1,
                         {"-I", "-L", "-n", "-P", "-d", "-E", "-s", "-a", "--arg-file",
                          "--delimiter", "--max-args", "--max-procs", "--max-lines", "--replace"},
                         false, true, depth);
    if (p == "watch") return Watch(call, depth);
    if (p == "find") return Find(call, argv, from, depth);
    if (p == "kubectl") return JudgeKubectl(config_, call);
    if (p == "helm") return JudgeHelm(config_, call);
    if (p == "export" || p == "declare" || p == "typeset" || p == "local" || p == "readonly") {
      for (const Word& a : call.args) {
        GuardDecision d = Assignment(a);
        if (!d.allow) return d;
      }
      return Allow();
    }
    if (p == "attune" ||
        (!config_.attune_binary.empty() && call.program_path == config_.attune_binary)) {
      if (call.args_from_stdin) return Deny("attune run through xargs: write the full command");
      GuardDecision d = JudgeAttune(call);
      return d.allow ? AttuneOutput(call) : d;
    }
    return JudgeProgram(config_, call, cwd_);
  }

  // `attune recipe import -o FILE` writes FILE: never into the event log.
  GuardDecision AttuneOutput(const CommandCall& call) {
    for (size_t i = 0; i < call.args.size(); ++i) {
      const std::string& a = call.args[i].text;
      std::string target;
      if ((a == "-o" || a == "--output") && i + 1 < call.args.size())
        target = call.args[i + 1].text;
      if (StartsWith(a, "--output=")) target = a.substr(9);
      std::string v = target.empty() ? "" : EventLogViolation(config_, target, cwd_);
      if (!v.empty()) return Deny("attune output '" + target + "': " + v);
    }
    return Allow();
  }

  // `command -v X` asks; `command X` runs X.
  GuardDecision CommandBuiltin(const CommandCall& call, const std::vector<Word>& argv, size_t from,
                               int depth) {
    if (!call.args.empty() && (call.args[0].text == "-v" || call.args[0].text == "-V")) {
      return Allow();
    }
    return Argv(argv, from + 1, call.args_from_stdin, depth);
  }

  // Skips a wrapper's options (`valued` take the next word unless written --opt=value), then an
  // extra positional (timeout's duration) when `skip_positional`, and judges the rest.
  GuardDecision SkipOptions(const std::vector<Word>& argv, size_t i,
                            const std::set<std::string>& valued, bool skip_positional,
                            bool from_stdin, int depth) {
    while (i < argv.size() && StartsWith(argv[i].text, "-")) {
      if (argv[i].text == "--") {
        ++i;
        break;
      }
      if (valued.count(argv[i].text)) ++i;
      ++i;
    }
    if (skip_positional && i < argv.size()) ++i;
    if (i >= argv.size()) return Allow();
    return Argv(argv, i, from_stdin, depth + 1);
  }

  GuardDecision Env(const std::vector<Word>& argv, size_t i, bool from_stdin, int depth) {
    while (i < argv.size()) {
      const std::string& t = argv[i].text;
      if (t == "-u" || t == "-C" || t == "--unset" || t == "--chdir") {
        i += 2;
      } else if (t == "-S" || StartsWith(t, "--split-string")) {
        return Deny("'env -S' splits a string into a command; write the command out");
      } else if (StartsWith(t, "-")) {
        ++i;
      } else if (t.find('=') != std::string::npos && t.find('=') > 0) {
        GuardDecision d = Assignment(argv[i]);
        if (!d.allow) return d;
        ++i;
      } else {
        break;
      }
    }
    return Argv(argv, i, from_stdin, depth + 1);
  }

  // bash -c 'script' (also -lc, -ec, -o pipefail -c ...): the script is judged as a script.
  GuardDecision Shell(const CommandCall& call, int depth) {
    if (call.args_from_stdin) return Deny("a shell run through xargs: write the commands out");
    for (size_t i = 0; i < call.args.size(); ++i) {
      const std::string& a = call.args[i].text;
      if (a == "-o" || a == "+o") {
        ++i;
        continue;
      }
      bool flags = StartsWith(a, "-") && !StartsWith(a, "--");
      if (flags && a.find('c') != std::string::npos) {
        if (i + 1 >= call.args.size()) return Deny("'" + call.program + " -c' without a script");
        const Word& script = call.args[i + 1];
        if (script.dynamic)
          return Deny("the script given to '" + call.program + " -c' is computed; write it out");
        return Script(script.text, depth + 1);
      }
      if (!StartsWith(a, "-")) break;
    }
    return Deny("'" + call.program +
                "' without -c runs a script or reads commands the guard "
                "cannot see; use " +
                call.program + " -c '...' or run the commands directly");
  }

  GuardDecision Eval(const CommandCall& call, int depth) {
    std::string script;
    for (const Word& w : call.args) {
      if (w.dynamic) return Deny("eval of a computed string; write the command out");
      script += (script.empty() ? "" : " ") + w.text;
    }
    return Script(script, depth + 1);
  }

  GuardDecision Watch(const CommandCall& call, int depth) {
    std::string script;
    size_t i = 0;
    while (i < call.args.size() && StartsWith(call.args[i].text, "-")) {
      const std::string& t = call.args[i].text;
      i += (t == "-n" || t == "--interval") ? 2 : 1;
    }
    for (; i < call.args.size(); ++i) {
      if (call.args[i].dynamic) return Deny("watch of a computed command; write it out");
      script += (script.empty() ? "" : " ") + call.args[i].text;
    }
    return Script(script, depth + 1);
  }

  // find is read-only except for -delete and the -fprint family; -exec runs a command.
  GuardDecision Find(const CommandCall& call, const std::vector<Word>& argv, size_t from,
                     int depth) {
    static const std::set<std::string> kWrites = {"-delete", "-fprint", "-fprint0", "-fprintf",
                                                  "-fls"};
    static const std::set<std::string> kExec = {"-exec", "-execdir", "-ok", "-okdir"};
    for (size_t i = from + 1; i < argv.size(); ++i) {
      const std::string& t = argv[i].text;
      if (kWrites.count(t)) return Deny("'find " + t + "' changes files; the agent is read-only");
      if (!kExec.count(t)) continue;
      std::vector<Word> sub;
      size_t j = i + 1;
      for (; j < argv.size() && argv[j].text != ";" && argv[j].text != "+"; ++j)
        sub.push_back(argv[j]);
      GuardDecision d = Argv(sub, 0, false, depth + 1);
      if (!d.allow) return d;
      i = j;
    }
    return Allow();
  }

  const GuardConfig& config_;
  std::string cwd_;
};

}  // namespace

GuardDecision JudgeFileWrite(const GuardConfig& config, const std::string& tool,
                             const std::string& path, const std::string& cwd) {
  std::string v = EventLogViolation(config, path, cwd);
  if (!v.empty()) return Deny(tool + " " + path + ": " + v);
  return Deny(tool +
              " is not allowed: the agent is read-only; it inspects, then answers with a "
              "JSON proposal");
}

GuardDecision JudgeCommand(const GuardConfig& config, const std::string& command,
                           const std::string& cwd) {
  Judge judge(config, cwd);
  return judge.Script(command, 0);
}

Result<GuardConfig> ParseGuardArgs(const std::vector<std::string>& args) {
  ATTUNE_ASSIGN_OR_RETURN(FlagMap flags,
                          ParseFlags(args, {"campaign-dir", "namespace", "events-dir", "attune"}));
  if (FlagValue(flags, "campaign-dir").empty()) {
    return Status::InvalidArgument("--campaign-dir is required");
  }
  GuardConfig config;
  config.campaign_dir = fs::absolute(FlagValue(flags, "campaign-dir")).string();
  config.k8s_namespace = FlagValue(flags, "namespace");
  config.attune_binary = FlagValue(flags, "attune");
  config.protected_dirs = FindEventLogDirs(config.campaign_dir);
  for (auto [it, end] = flags.equal_range("events-dir"); it != end; ++it) {
    config.protected_dirs.push_back(fs::absolute(it->second).string());
  }
  return config;
}

std::vector<std::string> GuardArgs(const GuardConfig& config) {
  std::vector<std::string> args = {"--campaign-dir", config.campaign_dir};
  if (!config.attune_binary.empty()) args.insert(args.end(), {"--attune", config.attune_binary});
  if (!config.k8s_namespace.empty()) args.insert(args.end(), {"--namespace", config.k8s_namespace});
  std::vector<std::string> implied = FindEventLogDirs(config.campaign_dir);
  for (const std::string& dir : config.protected_dirs) {
    bool found = false;
    for (const std::string& d : implied) found = found || d == dir;
    if (!found) args.insert(args.end(), {"--events-dir", dir});
  }
  return args;
}

std::vector<std::string> FindEventLogDirs(const std::string& campaign_dir) {
  std::vector<std::string> out;
  if (campaign_dir.empty()) return out;
  fs::path root = Resolve(campaign_dir, "/");
  auto is_log = [](const fs::path& d) {
    std::error_code ec;
    return fs::exists(d / "CURRENT", ec) || fs::exists(d / "ACKED", ec);
  };
  out.push_back((root / "events").string());
  out.push_back((root / "log").string());
  if (is_log(root)) out.push_back(root.string());
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && is_log(it->path()) && it->path().filename() != "events" &&
        it->path().filename() != "log") {
      out.push_back(it->path().string());
    }
  }
  return out;
}

bool IsUnder(const std::string& path, const std::string& dir, const std::string& cwd) {
  if (path.empty() || dir.empty()) return false;
  fs::path p = Resolve(path, cwd);
  fs::path d = Resolve(dir, "/");
  auto pi = p.begin();
  for (auto di = d.begin(); di != d.end(); ++di, ++pi) {
    if (di->empty()) continue;  // a trailing slash
    if (pi == p.end() || *pi != *di) return false;
  }
  return true;
}

std::string HookString(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j.at(key).is_string() ? j.at(key).get<std::string>() : "";
}

std::optional<ToolCall> ReadToolCall(std::istream& in, const std::string& default_cwd) {
  const nlohmann::json input = nlohmann::json::parse(in, nullptr, false);
  ToolCall call;
  call.tool = HookString(input, "tool_name");
  if (call.tool.empty()) return std::nullopt;
  if (input.contains("tool_input")) call.input = input.at("tool_input");
  call.cwd = HookString(input, "cwd");
  if (call.cwd.empty()) call.cwd = default_cwd;
  return call;
}

}  // namespace attune::agentkit
