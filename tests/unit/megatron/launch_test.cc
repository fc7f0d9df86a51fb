// ImportLaunch reads launch scripts as users write them; RenderLaunch gives them back; importing
// the rendered command gives the same recipe.
#include <catch2/catch.hpp>

#include "launch.h"
#include "test_support.h"

namespace attune::megatron {
namespace {

using testing::OwnFixtures;
using testing::ReadFile;
using testing::Stack;

Recipe Import(const std::string& script, std::vector<std::string>* unknown = nullptr) {
  std::vector<std::string> sink;
  auto r = Stack().ImportLaunch(script, unknown ? unknown : &sink);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return *r;
}

bool Contains(const std::vector<std::string>& v, const std::string& needle) {
  for (const auto& s : v) {
    if (s.find(needle) != std::string::npos) return true;
  }
  return false;
}

// import(render(r)) == r, through the shell command line a user would see.
void RequireRoundTrip(const Recipe& recipe) {
  auto spec = Stack().RenderLaunch(recipe);
  REQUIRE(spec.ok());
  std::string command = ShellCommand(spec->env, spec->argv);
  INFO(command);
  Recipe again = Import(command);
  CHECK(again == recipe);
}

TEST_CASE("a Megatron example script with arrays and arithmetic imports", "[megatron][launch]") {
  std::vector<std::string> unknown;
  Recipe r = Import(ReadFile(OwnFixtures() + "/torchrun_arrays.sh"), &unknown);
  CHECK(r.topology.nodes == 2);
  CHECK(r.topology.gpus_per_node == 8);
  CHECK(r.entry == std::vector<std::string>{"pretrain_gpt.py"});
  CHECK(r.launcher_hint == "torchrun");
  CHECK(GetValue(r, "--num-layers") == "32");
  CHECK(GetValue(r, "--bf16") == "");
  CHECK(GetValue(r, "--data-path") == "/data/gpt_text_document");
  CHECK(GetValue(r, "--tensorboard-dir") == "/ckpt/gpt/tb");
  CHECK(GetValue(r, "env:CUDA_DEVICE_MAX_CONNECTIONS") == "1");
  CHECK(r.args.front().flag == "--num-layers");
  CHECK(r.args.back().flag == "--tensorboard-dir");
  CHECK(Contains(unknown, "2>&1"));
  CHECK(Stack().Validate(r, testing::H100()).ok());
  RequireRoundTrip(r);
}

TEST_CASE("string variables, inline env and python -m torch.distributed.run import", "[megatron][launch]") {
  std::vector<std::string> unknown;
  Recipe r = Import(ReadFile(OwnFixtures() + "/string_args.sh"), &unknown);
  CHECK(r.topology.nodes == 1);
  CHECK(r.topology.gpus_per_node == 4);
  CHECK(r.launcher_hint == "torchrun");
  CHECK(GetValue(r, "--seq-length") == "2048");
  CHECK(GetValue(r, "--global-batch-size") == "64");
  CHECK(GetValue(r, "--cp-comm-type") == "p2p a2a");
  CHECK(GetValue(r, "env:NCCL_IB_QPS_PER_CONNECTION") == "2");
  CHECK(GetValue(r, "env:CUDA_DEVICE_MAX_CONNECTIONS") == "1");
  CHECK(GetValue(r, "env:NCCL_DEBUG") == "WARN");
  CHECK(Contains(unknown, "legacy_positional"));
  CHECK(Contains(unknown, "undefined shell variable $HOME"));
  CHECK(Contains(unknown, "$(date +%s)"));
  RequireRoundTrip(r);
}

TEST_CASE("Megatron-DeepSpeed's deepspeed launcher imports and renders back", "[megatron][launch]") {
  std::vector<std::string> unknown;
  Recipe r = Import("deepspeed --num-nodes 2 --num_gpus=8 --master_port 29500 --hostfile hosts pretrain_gpt.py "
                    "--tensor-model-parallel-size 2 --num-layers 4 --hidden-size 512 --num-attention-heads 8 "
                    "--deepspeed --deepspeed_config ds.json --zero-stage 1\n", &unknown);
  CHECK(r.launcher_hint == "deepspeed");
  CHECK(r.topology.nodes == 2);
  CHECK(r.topology.gpus_per_node == 8);
  CHECK(r.entry == std::vector<std::string>{"pretrain_gpt.py"});
  CHECK(GetValue(r, "--deepspeed_config") == std::optional<std::string>("ds.json"));
  CHECK(GetValue(r, "--zero-stage") == std::optional<std::string>("1"));
  CHECK(unknown.empty());
  auto spec = Stack().RenderLaunch(r);
  REQUIRE(spec.ok());
  CHECK(std::vector<std::string>(spec->argv.begin(), spec->argv.begin() + 6) ==
        std::vector<std::string>{"deepspeed", "--num_nodes", "2", "--num_gpus", "8", "pretrain_gpt.py"});
  // Without --num_gpus the launcher takes every GPU of the node: said, not guessed.
  unknown.clear();
  Recipe all = Import("deepspeed pretrain_gpt.py --num-layers 4\n", &unknown);
  CHECK(all.topology.gpus_per_node == 1);
  REQUIRE(unknown.size() == 1);
  CHECK_THAT(unknown[0], Catch::Contains("without --num_gpus"));
}

TEST_CASE("slime's ray job submit imports with its runtime env and actor topology", "[megatron][launch]") {
  Recipe r = Import(ReadFile(OwnFixtures() + "/slime_ray.sh"));
  CHECK(r.launcher_hint == "ray");
  CHECK(r.entry == std::vector<std::string>{"python3", "train.py"});
  CHECK(r.topology.nodes == 1);
  CHECK(r.topology.gpus_per_node == 8);
  CHECK(GetValue(r, "env:CUDA_DEVICE_MAX_CONNECTIONS") == "1");
  CHECK(GetValue(r, "env:PYTHONPATH") == "/root/Megatron-LM/");
  CHECK(GetValue(r, "--num-query-groups") == "4");
  CHECK(GetValue(r, "--colocate") == "");
  RequireRoundTrip(r);
}

TEST_CASE("a plain python launch keeps quoted values and drops comments", "[megatron][launch]") {
  Recipe r = Import(ReadFile(OwnFixtures() + "/plain_python.sh"));
  CHECK(r.entry == std::vector<std::string>{"python3", "pretrain_gpt.py"});
  CHECK(r.launcher_hint == "python");
  CHECK(r.topology.WorldSize() == 1);
  REQUIRE(GetValue(r, "--data-path"));
  CHECK(r.args[7].values == std::vector<std::string>{"1.0 /data/a 0.5 /data/b"});
  CHECK(GetValue(r, "--log-interval") == "1");
  auto spec = Stack().RenderLaunch(r);
  REQUIRE(spec.ok());
  CHECK(spec->argv[0] == "python3");
  RequireRoundTrip(r);
}

TEST_CASE("rendering uses the recipe's topology", "[megatron][launch]") {
  Recipe r = Import(ReadFile(OwnFixtures() + "/torchrun_arrays.sh"));
  r.topology.nodes = 4;
  auto spec = Stack().RenderLaunch(r);
  REQUIRE(spec.ok());
  CHECK(std::vector<std::string>(spec->argv.begin(), spec->argv.begin() + 6) ==
        std::vector<std::string>{"torchrun", "--nproc-per-node", "8", "--nnodes", "4", "pretrain_gpt.py"});
  Recipe tiny = Import(ReadFile(OwnFixtures() + "/plain_python.sh"));
  tiny.topology.gpus_per_node = 2;
  auto multi = Stack().RenderLaunch(tiny);
  REQUIRE(multi.ok());
  CHECK(multi->argv[0] == "torchrun");
  CHECK(multi->argv[5] == "pretrain_gpt.py");
}

TEST_CASE("one-line commands in several spellings import", "[megatron][launch]") {
  Recipe a = Import("torchrun --nproc_per_node=8 --nnodes=2 --node_rank=0 pretrain_gpt.py --tensor-model-parallel-size=2");
  CHECK(a.topology.WorldSize() == 16);
  CHECK(GetValue(a, "--tensor-model-parallel-size") == "2");
  Recipe b = Import("export A=1; B=2 python pretrain_gpt.py --x ${A} --y \"$B\" --z '$B'");
  CHECK(GetValue(b, "--x") == "1");
  CHECK(GetValue(b, "--y") == "${B}");  // B=2 is for the command only: undefined, kept literally
  CHECK(GetValue(b, "--z") == "$B");
  CHECK(GetValue(b, "env:A") == "1");
  CHECK(GetValue(b, "env:B") == "2");
  Recipe c = Import("ARGS=(--a 1)\nARGS+=(--b 2)\npython3 train.py \"${ARGS[@]}\"");
  CHECK(GetValue(c, "--b") == "2");
}

TEST_CASE("an unknown torchrun option and a duplicate flag are reported", "[megatron][launch]") {
  std::vector<std::string> unknown;
  Recipe r = Import("torchrun --nproc-per-node 2 --frobnicate pretrain_gpt.py --lr 1 --lr 2", &unknown);
  CHECK(Contains(unknown, "--frobnicate"));
  CHECK(Contains(unknown, "--lr is given twice"));
  CHECK(GetValue(r, "--lr") == "2");
}

TEST_CASE("a script without a launch command is an error", "[megatron][launch]") {
  std::vector<std::string> unknown;
  auto r = Stack().ImportLaunch("echo hello\nmkdir -p out\n", &unknown);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("no launch command found"));
}

TEST_CASE("every recipe the tests build round-trips", "[megatron][launch]") {
  RequireRoundTrip(testing::DenseRecipe());
  RequireRoundTrip(testing::MoeRecipe());
  RequireRoundTrip(testing::TinyRecipe());
}

}  // namespace
}  // namespace attune::megatron

