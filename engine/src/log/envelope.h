// Copyright attune authors.
//
// The byte format of one stored event (docs/events.md is the spec).
//
// Key:   "<campaign>/" followed by the sequence number as 8 bytes, big-endian (so the default
//        bytewise comparator orders events numerically).
// Value: the canonical envelope, one line of JSON with the members in this fixed order:
//          {"seq":N,"type":"T","v":N,"ts":N,"data":D,"prev":"P","hash":"H"}
//        where D is nlohmann::json::dump() of the data (compact, keys sorted) and
//        H = SHA-256 (lowercase hex) of the value with `,"hash":"H"` removed, i.e. of the bytes
//          {"seq":N,"type":"T","v":N,"ts":N,"data":D,"prev":"P"}
//
// Verification works on the stored bytes as they are, never on a re-serialization, so a future
// change in JSON formatting cannot make an old log fail its hash check.
//
// Thread-safety: pure functions.
#ifndef ATTUNE_ENGINE_LOG_ENVELOPE_H_
#define ATTUNE_ENGINE_LOG_ENVELOPE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "attune/status.h"
#include "log/event_log.h"

namespace attune::log {

// Campaign ids and event type names are restricted to these characters so that keys and the
// envelope never need escaping: [A-Za-z0-9._-] for campaigns, [A-Za-z0-9_] for types.
bool IsValidCampaignId(std::string_view id);
bool IsValidEventType(std::string_view type);

// "<campaign>/" + 8-byte big-endian seq.
std::string EventKey(std::string_view campaign, uint64_t seq);
// "<campaign>/" (every event key of the campaign starts with it).
std::string EventKeyPrefix(std::string_view campaign);
// The exclusive upper bound of the campaign's keys: the prefix with '/' replaced by '0'.
std::string EventKeyUpperBound(std::string_view campaign);
// The seq of an event key of `campaign`; 0 when `key` is not one.
uint64_t SeqFromKey(std::string_view key, std::string_view campaign);

// Metadata keys start with '~', which no campaign id may contain, so they never mix with events.
inline constexpr char kMetaCampaignKey[] = "~meta/campaign";
inline constexpr char kMetaLastSeqKey[] = "~meta/last_seq";

// Builds the canonical value of `record` (seq, type, v, ts_ms, data, prev) and fills
// record->hash. Fails when the data cannot be serialized (invalid UTF-8).
Result<std::string> EncodeEnvelope(EventRecord* record);

// What the chain check needs from a stored value, read without a JSON parse.
struct EnvelopeLinks {
  uint64_t seq = 0;
  std::string_view prev;  // points into the value
  std::string_view hash;  // points into the value
};

// Checks that `value` is a canonical envelope whose hash matches its bytes, and returns its
// links. The message says which check failed (it is prefixed with the event's seq by callers).
Result<EnvelopeLinks> CheckEnvelope(std::string_view value);

// Parses a stored value into a record (no hash check: CheckEnvelope does that).
Result<EventRecord> DecodeEnvelope(std::string_view value);

}  // namespace attune::log

#endif  // ATTUNE_ENGINE_LOG_ENVELOPE_H_
