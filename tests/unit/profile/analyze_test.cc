// The analyser on small traces whose figures are worked out by hand in each test.
#include <catch2/catch.hpp>

#include "profile/profile.h"
#include "trace_builder.h"

namespace attune::profile {
namespace {

using testing::TempDir;
using testing::TraceBuilder;
using nlohmann::json;

RankProfile Analyze(const std::string& path, AnalyzeOptions options = {}) {
  auto p = AnalyzeTrace(path, options);
  REQUIRE(p.ok());
  return *p;
}

const Diagnosis* Find(const std::vector<Diagnosis>& all, const std::string& kind) {
  for (const auto& d : all) {
    if (d.kind == kind) return &d;
  }
  return nullptr;
}

TEST_CASE("the contract figures of one rank", "[profile]") {
  TempDir dir;
  // compute [0,10) [20,30); NCCL [5,25); memcpy [40,45)  (µs)
  TraceBuilder b;
  b.Rank(0, 2).Kernel("gemm", 0, 10).Kernel("gemm", 20, 10).Memcpy(40, 5)
      .Kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 5, 20);
  RankProfile p = Analyze(b.Save(dir, "t.json"));
  CHECK(p.rank == 0);
  CHECK(p.basis == Basis::kGpuKernels);
  CHECK(p.figures.window_ns == 45'000);
  CHECK(p.figures.busy_ns == 35'000);
  CHECK(p.figures.idle_ns == 10'000);
  CHECK(p.figures.compute_ns == 20'000);
  CHECK(p.figures.communication_ns == 20'000);
  CHECK(p.figures.memory_ns == 5'000);
  CHECK(p.figures.exposed_communication_ns == 10'000);  // [10,20)
  REQUIRE(p.figures.comm_compute_overlap);
  CHECK(*p.figures.comm_compute_overlap == Approx(0.5));
  CHECK(p.kernels == 3);
  CHECK(p.communication_kernels == 1);
  CHECK(p.memory_events == 1);
}

TEST_CASE("NCCL is recognised in any case, and overlap is null without communication", "[profile]") {
  TempDir dir;
  TraceBuilder with, without;
  with.Kernel("void NCCLsomething", 0, 10).Kernel("gemm", 0, 10);
  without.Kernel("gemm", 0, 10).Kernel("gemm", 12, 3);
  CHECK(Analyze(with.Save(dir, "a_rank0.json")).communication_kernels == 1);
  RankProfile p = Analyze(without.Save(dir, "b_rank0.json"));
  CHECK(p.figures.communication_ns == 0);
  CHECK_FALSE(p.figures.comm_compute_overlap);
}

TEST_CASE("an idle gap is launch-bound when its kernel was launched after the gap began",
          "[profile][launch]") {
  TempDir dir;
  TraceBuilder b;
  b.Kernel("a", 0, 10, 1).Launch(1, -5)    // busy [0,10)
      .Kernel("b", 20, 10, 2).Launch(2, 15)  // gap [10,20): launched at 15 > 10 → launch-bound
      .Kernel("c", 35, 5, 3).Launch(3, 5)    // gap [30,35): launched at 5, before → GPU-side wait
      .Kernel("d", 50, 10, 4);               // gap [40,50): no launch in the trace
  RankProfile p = Analyze(b.Save(dir, "rank0.json"));
  CHECK(p.launch.gaps == 3);
  CHECK(p.launch.gap_ns == 25'000);
  CHECK(p.launch.launch_bound_gaps == 1);
  CHECK(p.launch.launch_bound_ns == 10'000);
  CHECK(p.launch.unmatched_gaps == 1);
  CHECK(p.launch.kernels == 4);
  CHECK(p.launch.short_kernels == 1);  // "c", 5 µs
}

TEST_CASE("kernels belong to the step during which the CPU launched them", "[profile][steps]") {
  TempDir dir;
  TraceBuilder b;
  b.Step(7, 0, 100).Step(8, 100, 100)
      .Kernel("a", 60, 50, 1).Launch(1, 50)     // step 7, runs into step 8's CPU time
      .Kernel("b", 110, 20, 2).Launch(2, 95)    // launched in step 7
      .Kernel("c", 150, 30, 3).Launch(3, 120)   // step 8
      .Kernel("nccl_x", 170, 20, 4).Launch(4, 130);
  RankProfile p = Analyze(b.Save(dir, "rank0.json"));
  REQUIRE(p.steps.size() == 2);
  CHECK(p.steps[0].number == 7);
  CHECK(p.steps[0].activities == 2);
  CHECK(p.steps[0].cpu_ns == 100'000);
  // Step 7's GPU span: from its first kernel (60) to step 8's first (150).
  CHECK(p.steps[0].figures.window_ns == 90'000);
  CHECK(p.steps[0].figures.compute_ns == 70'000);
  CHECK(p.steps[1].activities == 2);
  CHECK(p.steps[1].figures.window_ns == 40'000);  // [150,190)
  CHECK(p.steps[1].figures.exposed_communication_ns == 10'000);  // [180,190)
}

TEST_CASE("collectives by type and size from kernel args, record_param_comms and kernel names",
          "[profile][nccl]") {
  TempDir dir;
  TraceBuilder b;
  b.Kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)", 0, 10, 1,
           {{"Collective name", "allreduce"}, {"In msg nelems", 1000}, {"dtype", "Float"},
            {"Process Group Description", "default_pg"}})
      .Kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)", 20, 30, 2,
              {{"Collective name", "allreduce"}, {"In msg nelems", 3000}, {"dtype", "Float"},
               {"Process Group Description", "default_pg"}})
      .Kernel("ncclDevKernel_AllGather_RING_LL(x)", 60, 5, 3, {{"External id", 77}})
      .CpuOp("record_param_comms", 55, 1, "1",
             {{"External id", 77}, {"Collective name", "_allgather_base"},
              {"In msg nelems", 512}, {"dtype", "BFloat16"}})
      .Kernel("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWork)", 70, 5, 4);
  RankProfile p = Analyze(b.Save(dir, "rank0.json"));
  REQUIRE(p.collectives.size() == 3);
  const CollectiveSummary& ar = p.collectives[0];  // longest first
  CHECK(ar.type == "allreduce");
  CHECK(ar.count == 2);
  CHECK(ar.total_ns == 40'000);
  CHECK(ar.min_bytes == 4000);
  CHECK(ar.max_bytes == 12000);
  CHECK(ar.total_bytes == 16000);
  CHECK(ar.group == "default_pg");
  CHECK(ar.size_source == "kernel args");
  bool gather = false, sendrecv = false;
  for (const auto& c : p.collectives) {
    if (c.type == "allgather") {
      gather = true;
      CHECK(c.median_bytes == 1024);
      CHECK(c.size_source == "record_param_comms");
    }
    if (c.type == "sendrecv") {
      sendrecv = true;
      CHECK(c.dtype == "int8_t");
      CHECK(c.sized == 0);
    }
  }
  CHECK(gather);
  CHECK(sendrecv);
}

TEST_CASE("pipeline wait is diagnosed only when the p2p kernels are known to be pipeline transfers",
          "[profile][bubble]") {
  TempDir dir;
  // One step: compute [0,40) [60,100); a recv [40,60) with nothing else running.
  auto build = [](json args) {
    TraceBuilder b;
    b.Step(1, -10, 120).Kernel("gemm", 0, 40, 1).Launch(1, -5).Kernel("gemm", 60, 40, 2)
        .Launch(2, -4).Kernel("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", 40, 20, 3, args)
        .Launch(3, -3);
    return b;
  };
  RankProfile named = Analyze(build({{"Collective name", "recv"}}).Save(dir, "a_rank0.json"));
  REQUIRE(named.bubble);
  CHECK(named.bubble->pipeline);
  CHECK(named.bubble->wait_ns == 20'000);
  CHECK(named.bubble->fraction == Approx(0.2));
  RankProfile bare = Analyze(build(json::object()).Save(dir, "b_rank0.json"));
  REQUIRE(bare.bubble);
  CHECK_FALSE(bare.bubble->pipeline);
  std::string path = build(json::object()).Save(dir, "c_rank0.json");
  AnalyzeOptions pp4;
  pp4.pipeline_parallel = 4;
  CHECK(Analyze(path, pp4).bubble->pipeline);
  AnalyzeOptions pp1;
  pp1.pipeline_parallel = 1;
  CHECK_FALSE(Analyze(path, pp1).bubble);

  auto report = AnalyzeTraces({dir.File("a_rank0.json")}, {});
  REQUIRE(report.ok());
  CHECK(Find(report->diagnoses, "pipeline_bubble"));
  report = AnalyzeTraces({dir.File("b_rank0.json")}, {});
  REQUIRE(report.ok());
  CHECK_FALSE(Find(report->diagnoses, "pipeline_bubble"));
}

TEST_CASE("without distributedInfo the rank comes from the file name, or stays unknown", "[profile]") {
  TempDir dir;
  TraceBuilder b;
  b.Kernel("gemm", 0, 10);
  RankProfile named = Analyze(b.Save(dir, "job_rank7.pt.trace.json"));
  CHECK(named.rank == 7);
  CHECK(named.rank_source == "file name");
  REQUIRE_FALSE(named.notes.empty());
  CHECK_THAT(named.notes[0], Catch::Contains("no distributedInfo"));
  RankProfile unknown = Analyze(b.Save(dir, "host_1234.pt.trace.json"));
  CHECK_FALSE(unknown.rank);
  CHECK(unknown.rank_source == "unknown");
  CHECK_THAT(unknown.notes[0], Catch::Contains("the rank is unknown"));
}

TEST_CASE("two traces of the same rank are refused", "[profile]") {
  TempDir dir;
  TraceBuilder b;
  b.Rank(2, 4).Kernel("gemm", 0, 10);
  auto report = AnalyzeTraces({b.Save(dir, "a.json"), b.Save(dir, "b.json")}, {});
  REQUIRE_FALSE(report.ok());
  CHECK_THAT(report.status().message(), Catch::Contains("rank 2"));
  CHECK_THAT(report.status().message(), Catch::Contains("one trace per rank"));
}

TEST_CASE("a CPU-only trace is measured on its operators", "[profile][cpu]") {
  TempDir dir;
  TraceBuilder b;
  // Thread 1: an op [0,100) around an all_reduce [40,60); thread 2: an op [50,70).
  b.CpuOp("aten::backward", 0, 100, "1").CpuOp("c10d::allreduce_", 40, 20, "1")
      .CpuOp("aten::add", 50, 20, "2").Step(1, 0, 100);
  RankProfile p = Analyze(b.Save(dir, "rank0.json"));
  CHECK(p.basis == Basis::kCpuOps);
  CHECK(p.cpu_ops == 3);
  CHECK(p.figures.window_ns == 100'000);
  CHECK(p.figures.communication_ns == 20'000);
  CHECK(p.figures.compute_ns == 90'000);                 // [0,40) ∪ [50,100)
  CHECK(p.figures.exposed_communication_ns == 10'000);  // [40,50)
  REQUIRE(p.steps.size() == 1);
  CHECK(p.steps[0].activities == 3);
  CHECK_THAT(p.notes.back(), Catch::Contains("CPU-only trace"));
}

TEST_CASE("a trace with nothing timed says so", "[profile]") {
  TempDir dir;
  TraceBuilder b;
  b.Raw({{"ph", "M"}, {"name", "process_name"}, {"pid", 1}});
  RankProfile p = Analyze(b.Save(dir, "rank0.json"));
  CHECK(p.basis == Basis::kNone);
  CHECK_THAT(p.notes.back(), Catch::Contains("nothing to measure"));
}

TEST_CASE("the rank with the most compute is the straggler; the others wait in collectives",
          "[profile][ranks]") {
  TempDir dir;
  TraceBuilder slow, fast;
  slow.Rank(0, 2).Step(1, 0, 200).Kernel("gemm", 0, 100, 1).Launch(1, 0)
      .Kernel("nccl_ar", 100, 10, 2).Launch(2, 1);
  fast.Rank(1, 2).Step(1, 0, 200).Kernel("gemm", 0, 60, 1).Launch(1, 0)
      .Kernel("nccl_ar", 60, 50, 2).Launch(2, 1);
  auto report = AnalyzeTraces({slow.Save(dir, "r0.json"), fast.Save(dir, "r1.json")}, {});
  REQUIRE(report.ok());
  REQUIRE(report->across.straggler);
  const StragglerReport& s = *report->across.straggler;
  CHECK(report->ranks[s.straggler_index].rank == 0);
  CHECK(s.per == "step");
  CHECK(s.compute_ns == Approx(100'000));
  CHECK(s.median_compute_ns == Approx(60'000));
  CHECK(s.imbalance == Approx(100.0 / 60 - 1));
  CHECK(s.collective_wait_ns[1] == Approx(40'000));
  CHECK(s.collective_wait_ns[0] == Approx(0));
  CHECK(report->across.aligned);
}

TEST_CASE("ranks whose same step starts an hour apart are reported as clock skew", "[profile][ranks]") {
  TempDir dir;
  const double hour = 3600e6;
  TraceBuilder a, b;
  a.Rank(0, 2).Step(5, 0, 100).Kernel("gemm", 10, 50, 1).Launch(1, 5);
  b.Rank(1, 2).Step(5, hour, 100).Kernel("gemm", hour + 10, 50, 1).Launch(1, hour + 5);
  auto report = AnalyzeTraces({a.Save(dir, "r0.json"), b.Save(dir, "r1.json")}, {});
  REQUIRE(report.ok());
  CHECK_FALSE(report->across.aligned);
  REQUIRE(report->across.max_step_offset_ns);
  CHECK(*report->across.max_step_offset_ns == static_cast<int64_t>(hour * 1000));
  REQUIRE_FALSE(report->across.notes.empty());
  CHECK_THAT(report->across.notes[0], Catch::Contains("clock skew"));
  // Per-rank figures stand.
  CHECK(report->ranks[1].figures.compute_ns == 50'000);
}

TEST_CASE("exposed communication leads the diagnosis when it dominates", "[profile][diagnosis]") {
  TempDir dir;
  TraceBuilder b;
  b.Rank(0, 8).Kernel("gemm", 0, 30, 1).Launch(1, -1).Kernel("ncclKernel_AllReduce", 30, 60, 2)
      .Launch(2, 0).Kernel("gemm", 90, 10, 3).Launch(3, 1);
  auto report = AnalyzeTraces({b.Save(dir, "r.json")}, {});
  REQUIRE(report.ok());
  REQUIRE_FALSE(report->diagnoses.empty());
  CHECK(report->diagnoses[0].kind == "communication");
  CHECK(report->diagnoses[0].severity == Approx(0.6));
  CHECK_THAT(report->diagnoses[0].evidence, Catch::Contains("exposed communication 60%"));
  nlohmann::json j = ReportToJson(*report);
  CHECK(j["ranks"][0]["rank"] == 0);
  CHECK(j["ranks"][0]["exposed_communication_us"] == Approx(60.0));
  CHECK(j["ranks"][0]["comm_compute_overlap"] == 0.0);
  CHECK(j["diagnoses"][0]["kind"] == "communication");
}

TEST_CASE("a compute-dominated trace is compute bound", "[profile][diagnosis]") {
  TempDir dir;
  TraceBuilder b;
  b.Kernel("gemm", 0, 95, 1).Launch(1, -1).Kernel("gemm", 96, 4, 2).Launch(2, 0);
  auto report = AnalyzeTraces({b.Save(dir, "rank0.json")}, {});
  REQUIRE(report.ok());
  REQUIRE(report->diagnoses.size() == 1);
  CHECK(report->diagnoses[0].kind == "compute_bound");
}

}  // namespace
}  // namespace attune::profile
