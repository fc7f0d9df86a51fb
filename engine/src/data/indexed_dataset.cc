// Copyright attune authors.
#include "data/indexed_dataset.h"

#include "attune/support/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace attune::data {
namespace {

constexpr char kIndexHeader[9] = {'M', 'M', 'I', 'D', 'I', 'D', 'X', 0, 0};

// Little-endian bytes of an integer (the format is little-endian; so is every host we build on,
// but the bytes are spelled out so that the file does not depend on it).
template <typename T>
void PutLe(std::string* out, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) {
    out->push_back(static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xFF));
  }
}

Status SyncFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return Status::IoError(path + ": cannot open to sync: " + std::strerror(errno));
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return Status::IoError(path + ": fsync failed: " + std::strerror(errno));
  return Status::Ok();
}

Status Rename(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0) {
    return Status::IoError("cannot rename " + from + " to " + to + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace

std::string_view IndexDTypeName(IndexDType t) {
  switch (t) {
    case IndexDType::kUint8: return "uint8";
    case IndexDType::kInt8: return "int8";
    case IndexDType::kInt16: return "int16";
    case IndexDType::kInt32: return "int32";
    case IndexDType::kInt64: return "int64";
    case IndexDType::kFloat64: return "float64";
    case IndexDType::kFloat32: return "float32";
    case IndexDType::kUint16: return "uint16";
  }
  return "?";
}

size_t IndexDTypeSize(IndexDType t) {
  switch (t) {
    case IndexDType::kUint8: case IndexDType::kInt8: return 1;
    case IndexDType::kInt16: case IndexDType::kUint16: return 2;
    case IndexDType::kInt32: case IndexDType::kFloat32: return 4;
    case IndexDType::kInt64: case IndexDType::kFloat64: return 8;
  }
  return 0;
}

IndexDType TokenDTypeFor(int64_t vocab_size) {
  return vocab_size < 65500 ? IndexDType::kUint16 : IndexDType::kInt32;
}

Status WriteFileAtomically(const std::string& path, const std::string& text) {
  return support::WriteFileAtomically(path, text);
}

Result<std::unique_ptr<IndexedDatasetWriter>> IndexedDatasetWriter::Create(const std::string& prefix,
                                                                           IndexDType dtype) {
  if (dtype == IndexDType::kFloat32 || dtype == IndexDType::kFloat64) {
    return Status::InvalidArgument("indexed dataset: only integer dtypes are written");
  }
  std::unique_ptr<IndexedDatasetWriter> w(new IndexedDatasetWriter(prefix, dtype));
  w->bin_.open(prefix + ".bin.tmp", std::ios::binary | std::ios::trunc);
  w->lengths_.open(prefix + ".idx.lengths.tmp", std::ios::binary | std::ios::trunc);
  w->documents_.open(prefix + ".idx.documents.tmp", std::ios::binary | std::ios::trunc);
  if (!w->bin_ || !w->lengths_ || !w->documents_) {
    return Status::IoError(prefix + ".bin: cannot create the output files: " + std::strerror(errno) +
                           " (does the folder exist and is it writable?)");
  }
  return w;
}

IndexedDatasetWriter::~IndexedDatasetWriter() {
  if (finished_) return;
  // An unfinished dataset leaves nothing behind under the final names; remove the scratch files.
  std::error_code ec;
  for (const char* suffix : {".bin.tmp", ".idx.lengths.tmp", ".idx.documents.tmp", ".idx.tmp"}) {
    std::filesystem::remove(prefix_ + suffix, ec);
  }
}

Status IndexedDatasetWriter::AddSequence(const int32_t* values, size_t count) {
  size_t size = IndexDTypeSize(dtype_);
  scratch_.resize(count * size);
  for (size_t i = 0; i < count; ++i) {
    uint64_t v = static_cast<uint64_t>(static_cast<int64_t>(values[i]));
    for (size_t b = 0; b < size; ++b) scratch_[i * size + b] = static_cast<char>((v >> (8 * b)) & 0xFF);
  }
  bin_.write(scratch_.data(), static_cast<std::streamsize>(scratch_.size()));
  std::string len;
  PutLe<int32_t>(&len, static_cast<int32_t>(count));
  lengths_.write(len.data(), 4);
  ++sequences_;
  if (!bin_ || !lengths_) return Status::IoError(prefix_ + ".bin: write failed: " + std::strerror(errno));
  return Status::Ok();
}

Status IndexedDatasetWriter::EndDocument() {
  std::string end;
  PutLe<int64_t>(&end, static_cast<int64_t>(sequences_));
  documents_.write(end.data(), 8);
  ++documents_count_;
  if (!documents_) return Status::IoError(prefix_ + ".idx: write failed: " + std::strerror(errno));
  return Status::Ok();
}

Status IndexedDatasetWriter::WriteIndex() {
  std::ofstream idx(prefix_ + ".idx.tmp", std::ios::binary | std::ios::trunc);
  std::string head(kIndexHeader, sizeof(kIndexHeader));
  PutLe<uint64_t>(&head, 1);
  head.push_back(static_cast<char>(dtype_));
  PutLe<uint64_t>(&head, sequences_);
  PutLe<uint64_t>(&head, documents_count_);
  idx.write(head.data(), static_cast<std::streamsize>(head.size()));
  // sequence_lengths, copied; then sequence_pointers, computed from them; then document_indices.
  std::vector<char> buf(1 << 20);
  auto copy = [&](const std::string& path, auto&& each_block) {
    std::ifstream in(path, std::ios::binary);
    while (in) {
      in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
      if (in.gcount() > 0) each_block(buf.data(), static_cast<size_t>(in.gcount()));
    }
  };
  copy(prefix_ + ".idx.lengths.tmp", [&](const char* p, size_t n) { idx.write(p, static_cast<std::streamsize>(n)); });
  int64_t pointer = 0;
  size_t size = IndexDTypeSize(dtype_);
  std::string pointers;
  copy(prefix_ + ".idx.lengths.tmp", [&](const char* p, size_t n) {
    pointers.clear();
    for (size_t i = 0; i + 4 <= n; i += 4) {
      uint32_t len = 0;
      for (int b = 0; b < 4; ++b) len |= static_cast<uint32_t>(static_cast<unsigned char>(p[i + b])) << (8 * b);
      PutLe<int64_t>(&pointers, pointer);
      pointer += static_cast<int64_t>(len) * static_cast<int64_t>(size);
    }
    idx.write(pointers.data(), static_cast<std::streamsize>(pointers.size()));
  });
  std::string zero;
  PutLe<int64_t>(&zero, 0);
  idx.write(zero.data(), 8);
  copy(prefix_ + ".idx.documents.tmp", [&](const char* p, size_t n) { idx.write(p, static_cast<std::streamsize>(n)); });
  if (!idx.flush()) return Status::IoError(prefix_ + ".idx: write failed: " + std::strerror(errno));
  return Status::Ok();
}

Status IndexedDatasetWriter::Finish() {
  bin_.close();
  lengths_.close();
  documents_.close();
  if (bin_.fail() || lengths_.fail() || documents_.fail()) {
    return Status::IoError(prefix_ + ": closing the output failed: " + std::strerror(errno));
  }
  ATTUNE_RETURN_IF_ERROR(WriteIndex());
  ATTUNE_RETURN_IF_ERROR(SyncFile(prefix_ + ".bin.tmp"));
  ATTUNE_RETURN_IF_ERROR(SyncFile(prefix_ + ".idx.tmp"));
  ATTUNE_RETURN_IF_ERROR(Rename(prefix_ + ".bin.tmp", prefix_ + ".bin"));
  ATTUNE_RETURN_IF_ERROR(Rename(prefix_ + ".idx.tmp", prefix_ + ".idx"));
  std::error_code ec;
  std::filesystem::remove(prefix_ + ".idx.lengths.tmp", ec);
  std::filesystem::remove(prefix_ + ".idx.documents.tmp", ec);
  finished_ = true;
  return Status::Ok();
}

}  // namespace attune::data
