// Copyright attune authors.
//
// Small wrapper over Boost.Program_options for subcommands: declare options and positionals,
// parse, and get the house behaviour for --help and usage errors.
#ifndef ATTUNE_ENGINE_CLI_ARGS_H_
#define ATTUNE_ENGINE_CLI_ARGS_H_

#include <boost/program_options.hpp>

#include <string>
#include <vector>

#include "cli/cli.h"

namespace attune::cli {

namespace po = boost::program_options;

class ArgParser {
 public:
  // `usage` is the line after "usage: attune ".
  ArgParser(std::string usage, std::string summary);

  po::options_description_easy_init Options() { return options_.add_options(); }
  // Positionals in order; the last may take `max` (-1 = unlimited) values.
  void Positional(const std::string& name, int max = 1);

  // Returns true when the command should run. Otherwise *exit_code holds 0 (--help printed)
  // or kExitUsage (error printed).
  bool Parse(const std::vector<std::string>& args, Env& env, int* exit_code);

  const po::variables_map& vm() const { return vm_; }
  bool Has(const std::string& name) const { return vm_.count(name) > 0; }
  std::string Get(const std::string& name) const;
  std::vector<std::string> GetList(const std::string& name) const;

 private:
  std::string usage_;
  std::string summary_;
  po::options_description options_;
  po::options_description hidden_;
  po::positional_options_description positional_;
  std::vector<std::string> positional_names_;
  po::variables_map vm_;
};

}  // namespace attune::cli

#endif  // ATTUNE_ENGINE_CLI_ARGS_H_
