// Copyright attune authors.
//
// The workflow schema the CLI validates against: the built-in step kinds (when the steps layer
// is built into this binary) and the names of the plugins found on the search path.
#ifndef ATTUNE_ENGINE_CLI_SCHEMA_H_
#define ATTUNE_ENGINE_CLI_SCHEMA_H_

#include <string>
#include <vector>

#include "cli/cli.h"
#include "workflow/workflow.h"

namespace attune::cli {

Result<WorkflowSchema> BuildWorkflowSchema(const Env& env,
                                           const std::vector<std::string>& extra_paths);

// Like ATTUNE_ASSIGN_OR_RETURN, but returns ReportError's exit code from a CLI command.
#define ATTUNE_ASSIGN_OR_RETURN_CODE(lhs, expr, env, command, json)                          \
  auto ATTUNE_CONCAT_(cli_result_, __LINE__) = (expr);                                        \
  if (!ATTUNE_CONCAT_(cli_result_, __LINE__).ok())                                            \
    return ::attune::cli::ReportError(env, command, ATTUNE_CONCAT_(cli_result_, __LINE__).status(), \
                                      json);                                                  \
  lhs = std::move(ATTUNE_CONCAT_(cli_result_, __LINE__)).value()

}  // namespace attune::cli

#endif  // ATTUNE_ENGINE_CLI_SCHEMA_H_
