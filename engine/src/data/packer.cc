// Copyright attune authors.
#include "data/packer.h"

#include <algorithm>

namespace attune::data {
namespace {

void Append(PackedRow* row, const int32_t* ids, const uint8_t* mask, size_t n) {
  row->ids.insert(row->ids.end(), ids, ids + n);
  row->mask.insert(row->mask.end(), mask, mask + n);
  ++row->documents;
}

}  // namespace

std::string_view PackStrategyName(PackStrategy s) {
  return s == PackStrategy::kGreedy ? "greedy" : "best-fit";
}

std::optional<PackStrategy> PackStrategyFromName(std::string_view name) {
  if (name == "greedy") return PackStrategy::kGreedy;
  if (name == "best-fit") return PackStrategy::kBestFit;
  return std::nullopt;
}

Status Packer::Close(OpenRow* open) {
  PackedRow& row = open->row;
  row.pad = static_cast<uint32_t>(opt_.seq_length - row.ids.size());
  row.ids.resize(opt_.seq_length, opt_.pad_id);
  row.mask.resize(opt_.seq_length, 0);
  uint64_t loss = 0;
  for (uint8_t m : row.mask) loss += m;
  ++counts_.rows;
  counts_.pad_tokens += row.pad;
  counts_.loss_tokens += loss;
  counts_.min_loss_per_row = std::min(counts_.min_loss_per_row, loss);
  counts_.max_loss_per_row = std::max(counts_.max_loss_per_row, loss);
  Status s = emit_(row);
  row = PackedRow{};
  return s;
}

Status Packer::Add(const std::vector<int32_t>& ids, const std::vector<uint8_t>& mask) {
  ++counts_.documents;
  counts_.tokens_in += ids.size();
  size_t n = ids.size();
  if (n == 0) return Status::Ok();
  if (!opt_.split && n > opt_.seq_length) {
    ++counts_.truncated_documents;
    counts_.truncated_tokens += n - opt_.seq_length;
    n = opt_.seq_length;
  }
  counts_.tokens_kept += n;
  if (opt_.strategy == PackStrategy::kGreedy) return AddGreedy(ids.data(), mask.data(), n);
  return AddBestFit(ids.data(), mask.data(), n);
}

Status Packer::AddGreedy(const int32_t* ids, const uint8_t* mask, size_t n) {
  if (open_.empty()) open_.emplace_back();
  OpenRow* row = &open_.back();
  if (!opt_.split && row->Free(opt_.seq_length) < n) ATTUNE_RETURN_IF_ERROR(Close(row));
  bool split = false;
  while (n > 0) {
    size_t take = std::min(n, row->Free(opt_.seq_length));
    Append(&row->row, ids, mask, take);
    ids += take;
    mask += take;
    n -= take;
    if (row->Free(opt_.seq_length) == 0) ATTUNE_RETURN_IF_ERROR(Close(row));
    split = split || n > 0;
  }
  if (split) ++counts_.split_documents;
  return Status::Ok();
}

Status Packer::AddBestFit(const int32_t* ids, const uint8_t* mask, size_t n) {
  if (n > opt_.seq_length) {
    // Only reached with splitting: full rows first, then the rest is fitted like any document.
    ++counts_.split_documents;
    while (n > opt_.seq_length) {
      OpenRow full;
      Append(&full.row, ids, mask, opt_.seq_length);
      ATTUNE_RETURN_IF_ERROR(Close(&full));
      ids += opt_.seq_length;
      mask += opt_.seq_length;
      n -= opt_.seq_length;
    }
  }
  OpenRow* best = nullptr;
  for (OpenRow& r : open_) {
    size_t free = r.Free(opt_.seq_length);
    if (free >= n && (!best || free < best->Free(opt_.seq_length))) best = &r;
  }
  if (!best) {
    if (open_.size() >= std::max<size_t>(1, opt_.open_rows)) {
      auto fullest = std::min_element(open_.begin(), open_.end(), [&](const OpenRow& a, const OpenRow& b) {
        return a.Free(opt_.seq_length) < b.Free(opt_.seq_length);
      });
      ATTUNE_RETURN_IF_ERROR(Close(&*fullest));
      best = &*fullest;
    } else {
      open_.emplace_back();
      best = &open_.back();
    }
  }
  Append(&best->row, ids, mask, n);
  if (best->Free(opt_.seq_length) == 0) {
    ATTUNE_RETURN_IF_ERROR(Close(best));
    open_.erase(open_.begin() + (best - open_.data()));
  }
  return Status::Ok();
}

Status Packer::Finish() {
  for (OpenRow& r : open_) {
    if (!r.row.ids.empty()) ATTUNE_RETURN_IF_ERROR(Close(&r));
  }
  open_.clear();
  if (counts_.rows == 0) counts_.min_loss_per_row = 0;
  return Status::Ok();
}

}  // namespace attune::data
