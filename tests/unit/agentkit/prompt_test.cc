// The proposal prompt lists each legal move with the levers it makes legal.
#include <catch2/catch.hpp>

#include <string>

#include "attune/agentkit/prompt.h"

namespace attune {
namespace {

std::string LineOf(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  if (at == std::string::npos) return "";
  const size_t start = text.rfind('\n', at) + 1;
  return text.substr(start, text.find('\n', at) - start);
}

TEST_CASE("a legal move that meets another lever's prerequisite says what it makes legal",
          "[agentkit][prompt]") {
  CampaignView v;
  v.stack = "megatron";
  Move dispatcher{"moe_token_dispatcher", {{"--moe-token-dispatcher-type", "allgather", "alltoall"}},
                  "dispatcher allgather -> alltoall", {}, {}};
  Move overlap{"moe_ep_overlap", {{"--overlap-moe-expert-parallel-comm", std::nullopt, ""}}, "", {}, {}};
  dispatcher.unlocks = {overlap, overlap};
  Move gemm{"moe_grouped_gemm", {{"--moe-grouped-gemm", std::nullopt, ""}}, "", {}, {}};
  v.legal_moves = {dispatcher, gemm};
  const std::string prompt = agentkit::BuildProposalPrompt(v);
  const std::string line = LineOf(prompt, "lever moe_token_dispatcher");
  INFO(prompt);
  CHECK(line.find("makes legal: moe_ep_overlap") != std::string::npos);
  // Each lever once, however many of its moves are unlocked.
  CHECK(line.find("moe_ep_overlap moe_ep_overlap") == std::string::npos);
  const std::string other = LineOf(prompt, "lever moe_grouped_gemm");
  REQUIRE_FALSE(other.empty());
  CHECK(other.find("makes legal") == std::string::npos);
}

}  // namespace
}  // namespace attune
