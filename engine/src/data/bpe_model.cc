// Copyright attune authors.
#include "data/bpe_model.h"

#include <cstdio>
#include <queue>

namespace attune::data {
namespace {

using nlohmann::json;

// Words memoised before the cache is emptied: bounds memory on any input.
constexpr size_t kCacheCapacity = 200000;

uint64_t PairKey(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

size_t Utf8Length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  return 4;
}

// A merge is "a b" (older files) or ["a", "b"] (newer files, which allow spaces in tokens).
bool SplitMerge(const json& m, std::string* a, std::string* b) {
  if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
    *a = m[0].get<std::string>();
    *b = m[1].get<std::string>();
    return true;
  }
  if (!m.is_string()) return false;
  const std::string& s = m.get_ref<const std::string&>();
  size_t space = s.find(' ');
  if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) return false;
  *a = s.substr(0, space);
  *b = s.substr(space + 1);
  return true;
}

// The queue entry of a possible merge; the lowest rank, then the leftmost position, comes first.
struct Candidate {
  uint32_t rank;
  int32_t pos;
  int32_t new_id;
  bool operator<(const Candidate& o) const {
    return rank != o.rank ? rank > o.rank : pos > o.pos;
  }
};

}  // namespace

Result<std::unique_ptr<BpeModel>> BpeModel::FromJson(const json& spec, const std::string& where) {
  if (!spec.is_object() || spec.value("type", std::string("BPE")) != "BPE") {
    return Status::InvalidArgument(
        where + ": model type '" + (spec.is_object() ? spec.value("type", std::string()) : "") +
        "' is not supported (only BPE; for SentencePiece unigram models pass the .model file)");
  }
  if (spec.contains("dropout") && !spec["dropout"].is_null() && spec["dropout"].get<double>() != 0) {
    return Status::InvalidArgument(where + ": BPE dropout is a training-time feature; set it to null");
  }
  std::unique_ptr<BpeModel> m(new BpeModel());
  const json& vocab = spec.value("vocab", json::object());
  if (!vocab.is_object() || vocab.empty()) {
    return Status::InvalidArgument(where + ": model.vocab must be a non-empty object");
  }
  m->vocab_.reserve(vocab.size());
  for (const auto& [token, id] : vocab.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX) {
      return Status::InvalidArgument(where + ": model.vocab['" + token + "'] is not a valid id");
    }
    m->vocab_[token] = id.get<int32_t>();
    m->vocab_size_ = std::max<int64_t>(m->vocab_size_, id.get<int64_t>() + 1);
  }
  if (spec.contains("unk_token") && spec["unk_token"].is_string()) {
    m->unk_token_ = spec["unk_token"].get<std::string>();
  }
  if (spec.contains("continuing_subword_prefix") && spec["continuing_subword_prefix"].is_string()) {
    m->continuing_prefix_ = spec["continuing_subword_prefix"].get<std::string>();
  }
  if (spec.contains("end_of_word_suffix") && spec["end_of_word_suffix"].is_string()) {
    m->end_suffix_ = spec["end_of_word_suffix"].get<std::string>();
  }
  m->byte_fallback_ = spec.value("byte_fallback", false);
  m->fuse_unk_ = spec.value("fuse_unk", false);
  m->ignore_merges_ = spec.value("ignore_merges", false);
  ATTUNE_RETURN_IF_ERROR(m->LoadMerges(spec.value("merges", json::array()), where));
  return m;
}

Status BpeModel::LoadMerges(const json& merges, const std::string& where) {
  merges_.reserve(merges.size());
  std::string a, b;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    std::string at = where + ": model.merges[" + std::to_string(rank) + "]";
    if (!SplitMerge(merges[rank], &a, &b)) {
      return Status::InvalidArgument(at + ": expected \"a b\" or [\"a\", \"b\"], found " +
                                     merges[rank].dump());
    }
    auto ia = vocab_.find(a), ib = vocab_.find(b);
    std::string joined = a + b.substr(std::min(continuing_prefix_.size(), b.size()));
    auto in = vocab_.find(joined);
    if (ia == vocab_.end() || ib == vocab_.end() || in == vocab_.end()) {
      return Status::InvalidArgument(at + ": a token of '" + a + " " + b +
                                     "' or their merge is not in model.vocab");
    }
    // A later duplicate replaces an earlier one, as the Rust crate's map does.
    merges_[PairKey(ia->second, ib->second)] = Merge{static_cast<uint32_t>(rank), in->second};
  }
  return Status::Ok();
}

