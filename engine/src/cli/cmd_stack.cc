// `attune stack show NAME`: a stack's lever catalog and rules.
#include <iomanip>
#include <ostream>

#include "cli/args.h"

namespace attune::cli {

namespace {

void PrintLevers(const Stack& stack, std::ostream& out) {
  out << "stack " << stack.Name() << ": " << stack.Levers().size() << " levers\n";
  for (const Lever& lever : stack.Levers()) {
    std::string keys;
    for (const auto& k : lever.keys) keys += (keys.empty() ? "" : " ") + k;
    out << "  " << std::left << std::setw(28) << lever.id << std::setw(40) << keys
        << lever.description << "\n";
  }
  out << "(objective rules and constraints: attune stack show " << stack.Name() << " --json)\n";
}

}  // namespace

int RunStackShow(const std::vector<std::string>& args, Env& env) {
  ArgParser p("stack show NAME [--json] [--plugin-path DIR]",
              "Shows what attune knows about a stack: levers, objective rules, constraints.");
  p.Options()("json", "the stack's full description (Stack::Describe)")(
      "plugin-path", po::value<std::vector<std::string>>(), "extra plugin directory");
  p.Positional("name");
  int code = 0;
  if (!p.Parse(args, env, &code)) return code;
  bool json = p.Has("json");
  if (!p.Has("name")) {
    return ReportError(env, "stack show", Status::InvalidArgument("missing NAME"), json);
  }
  auto stack = CreateStack(env, p.Get("name"), p.GetList("plugin-path"));
  if (!stack.ok()) return ReportError(env, "stack show", stack.status(), json);
  if (json) {
    *env.out << (*stack)->Describe().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    PrintLevers(**stack, *env.out);
  }
  return kExitOk;
}

}  // namespace attune::cli
