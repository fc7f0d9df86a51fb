// Copyright attune authors.
//
// Writes Megatron-LM's indexed dataset (megatron/core/datasets/indexed_dataset.py, version 1):
//   PREFIX.bin  the sequences' values back to back, little-endian, in the dataset's dtype;
//   PREFIX.idx  b"MMIDIDX\x00\x00", u64 version 1, u8 dtype code, u64 sequence count S,
//               u64 document-index count D, i32 sequence_lengths[S], i64 sequence_pointers[S]
//               (byte offsets into .bin), i64 document_indices[D] (starts at 0; each later entry
//               is the number of sequences up to the end of a document).
// Memory is bounded: lengths and document ends stream to temporary files beside the output and
// the index is assembled at Finish. Both files appear under their names only when complete
// (written as *.tmp, synced, renamed).
#ifndef ATTUNE_ENGINE_DATA_INDEXED_DATASET_H_
#define ATTUNE_ENGINE_DATA_INDEXED_DATASET_H_

#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attune/status.h"

namespace attune::data {

// Megatron's DType codes.
enum class IndexDType : uint8_t {
  kUint8 = 1, kInt8 = 2, kInt16 = 3, kInt32 = 4, kInt64 = 5, kFloat64 = 6, kFloat32 = 7,
  kUint16 = 8,
};
std::string_view IndexDTypeName(IndexDType t);
size_t IndexDTypeSize(IndexDType t);
// Megatron's DType.optimal_dtype(vocab_size): uint16 below 65500 tokens, else int32.
IndexDType TokenDTypeFor(int64_t vocab_size);

class IndexedDatasetWriter {
 public:
  // Integer dtypes only (uint8, int8, int16, uint16, int32, int64).
  static Result<std::unique_ptr<IndexedDatasetWriter>> Create(const std::string& prefix,
                                                              IndexDType dtype);
  ~IndexedDatasetWriter();

  // Appends one sequence. Precondition: each value fits the dtype (the caller checked).
  Status AddSequence(const int32_t* values, size_t count);
  // Ends the current document (the sequences added since the last call).
  Status EndDocument();
  // Writes PREFIX.idx and moves both files into place.
  Status Finish();

  uint64_t Sequences() const { return sequences_; }

 private:
  IndexedDatasetWriter(std::string prefix, IndexDType dtype) : prefix_(std::move(prefix)), dtype_(dtype) {}
  Status WriteIndex();

  std::string prefix_;
  IndexDType dtype_;
  std::ofstream bin_, lengths_, documents_;
  std::vector<char> scratch_;
  uint64_t sequences_ = 0, documents_count_ = 1;
  bool finished_ = false;
};

// Writes `text` to `path` through path.tmp, fsync and rename.
Status WriteFileAtomically(const std::string& path, const std::string& text);

}  // namespace attune::data

#endif  // ATTUNE_ENGINE_DATA_INDEXED_DATASET_H_