namespace attune::megatron {
namespace {

TEST_CASE("a launch under srun imports: srun's layout read, its other options reported", "[megatron][launch]") {
  std::vector<std::string> unknown;
  Recipe r = Import("srun -N 2 --ntasks-per-node=1 --label torchrun --nnodes 2 --nproc-per-node 4 pretrain_gpt.py --micro-batch-size 1", &unknown);
  CHECK(r.topology.WorldSize() == 8);  // torchrun under srun: torchrun's layout
  CHECK(r.launcher_hint == "torchrun");
  CHECK(GetValue(r, "--micro-batch-size") == "1");
  CHECK(Contains(unknown, "--label (an srun option before the launcher: how Slurm runs the job, not the recipe; give it to the slurm launcher as srun_args)"));
  CHECK_FALSE(Contains(unknown, "-N (an srun option before the launcher: how Slurm runs the job, not the recipe; give it to the slurm launcher as srun_args)"));

  // srun starting the script itself, one process per task: srun's layout is the topology.
  std::vector<std::string> direct_unknown;
  Recipe d = Import("srun --nodes=2 --ntasks-per-node 8 python pretrain_gpt.py --micro-batch-size 2", &direct_unknown);
  CHECK(d.topology.nodes == 2);
  CHECK(d.topology.gpus_per_node == 8);
  CHECK(d.launcher_hint == "srun");
  Recipe n = Import("srun -n16 -N2 python pretrain_gpt.py --micro-batch-size 2", &direct_unknown);
  CHECK(n.topology.nodes == 2);
  CHECK(n.topology.gpus_per_node == 8);

  // A job template's placeholders (#SBATCH --nodes=your_nodes, given to srun as the job's layout)
  // are not a layout: said, and no topology is made from them.
  std::vector<std::string> placeholder_unknown;
  Recipe p = Import(
      "srun --nodes=your_nodes --ntasks-per-node=8 python pretrain_gpt.py --micro-batch-size 2",
      &placeholder_unknown);
  CHECK(Contains(
      placeholder_unknown,
      "--nodes your_nodes (srun's layout, but 'your_nodes' is not a number: the topology does not "
      "come from it; give the script a number, or set the recipe's topology)"));
  CHECK(p.topology.gpus_per_node == 8);  // the number that is one still counts
  CHECK(p.topology.nodes == 1);
  std::vector<std::string> unset_unknown;
  Import("srun --nodes=2 --ntasks-per-node=$GPUS python pretrain_gpt.py --micro-batch-size 2",
         &unset_unknown);
  CHECK(Contains(unset_unknown,
                 "--ntasks-per-node ${GPUS} (srun's layout, but '${GPUS}' is not a number: the "
                 "topology does not come from it; give the script a number, or set the "
                 "recipe's topology)"));
}

}  // namespace
}  // namespace attune::megatron
