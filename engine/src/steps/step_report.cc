// `report`: renders every report file from the folded state and records their hashes. Writing
// is idempotent, so a report step interrupted before its StepFinished simply writes again.
#include <filesystem>

#include "attune/hash.h"
#include "base/crash_point.h"
#include "campaign/events.h"
#include "report/report.h"
#include "steps/steps.h"

namespace attune {

namespace {

std::string LaunchCommand(const RunContext& ctx) {
  const Recipe* leader = ctx.state.RecipeOf(ctx.state.leader_id);
  if (!leader) return "";
  auto launch = ctx.stack->RenderLaunch(*leader);
  if (!launch.ok()) return "";
  return ShellCommand(launch->env, launch->argv);
}

}  // namespace

Status RunReportStep(RunContext& ctx, const StepDecl& step) {
  nlohmann::json files = nlohmann::json::object();
  for (const auto& [name, content] : RenderAllReports(ctx.state, LaunchCommand(ctx))) {
    const std::string path = (std::filesystem::path(ctx.log->dir()) / name).string();
    ATTUNE_RETURN_IF_ERROR(WriteFileAtomic(path, content));
    files[name] = Sha256Hex(content);
    CrashPoint("report.writing");
  }
  return ctx.Append({NewEvent{events::kReportWritten, nlohmann::json{{"files", files}}},
                     NewEvent{events::kStepFinished, nlohmann::json{{"step", step.id}, {"outcome", "done"}}}});
}

}  // namespace attune
