#include "log/envelope.h"

#include <algorithm>
#include <cctype>

#include <openssl/evp.h>

#include "attune/hash.h"

namespace attune::log {
namespace {

constexpr std::string_view kSeqOpen = "{\"seq\":";
constexpr std::string_view kHashMember = ",\"hash\":\"";
constexpr std::string_view kPrevMember = ",\"prev\":\"";
constexpr size_t kHexLen = 64;

bool IsLowerHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool AllOf(std::string_view s, bool (*ok)(char)) {
  return !s.empty() && std::all_of(s.begin(), s.end(), ok);
}

bool IsCampaignChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
}

bool IsTypeChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Reads the decimal seq that follows `{"seq":`. Returns 0 when malformed (seq 0 is never valid).
uint64_t LeadingSeq(std::string_view value) {
  if (value.substr(0, kSeqOpen.size()) != kSeqOpen) return 0;
  uint64_t seq = 0;
  size_t i = kSeqOpen.size();
  for (; i < value.size() && std::isdigit(static_cast<unsigned char>(value[i])); ++i) {
    if (seq > (UINT64_MAX - 9) / 10) return 0;
    seq = seq * 10 + static_cast<uint64_t>(value[i] - '0');
  }
  if (i == kSeqOpen.size() || i >= value.size() || value[i] != ',') return 0;
  return seq;
}

// SHA-256 of `body` + "}" compared with `hex`, without building either string: this runs once
// per event on every open.
bool HashMatches(std::string_view body, std::string_view hex) {
  static constexpr char kHex[] = "0123456789abcdef";
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok = ctx != nullptr && EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) == 1 &&
            EVP_DigestUpdate(ctx, body.data(), body.size()) == 1 &&
            EVP_DigestUpdate(ctx, "}", 1) == 1 && EVP_DigestFinal_ex(ctx, digest, &len) == 1;
  EVP_MD_CTX_free(ctx);
  if (!ok || len * 2 != hex.size()) return false;
  for (unsigned int i = 0; i < len; ++i) {
    if (hex[2 * i] != kHex[digest[i] >> 4] || hex[2 * i + 1] != kHex[digest[i] & 0xf]) {
      return false;
    }
  }
  return true;
}

// Reads the decimal digits at value[*pos] into *out and advances; false when there are none.
bool ReadInt(std::string_view value, size_t* pos, int64_t* out) {
  bool negative = *pos < value.size() && value[*pos] == '-';
  size_t i = *pos + (negative ? 1 : 0), start = i;
  int64_t v = 0;
  for (; i < value.size() && std::isdigit(static_cast<unsigned char>(value[i])); ++i) {
    if (i - start >= 18) return false;  // more digits than an int64 holds safely
    v = v * 10 + (value[i] - '0');
  }
  if (i == start) return false;
  *out = negative ? -v : v;
  *pos = i;
  return true;
}

bool Expect(std::string_view value, size_t* pos, std::string_view literal) {
  if (value.substr(*pos, literal.size()) != literal) return false;
  *pos += literal.size();
  return true;
}

}  // namespace

bool IsValidCampaignId(std::string_view id) { return id.size() <= 128 && AllOf(id, IsCampaignChar); }
bool IsValidEventType(std::string_view type) { return type.size() <= 128 && AllOf(type, IsTypeChar); }

std::string EventKeyPrefix(std::string_view campaign) { return std::string(campaign) + "/"; }

std::string EventKeyUpperBound(std::string_view campaign) { return std::string(campaign) + "0"; }

std::string EventKey(std::string_view campaign, uint64_t seq) {
  std::string key = EventKeyPrefix(campaign);
  for (int shift = 56; shift >= 0; shift -= 8) {
    key.push_back(static_cast<char>((seq >> shift) & 0xff));
  }
  return key;
}

uint64_t SeqFromKey(std::string_view key, std::string_view campaign) {
  if (key.size() != campaign.size() + 9 || key.substr(0, campaign.size()) != campaign ||
      key[campaign.size()] != '/') {
    return 0;
  }
  uint64_t seq = 0;
  for (size_t i = campaign.size() + 1; i < key.size(); ++i) {
    seq = (seq << 8) | static_cast<unsigned char>(key[i]);
  }
  return seq;
}

