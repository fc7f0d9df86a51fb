// Fuzzes every event type through the path the engine uses: sanitise (valid UTF-8, finite numbers)
// -> encode (envelope) -> decode -> fold onto a started campaign. Any input must end in a stored
// and folded event or a Status, never a crash; and a decoded event must fold exactly as the event
// that was encoded (what is appended is what a replay folds).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "../../tests/unit/campaign/campaign_fixtures.h"
#include "api/utf8.h"
#include "log/envelope.h"

namespace {

const char* const kTypes[] = {
    attune::events::kCampaignStarted,    attune::events::kCampaignResumed,
    attune::events::kWorkflowAmended,    attune::events::kStepStarted,
    attune::events::kStepFinished,       attune::events::kProposalRecorded,
    attune::events::kAgentFailed,        attune::events::kGateVerdict,
    attune::events::kJobRequested,       attune::events::kJobSubmitted,
    attune::events::kJobCancelRequested, attune::events::kJobStopRequested, attune::events::kJobFinished,
    attune::events::kCandidateRanked,    attune::events::kLeaderChanged,
    attune::events::kPairedLossChecked,  attune::events::kSpeedupMeasured,
    attune::events::kCampaignPaused,     attune::events::kCampaignFinished,
    attune::events::kReportWritten};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using nlohmann::json;
  static const attune::CampaignState kBase = [] {
    attune::testing::LogBuilder builder(10.0);
    builder.BaselineRun(1, 1000);
    builder.Propose("c001", 1, "2").Request("t-c001-1", "c001", "candidate");
    auto state = attune::CampaignState::Fold(builder.events());
    if (!state.ok()) abort();
    return *state;
  }();
  if (size == 0) return 0;
  const char* type = kTypes[data[0] % (sizeof kTypes / sizeof kTypes[0])];
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  json payload = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (payload.is_discarded()) payload = json{{"reason", text}, {"job", text}, {"step", text}};
  attune::MakeValidUtf8(payload);
  attune::ReplaceNonFinite(payload);

  attune::EventRecord record;
  record.seq = kBase.last_seq + 1;
  record.type = type;
  record.data = payload;
  attune::CampaignState direct = kBase;
  attune::Status folded_direct = direct.Apply(record);

  auto encoded = attune::log::EncodeEnvelope(&record);
  if (!encoded.ok()) return 0;
  auto decoded = attune::log::DecodeEnvelope(*encoded);
  if (!decoded.ok()) abort();  // the codec refused what it wrote
  attune::CampaignState replayed = kBase;
  attune::Status folded_replay = replayed.Apply(*decoded);
  if (folded_direct.ok() != folded_replay.ok()) abort();  // a replay would fold differently
  if (folded_direct.ok() && direct.last_seq != replayed.last_seq) abort();
  return 0;
}