std::optional<int32_t> BpeModel::TokenId(std::string_view token) const {
  auto it = vocab_.find(std::string(token));
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const BpeModel::Merge* BpeModel::FindMerge(int32_t left, int32_t right) const {
  auto it = merges_.find(PairKey(left, right));
  return it == merges_.end() ? nullptr : &it->second;
}

void BpeModel::InitialSymbols(std::string_view word, std::vector<Symbol>* symbols) const {
  bool unk = false;  // an unknown token is pending: unk_id, unk_len
  int32_t unk_id = 0;
  uint32_t unk_len = 0;
  auto add = [symbols](int32_t id, uint32_t bytes) {
    int32_t n = static_cast<int32_t>(symbols->size());
    symbols->push_back({id, n - 1, -1, bytes});
    if (n > 0) (*symbols)[n - 1].next = n;
  };
  std::string s;
  for (size_t i = 0; i < word.size();) {
    size_t len = std::min(Utf8Length(static_cast<unsigned char>(word[i])), word.size() - i);
    bool last = i + len == word.size();
    s.assign(i == 0 ? "" : continuing_prefix_);
    s.append(word.substr(i, len));
    if (last) s += end_suffix_;
    i += len;
    if (auto it = vocab_.find(s); it != vocab_.end()) {
      if (unk) add(unk_id, unk_len);
      unk = false;
      add(it->second, static_cast<uint32_t>(len));
      continue;
    }
    if (byte_fallback_) {
      std::vector<int32_t> bytes;
      char name[8];
      for (unsigned char c : s) {
        std::snprintf(name, sizeof(name), "<0x%02X>", c);
        auto bt = vocab_.find(name);
        if (bt == vocab_.end()) break;
        bytes.push_back(bt->second);
      }
      if (bytes.size() == s.size()) {
        // The crate adds these without first flushing a pending unknown; so do we.
        for (int32_t id : bytes) add(id, 1);
        continue;
      }
    }
    if (!unk_token_) continue;  // no unk token: the character is dropped, as in the crate
    auto unk_entry = vocab_.find(*unk_token_);
    if (unk_entry == vocab_.end()) continue;
    if (unk && fuse_unk_) {
      unk_len += static_cast<uint32_t>(len);
    } else {
      if (unk) add(unk_id, unk_len);
      unk = true;
      unk_id = unk_entry->second;
      unk_len = static_cast<uint32_t>(len);
    }
  }
  if (unk) add(unk_id, unk_len);
}

void BpeModel::MergeAll(std::vector<Symbol>* symbols) const {
  std::vector<Symbol>& sym = *symbols;
  std::priority_queue<Candidate> queue;
  for (size_t i = 0; i + 1 < sym.size(); ++i) {
    if (const Merge* m = FindMerge(sym[i].id, sym[i + 1].id)) {
      queue.push({m->rank, static_cast<int32_t>(i), m->new_id});
    }
  }
  while (!queue.empty()) {
    Candidate top = queue.top();
    queue.pop();
    Symbol& cur = sym[top.pos];
    if (cur.bytes == 0 || cur.next == -1) continue;
    Symbol& right = sym[cur.next];
    const Merge* m = FindMerge(cur.id, right.id);
    if (m == nullptr || m->new_id != top.new_id) continue;  // a stale entry
    cur.id = top.new_id;
    cur.bytes += right.bytes;
    right.bytes = 0;
    cur.next = right.next;
    if (cur.next != -1) sym[cur.next].prev = top.pos;
    if (cur.prev >= 0) {
      if (const Merge* pm = FindMerge(sym[cur.prev].id, cur.id)) {
        queue.push({pm->rank, cur.prev, pm->new_id});
      }
    }
    if (cur.next != -1) {
      if (const Merge* nm = FindMerge(cur.id, sym[cur.next].id)) {
        queue.push({nm->rank, top.pos, nm->new_id});
      }
    }
  }
}

void BpeModel::Tokenize(std::string_view word, std::vector<int32_t>* ids) {
  if (word.empty()) return;
  std::string key(word);
  if (auto hit = cache_.find(key); hit != cache_.end()) {
    ids->insert(ids->end(), hit->second.begin(), hit->second.end());
    return;
  }
  std::vector<int32_t> result;
  if (auto whole = vocab_.find(key); ignore_merges_ && whole != vocab_.end()) {
    result.push_back(whole->second);
  } else {
    std::vector<Symbol> symbols;
    symbols.reserve(word.size());
    InitialSymbols(word, &symbols);
    MergeAll(&symbols);
    for (const Symbol& s : symbols) {
      if (s.bytes != 0) result.push_back(s.id);
    }
  }
  ids->insert(ids->end(), result.begin(), result.end());
  if (cache_.size() >= kCacheCapacity) cache_.clear();
  cache_.emplace(std::move(key), std::move(result));
}

}  // namespace attune::data
