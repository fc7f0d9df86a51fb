#include "cli/args.h"

#include <ostream>

namespace attune::cli {

ArgParser::ArgParser(std::string usage, std::string summary)
    : usage_(std::move(usage)), summary_(std::move(summary)), options_("options"),
      hidden_("positionals") {
  options_.add_options()("help,h", "show this help");
}

void ArgParser::Positional(const std::string& name, int max) {
  if (max == 1) {
    hidden_.add_options()(name.c_str(), po::value<std::string>());
  } else {
    hidden_.add_options()(name.c_str(), po::value<std::vector<std::string>>());
  }
  positional_.add(name.c_str(), max);
  positional_names_.push_back(name);
}

bool ArgParser::Parse(const std::vector<std::string>& args, Env& env, int* exit_code) {
  po::options_description all;
  all.add(options_).add(hidden_);
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional_).run(), vm_);
    po::notify(vm_);
  } catch (const po::error& e) {
    // Program_options reports bad flags by throwing; that is a usage error for the user.
    *env.err << "attune: " << e.what() << "\nusage: attune " << usage_
             << "\n(see attune " << usage_.substr(0, usage_.find(' ')) << " --help)\n";
    *exit_code = kExitUsage;
    return false;
  }
  if (Has("help")) {
    *env.out << "usage: attune " << usage_ << "\n\n" << summary_ << "\n\n" << options_;
    *exit_code = kExitOk;
    return false;
  }
  return true;
}

std::string ArgParser::Get(const std::string& name) const {
  if (!vm_.count(name)) return "";
  return vm_[name].as<std::string>();
}

std::vector<std::string> ArgParser::GetList(const std::string& name) const {
  if (!vm_.count(name)) return {};
  return vm_[name].as<std::vector<std::string>>();
}

}  // namespace attune::cli
