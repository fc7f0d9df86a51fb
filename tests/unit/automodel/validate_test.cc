#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>

#include "automodel_fixture.h"

using namespace attune;
using namespace attune::automodel::testing;

namespace {

std::string Rule(const Recipe& r) {
  auto s = TheStack().Validate(r, ClusterInfo{});
  if (s.ok()) return "ok";
  auto close = s.message().find(']');
  return s.message().substr(1, close - 1);
}

}  // namespace

TEST_CASE("every mesh, batch and schedule rule names itself", "[automodel][validate]") {
  Recipe base = Import("launch_automodel.sh");  // 8 GPUs, tp 2, local batch 2, gbs 64
  CHECK(Rule(base) == "ok");
  CHECK(Rule(With(base, "--distributed.tp_size", "3")) == "mesh.world_divisible");
  CHECK(Rule(With(base, "--distributed.strategy", "zero9")) == "strategy.known");
  CHECK(Rule(With(base, "--distributed.dp_size", "3")) == "mesh.dp_size");
  CHECK(Rule(With(With(base, "--distributed.strategy", "megatron_fsdp"), "--distributed.pp_size", "2")) ==
        "mfsdp.no_pp_ep");
  CHECK(Rule(With(base, "--distributed.strategy", "ddp")) == "ddp.no_model_parallel");
  CHECK(Rule(With(base, "--distributed.dp_replicate_size", "4")) == "hsdp.divides_dp");
  CHECK(Rule(With(base, "--distributed.ep_size", "3")) == "mesh.ep_divides");
  CHECK(Rule(With(base, "--step_scheduler.local_batch_size", "3")) == "batch.divisible");
  CHECK(Rule(With(base, "--distributed.pp_size", "2")) == "pp.pipeline_block");
  Recipe pp = With(With(base, "--distributed.pp_size", "2"), "--distributed.pipeline.pp_microbatch_size", "2");
  CHECK(Rule(pp) == "pp.microbatches");
  CHECK(Rule(With(With(base, "--distributed.tp_size", "1"), "--distributed.cp_size", "8")) == "ok");
  CHECK(Rule(With(With(base, "--dataset.seq_length", "4098"), "--distributed.cp_size", "4")) ==
        "cp.seq_divisible");
  Recipe mfsdp = With(base, "--distributed.strategy", "megatron_fsdp");
  CHECK(Rule(With(mfsdp, "--distributed.activation_checkpointing", "selective")) == "ac.selective_strategy");
}

TEST_CASE("legal moves all validate and pass the gate", "[automodel][moves]") {
  for (const char* script : {"launch_automodel.sh", "launch_torchrun.sh"}) {
    Recipe base = Import(script);
    auto moves = TheStack().LegalMoves(base, ClusterInfo{});
    REQUIRE_FALSE(moves.empty());
    for (const auto& move : moves) {
      Recipe candidate = base;
      REQUIRE(ApplyChanges(&candidate, move.changes).ok());
      INFO(move.summary);
      CHECK(TheStack().Validate(candidate, ClusterInfo{}).ok());
      CHECK(TheStack().CheckObjective(base, candidate).pass);
    }
  }
}

TEST_CASE("moves that make no sense for the recipe are not offered", "[automodel][moves]") {
  Recipe dense = With(Import("launch_automodel.sh"), "--distributed.tp_size", "1");
  for (const auto& move : TheStack().LegalMoves(dense, ClusterInfo{})) {
    CHECK(move.lever_id != "sequence_parallel");  // needs tp > 1
    CHECK(move.lever_id != "ep_size");            // not a MoE model
    CHECK(move.lever_id != "pp_schedule");        // pp is 1
  }
}

