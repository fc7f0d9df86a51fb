// Copyright attune authors.
//
// A campaign runs the workflow recorded when it started. These functions compare that recorded
// workflow with a file the user passes again, check a recorded workflow against what this attune
// accepts, and check an explicit amendment (`attune run --amend-workflow FILE`, docs/cli.md).
#ifndef ATTUNE_ENGINE_STEPS_WORKFLOW_CHANGE_H_
#define ATTUNE_ENGINE_STEPS_WORKFLOW_CHANGE_H_

#include <string>
#include <vector>

#include "attune/status.h"
#include "campaign/campaign_state.h"
#include "workflow/workflow.h"

namespace attune {

// One line per setting that differs: "budget.gpu_hours: recorded 60, the file 5". The file's
// name, path and recipe path are not settings; a different recipe is one line.
std::vector<std::string> WorkflowDifferences(const Workflow& recorded, const Workflow& given);

// What this attune's validator says of a workflow rebuilt from the log (step options, `if:` names,
// plugin options, finite numbers). An older attune may have recorded what this one refuses.
Status CheckRecordedWorkflow(const Workflow& recorded, const WorkflowSchema& schema);

// OK when `amended` may replace `recorded` in a campaign in `state`: only settings that do not
// change past decisions may differ (the budget, within what is already spent; the agent's options;
// steps that have not started). Otherwise InvalidArgument naming each refused difference.
Status CheckAmendment(const CampaignState& state, const Workflow& recorded, const Workflow& amended);

}  // namespace attune

#endif  // ATTUNE_ENGINE_STEPS_WORKFLOW_CHANGE_H_
