// Copyright attune authors.
//
// Packs documents (token ids with a loss mask) into rows of exactly seq_length tokens.
//   greedy:   next-fit in input order. With splitting, a document that does not fit continues in
//             the next row, so only the last row is padded. Without, it starts a new row (the
//             current one is padded).
//   best-fit: each document goes into the open row with the least room that still holds it;
//             at most `open_rows` rows are open (when all are, the fullest is written out), which
//             bounds memory. Documents are not split across rows, except, with splitting, those
//             longer than seq_length, cut into full rows first.
// Without splitting, a document longer than seq_length is truncated to seq_length (counted).
// Padding uses the pad token with mask 0.
#ifndef ATTUNE_ENGINE_DATA_PACKER_H_
#define ATTUNE_ENGINE_DATA_PACKER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "attune/status.h"

namespace attune::data {

enum class PackStrategy { kGreedy, kBestFit };
std::string_view PackStrategyName(PackStrategy s);
std::optional<PackStrategy> PackStrategyFromName(std::string_view name);

struct PackOptions {
  uint32_t seq_length = 0;
  PackStrategy strategy = PackStrategy::kGreedy;
  bool split = true;
  int32_t pad_id = 0;
  size_t open_rows = 256;  // best-fit only
};

struct PackedRow {
  std::vector<int32_t> ids;   // exactly seq_length
  std::vector<uint8_t> mask;  // exactly seq_length
  uint32_t documents = 0;     // documents (or pieces of them) in the row
  uint32_t pad = 0;
};

// Counts over the whole run.
struct PackCounts {
  uint64_t documents = 0, rows = 0, tokens_in = 0, tokens_kept = 0, pad_tokens = 0;
  uint64_t split_documents = 0, truncated_documents = 0, truncated_tokens = 0;
  uint64_t loss_tokens = 0;
  uint64_t min_loss_per_row = UINT64_MAX, max_loss_per_row = 0;
};

class Packer {
 public:
  // `emit` receives each finished row; its Status stops the run.
  using Emit = std::function<Status(const PackedRow&)>;
  Packer(PackOptions options, Emit emit) : opt_(options), emit_(std::move(emit)) {}

  Status Add(const std::vector<int32_t>& ids, const std::vector<uint8_t>& mask);
  // Writes out every open row.
  Status Finish();
  const PackCounts& Counts() const { return counts_; }

 private:
  struct OpenRow {
    PackedRow row;
    size_t Free(uint32_t s) const { return s - row.ids.size(); }
  };
  Status AddGreedy(const int32_t* ids, const uint8_t* mask, size_t n);
  Status AddBestFit(const int32_t* ids, const uint8_t* mask, size_t n);
  Status Close(OpenRow* row);

  PackOptions opt_;
  Emit emit_;
  PackCounts counts_;
  std::vector<OpenRow> open_;
};

}  // namespace attune::data

#endif  // ATTUNE_ENGINE_DATA_PACKER_H_