Result<std::string> EncodeEnvelope(EventRecord* record) {
  std::string data;
  try {
    data = record->data.dump();
  } catch (const std::exception& e) {
    // nlohmann refuses invalid UTF-8 by throwing; that is an input error of this event.
    return Status::InvalidArgument("event '" + record->type + "': data cannot be stored: " +
                                   e.what());
  }
  std::string body = std::string(kSeqOpen) + std::to_string(record->seq) + ",\"type\":\"" +
                     record->type + "\",\"v\":" + std::to_string(record->v) +
                     ",\"ts\":" + std::to_string(record->ts_ms) + ",\"data\":" + data +
                     std::string(kPrevMember) + record->prev + "\"";
  record->hash = Sha256Hex(body + "}");
  return body + std::string(kHashMember) + record->hash + "\"}";
}

Result<EnvelopeLinks> CheckEnvelope(std::string_view value) {
  // The tail is fixed: ,"hash":"<64 hex>"}
  const size_t tail = kHashMember.size() + kHexLen + 2;
  if (value.size() < tail + kSeqOpen.size() || value.substr(value.size() - 2) != "\"}" ||
      value.substr(value.size() - tail, kHashMember.size()) != kHashMember) {
    return Status::Corruption("the stored value is not an attune envelope (no trailing hash)");
  }
  EnvelopeLinks links;
  links.hash = value.substr(value.size() - kHexLen - 2, kHexLen);
  std::string_view body = value.substr(0, value.size() - tail);
  if (!IsLowerHex(links.hash)) return Status::Corruption("the stored hash is not lowercase hex");
  if (!HashMatches(body, links.hash)) {
    return Status::Corruption("its bytes do not match its hash (the event was altered)");
  }
  // The body ends with ,"prev":"<0 or 64 hex>"
  for (size_t prev_len : {kHexLen, size_t{0}}) {
    size_t start = kPrevMember.size() + prev_len + 1;
    if (body.size() < start || body.back() != '"') continue;
    if (body.substr(body.size() - start, kPrevMember.size()) != kPrevMember) continue;
    links.prev = body.substr(body.size() - prev_len - 1, prev_len);
    if (!IsLowerHex(links.prev)) continue;
    links.seq = LeadingSeq(body);
    if (links.seq == 0) return Status::Corruption("the envelope does not start with its seq");
    return links;
  }
  return Status::Corruption("the envelope has no valid 'prev' member");
}

Result<EventRecord> DecodeEnvelope(std::string_view value) {
  // The header and the tail have a fixed shape (the value passed CheckEnvelope at open), so
  // only `data` goes through the JSON parser.
  EventRecord r;
  size_t pos = 0;
  int64_t seq = 0, v = 0;
  bool ok = Expect(value, &pos, kSeqOpen) && ReadInt(value, &pos, &seq) &&
            Expect(value, &pos, ",\"type\":\"");
  size_t type_end = ok ? value.find('"', pos) : std::string_view::npos;
  if (type_end == std::string_view::npos) return Status::Corruption("malformed envelope header");
  r.type.assign(value.substr(pos, type_end - pos));
  pos = type_end + 1;
  ok = Expect(value, &pos, ",\"v\":") && ReadInt(value, &pos, &v) &&
       Expect(value, &pos, ",\"ts\":") && ReadInt(value, &pos, &r.ts_ms) &&
       Expect(value, &pos, ",\"data\":");
  size_t prev_at = value.rfind(kPrevMember);
  size_t hash_at = value.rfind(kHashMember);
  if (!ok || prev_at == std::string_view::npos || hash_at == std::string_view::npos ||
      prev_at < pos || hash_at < prev_at + kPrevMember.size() + 1 ||
      value.size() < hash_at + kHashMember.size() + 2) {
    return Status::Corruption("malformed envelope");
  }
  r.seq = static_cast<uint64_t>(seq);
  r.v = static_cast<int>(v);
  r.prev.assign(value.substr(prev_at + kPrevMember.size(), hash_at - 1 - prev_at - kPrevMember.size()));
  r.hash.assign(value.substr(hash_at + kHashMember.size(), value.size() - 2 - hash_at - kHashMember.size()));
  std::string_view data = value.substr(pos, prev_at - pos);
  r.data = nlohmann::json::parse(data.begin(), data.end(), nullptr, /*allow_exceptions=*/false);
  if (r.data.is_discarded()) return Status::Corruption("the event's data is not valid JSON");
  return r;
}

}  // namespace attune::log
