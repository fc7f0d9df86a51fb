// Every event type, written and folded with hostile values: NaN and infinities, invalid UTF-8,
// a 1 MB string, huge integers, wrong types, empty and missing fields. Each event either round-
// trips through the envelope codec and folds, or is refused with a Status; nothing aborts, and a
// refused event leaves the folded state as it was.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "api/utf8.h"
#include "campaign_fixtures.h"
#include "log/envelope.h"

namespace attune {
namespace {

using nlohmann::json;

const std::vector<std::string>& AllEventTypes() {
  static const std::vector<std::string> kTypes = {
      events::kCampaignStarted,  events::kCampaignResumed, events::kWorkflowAmended,
      events::kStepStarted,      events::kStepFinished,    events::kProposalRecorded,
      events::kAgentFailed,      events::kGateVerdict,     events::kJobRequested,
      events::kJobSubmitted,     events::kJobCancelRequested, events::kJobFinished,
      events::kCandidateRanked,  events::kLeaderChanged,   events::kPairedLossChecked,
      events::kSpeedupMeasured,  events::kCampaignPaused,  events::kCampaignFinished,
      events::kReportWritten,    events::kProfileAnalyzed};
  return kTypes;
}

// Hostile values for one field.
std::vector<json> HostileValues() {
  const std::string invalid_utf8 = std::string("bad \xff\xfe byte \xc3", 12);
  return {json(std::nan("")),
          json(std::numeric_limits<double>::infinity()),
          json(-std::numeric_limits<double>::infinity()),
          json(invalid_utf8),
          json(std::string(1 << 20, 'x')),
          json(std::numeric_limits<uint64_t>::max()),
          json(std::numeric_limits<int64_t>::min()),
          json(""),
          json(nullptr),
          json::array({json(invalid_utf8), json(std::nan(""))}),
          json::object({{invalid_utf8, 1}})};
}

// The fields the engine writes for each type (from a valid campaign), each replaced in turn.
std::vector<std::string> FieldsOf(const std::string& type) {
  static const std::map<std::string, std::vector<std::string>> kFields = {
      {events::kJobFinished, {"job", "status", "charged_gpu_hours", "measurement", "failure",
                              "diagnosis", "log_path", "cancelled_by_engine", "stopped_early",
                              "measured_at_time_limit"}},
      {events::kJobRequested, {"job", "candidate", "purpose", "recipe", "devices",
                               "reserved_gpu_hours", "time_limit_s"}},
      {events::kProposalRecorded, {"candidate", "index", "changes", "recipe", "rationale"}},
      {events::kWorkflowAmended, {"workflow", "settings", "steps", "changes"}},
      {events::kCampaignPaused, {"reason", "on_stop", "jobs"}},
      {events::kStepFinished, {"step", "outcome"}},
      {events::kAgentFailed, {"error"}},
      {events::kProfileAnalyzed, {"job", "traces", "bars", "diagnoses", "error"}},
  };
  auto it = kFields.find(type);
  if (it != kFields.end()) return it->second;
  return {"candidate", "job", "step", "value", "reason"};
}

// Encodes, decodes and applies one event; returns what Apply said. Never throws (the test fails
// if anything escapes).
Status WriteAndFold(CampaignState* state, const std::string& type, json data, uint64_t seq) {
  MakeValidUtf8(data);  // as RunContext::Append does before anything is stored
  EventRecord record;
  record.seq = seq;
  record.type = type;
  record.data = std::move(data);
  auto encoded = log::EncodeEnvelope(&record);
  if (!encoded.ok()) return encoded.status();
  auto decoded = log::DecodeEnvelope(*encoded);
  if (!decoded.ok()) return decoded.status();
  return state->Apply(*decoded);
}

TEST_CASE("every event type survives hostile values: stored and folded, or refused with a Status",
          "[campaign][hostile]") {
  testing::LogBuilder builder(10.0);
  builder.BaselineRun(1, 1000);
  auto base = CampaignState::Fold(builder.events());
  REQUIRE(base.ok());
  size_t refused = 0, folded = 0;
  for (const std::string& type : AllEventTypes()) {
    for (const std::string& field : FieldsOf(type)) {
      for (const json& value : HostileValues()) {
        CampaignState state = *base;
        const uint64_t before = state.last_seq;
        json data = json::object({{field, value}});
        Status s;
        REQUIRE_NOTHROW(s = WriteAndFold(&state, type, data, before + 1));
        if (s.ok()) {
          ++folded;
          CHECK(state.last_seq == before + 1);
        } else {
          ++refused;
          INFO(type << "." << field << ": " << s.ToString());
          CHECK(!s.message().empty());
        }
      }
    }
  }
  CHECK(folded + refused > 100);
  CHECK(refused > 0);
}

TEST_CASE("text from outside is stored as valid UTF-8 with the replaced bytes counted",
          "[campaign][hostile]") {
  json data = {{"failure", {{"evidence", std::string("oom \xff\xfe here", 11)}}},
               {std::string("k\xc3", 2), "v"}};
  CHECK(MakeValidUtf8(data) == 3);
  CHECK(data["failure"]["evidence"] == "oom \xEF\xBF\xBD\xEF\xBF\xBD here");
  CHECK(data.contains("k\xEF\xBF\xBD"));
  CHECK_NOTHROW(data.dump());
  size_t replaced = 99;
  CHECK(ToValidUtf8("plain", &replaced) == "plain");
  CHECK(replaced == 0);
  // Overlong encodings and surrogates are not well-formed UTF-8 either.
  CHECK(ToValidUtf8(std::string("\xc0\xaf", 2), &replaced) == "\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(ToValidUtf8(std::string("\xed\xa0\x80", 3), &replaced) ==
        "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

}  // namespace
}  // namespace attune