TEST_CASE("a move of a key the config file sets says what the key holds", "[automodel][moves]") {
  // llama_sft.yaml sets distributed.activation_checkpointing: true and no override does: the move
  // to selective has no `from` in the overrides, and Move::defaults says it moves from "true".
  Recipe base = Import("launch_automodel.sh");
  bool seen = false;
  for (const auto& move : TheStack().LegalMoves(base, ClusterInfo{})) {
    if (move.lever_id != "activation_checkpointing") continue;
    REQUIRE(move.changes.size() == 1);
    CHECK_FALSE(move.changes[0].from);
    auto d = move.defaults.find("--distributed.activation_checkpointing");
    REQUIRE(d != move.defaults.end());
    CHECK(d->second == "true");
    seen = true;
  }
  CHECK(seen);
  // The catalog orders the values, least to most checkpointing, for the agents.
  for (const auto& lever : TheStack().Levers()) {
    if (lever.id != "activation_checkpointing") continue;
    CHECK(lever.order.at("--distributed.activation_checkpointing") ==
          std::vector<std::string>{"false", "selective", "true"});
    CHECK(lever.expected_speed < 0);   // its forward move (more checkpointing) is slower
    CHECK(lever.expected_memory < 0);  // and saves memory
  }
}

TEST_CASE("a misspelt config section is refused with the section it likely means",
          "[automodel][validate]") {
  // AutoModel reads the sections it knows and never looks at another: step_schedular would run
  // with step_scheduler's defaults (a global batch of 32, a local batch of 1), without a word.
  const automodel::Knowledge& k = TheStack().knowledge();
  CHECK(k.sections_first == "v0.1.0");
  // `attune stack show automodel` lists the rule.
  bool listed = false;
  const nlohmann::json described = TheStack().Describe();
  for (const auto& c : described["constraints"]) listed = listed || c["id"] == "config.sections";
  CHECK(listed);
  for (const char* section : {"step_scheduler", "distributed", "dataset", "validation_dataset",
                              "packed_sequence", "mlflow"}) {
    CAPTURE(section);
    CHECK(k.sections.count(section));
  }
  Recipe base = Import("launch_automodel.sh");
  REQUIRE(Rule(base) == "ok");
  Recipe typo = base;
  typo.config["step_schedular"] = typo.config["step_scheduler"];
  typo.config.erase("step_scheduler");
  auto s = TheStack().Validate(typo, ClusterInfo{});
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::StartsWith("[config.sections] 'step_schedular'") &&
                              Catch::Contains("did you mean step_scheduler?") &&
                              Catch::Contains("extra_sections: [step_schedular]"));
  // A dotted override names its section too.
  CHECK(Rule(With(base, "--distributd.tp_size", "2")) == "config.sections");
  // A section far from every known one is a custom recipe's own; a leading '_' is an anchor.
  Recipe custom = base;
  custom.config["my_reward_model"] = {{"path", "x"}};
  custom.config["_defaults"] = {{"a", 1}};
  CHECK(Rule(custom) == "ok");
  // Declared in the workflow, a near-miss name is the user's own section.
  auto declared = automodel::AutoModelStack::Create(ATTUNE_SOURCE_DIR,
                                                    {{"extra_sections", {"step_schedular"}}});
  REQUIRE(declared.ok());
  CHECK((*declared)
            ->Validate(With(typo, "--step_scheduler.global_batch_size", "64"), ClusterInfo{})
            .ok());
}

TEST_CASE("every shipped AutoModel recipe names only known sections", "[automodel][validate]") {
  namespace fs = std::filesystem;
  int checked = 0;
  for (const char* dir : {"workflows", "tools/bench/tuners/probes/recipes", "tests/fixtures"}) {
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(ATTUNE_SOURCE_DIR) / dir)) {
      if (entry.path().extension() != ".yaml") continue;
      auto recipe = LoadRecipeFile(entry.path().string());
      if (!recipe.ok() || recipe->stack != "automodel") continue;
      CAPTURE(entry.path().string());
      auto s = TheStack().Validate(*recipe, ClusterInfo{});
      CHECK(s.message().find("config.sections") == std::string::npos);
      CHECK(s.message().find("config.keys") == std::string::npos);
      ++checked;
    }
  }
  CHECK(checked >= 5);
}

TEST_CASE("an imported AutoModel launch reports a section AutoModel would ignore",
          "[automodel][validate]") {
  std::string script = "automodel " + FixtureDir() +
                       "/llama_sft.yaml --nproc-per-node 8 --step_schedular.local_batch_size 2\n";
  std::vector<std::string> unknown;
  auto r = TheStack().ImportLaunch(script, &unknown);
  REQUIRE(r.ok());
  bool reported = false;
  for (const std::string& u : unknown) {
    reported = reported || (u.find("[config.sections] 'step_schedular'") != std::string::npos &&
                            u.find("did you mean step_scheduler?") != std::string::npos);
  }
  CHECK(reported);
}

TEST_CASE("a key step_scheduler does not take is refused with the key it likely means",
          "[automodel][validate]") {
  // The LLM and VLM recipes pass the section to StepScheduler whole: a TypeError at start, after
  // the model has loaded; recipes that pick keys ignore it.
  const automodel::Knowledge& k = TheStack().knowledge();
  REQUIRE(k.section_keys.count("step_scheduler"));
  bool listed = false;
  const nlohmann::json described = TheStack().Describe();
  for (const auto& c : described["constraints"]) listed = listed || c["id"] == "config.keys";
  CHECK(listed);
  CHECK(k.section_keys.at("step_scheduler").count("global_batch_size"));
  CHECK(k.section_keys.at("step_scheduler").count("log_every"));  // read by the diffusion recipe
  Recipe base = Import("launch_automodel.sh");
  REQUIRE(Rule(base) == "ok");
  Recipe typo = base;
  typo.config["step_scheduler"]["local_batch_sise"] = 4;
  auto s = TheStack().Validate(typo, ClusterInfo{});
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(),
             Catch::StartsWith("[config.keys] step_scheduler.local_batch_sise is not a key") &&
                 Catch::Contains("did you mean step_scheduler.local_batch_size?") &&
                 Catch::Contains("TypeError"));
  CHECK(Rule(With(base, "--step_scheduler.max_stpes", "10")) == "config.keys");
  CHECK(Rule(With(base, "--step_scheduler.max_steps", "10")) == "ok");
  auto declared = automodel::AutoModelStack::Create(
      ATTUNE_SOURCE_DIR, {{"extra_sections", {"step_scheduler.local_batch_sise"}}});
  REQUIRE(declared.ok());
  CHECK((*declared)->Validate(typo, ClusterInfo{}).ok());
}

TEST_CASE("a malformed section list is a clear error", "[automodel][validate]") {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("attune-sections-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const char* file : {"levers.yaml", "objective.yaml", "triage.yaml"}) {
    fs::copy_file(fs::path(ATTUNE_SOURCE_DIR) / "stacks/automodel" / file, dir / file,
                  fs::copy_options::overwrite_existing);
  }
  auto load = [&](const std::string& text) {
    std::ofstream(dir / "config_sections.txt") << text;
    return automodel::LoadKnowledge(dir.string());
  };
  auto bad = load("# Revisions read: v1 v2\nstep_scheduler\nstep scheduler\n");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("config_sections.txt:3:") &&
                                         Catch::Contains("tools/automodel_sections.py"));
  CHECK_FALSE(load("# Revisions read: v1\nstep_scheduler.\n").ok());
  CHECK_FALSE(load("step_scheduler\n").ok());  // no revisions line
  auto good = load("# Revisions read: v1 v2\nstep_scheduler\nstep_scheduler.max_steps\n");
  REQUIRE(good.ok());
  CHECK(good->sections == std::set<std::string>{"step_scheduler"});
  CHECK(good->section_keys.at("step_scheduler") == std::set<std::string>{"max_steps"});
  CHECK(good->sections_last == "v2");
  fs::remove_all(dir);
}
