#include "log/watermark.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <vector>

#include "attune/hash.h"

namespace attune::log {
namespace {

constexpr size_t kSlotSize = 512;

std::string Errno(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

std::string SlotText(const Watermark& mark) {
  std::string text = "attune-acked 1 " + std::to_string(mark.seq) + " " +
                     (mark.hash.empty() ? std::string("-") : mark.hash);
  return text + " " + Sha256Hex(text).substr(0, 16) + "\n";
}

std::optional<Watermark> ParseSlot(const char* slot) {
  std::string text(slot, strnlen(slot, kSlotSize));
  size_t nl = text.find('\n');
  if (nl == std::string::npos) return std::nullopt;
  std::istringstream in(text.substr(0, nl));
  std::string magic, version, seq, hash, check;
  if (!(in >> magic >> version >> seq >> hash >> check) || magic != "attune-acked" ||
      version != "1") {
    return std::nullopt;
  }
  std::string covered = magic + " " + version + " " + seq + " " + hash;
  if (Sha256Hex(covered).substr(0, 16) != check) return std::nullopt;
  try {
    return Watermark{std::stoull(seq), hash == "-" ? "" : hash};
  } catch (const std::exception&) {
    // Checked text that is not a number cannot come from this writer; treat the slot as invalid.
    return std::nullopt;
  }
}

Status WriteSlot(int fd, const std::string& path, uint64_t slot, const Watermark& mark) {
  std::vector<char> buf(kSlotSize, '\0');
  std::string text = SlotText(mark);
  std::memcpy(buf.data(), text.data(), std::min(text.size(), kSlotSize));
  ssize_t n = pwrite(fd, buf.data(), kSlotSize, static_cast<off_t>(slot * kSlotSize));
  if (n != static_cast<ssize_t>(kSlotSize)) return Status::IoError(Errno("cannot write", path));
  return Status::Ok();
}

Status SyncDir(const std::string& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return Status::IoError(Errno("cannot open directory", dir));
  int rc = fsync(fd);
  close(fd);
  if (rc != 0) return Status::IoError(Errno("cannot fsync directory", dir));
  return Status::Ok();
}

}  // namespace

Result<std::optional<Watermark>> ReadWatermark(const std::string& dir) {
  std::string path = dir + "/" + kWatermarkFile;
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<Watermark>();
    return Status::IoError(Errno("cannot open", path));
  }
  std::vector<char> buf(2 * kSlotSize + 1, '\0');
  ssize_t n = pread(fd, buf.data(), 2 * kSlotSize, 0);
  close(fd);
  if (n < 0) return Status::IoError(Errno("cannot read", path));
  std::optional<Watermark> best;
  for (size_t slot = 0; slot < 2; ++slot) {
    if (static_cast<size_t>(n) < (slot + 1) * kSlotSize) break;
    auto mark = ParseSlot(buf.data() + slot * kSlotSize);
    if (mark && (!best || mark->seq > best->seq)) best = mark;
  }
  if (!best) {
    return Status::Corruption(path + " (the acknowledged-event watermark) is damaged: no valid "
                              "slot. Restore the campaign directory from a backup");
  }
  return best;
}

WatermarkWriter::WatermarkWriter(int fd, std::string path, uint64_t writes)
    : fd_(fd), path_(std::move(path)), writes_(writes) {}

WatermarkWriter::~WatermarkWriter() {
  if (syncer_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_one();
    syncer_.join();
  }
  if (dirty_) (void)Sync();  // best effort on close; a failure here has no caller to tell
  close(fd_);
}

void WatermarkWriter::StartBackgroundSync() {
  syncer_ = std::thread([this] { BackgroundLoop(); });
}

Status WatermarkWriter::SyncInBackground() {
  std::lock_guard<std::mutex> lock(mu_);
  pending_ = true;
  dirty_ = false;  // the thread owns the sync now; the destructor waits for it
  wake_.notify_one();
  return background_error_;
}

void WatermarkWriter::BackgroundLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    wake_.wait(lock, [this] { return pending_ || stop_; });
    if (!pending_ && stop_) return;
    pending_ = false;
    lock.unlock();
    // pwrite happened in the caller's thread before the wake-up; this makes it durable.
    bool synced = fdatasync(fd_) == 0;
    lock.lock();
    if (!synced && background_error_.ok()) {
      background_error_ = Status::IoError(Errno("cannot fdatasync", path_));
    }
  }
}

Result<std::unique_ptr<WatermarkWriter>> WatermarkWriter::Create(const std::string& dir) {
  std::string path = dir + "/" + kWatermarkFile;
  std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError(Errno("cannot create", tmp));
  Status s = WriteSlot(fd, tmp, 0, Watermark{});
  if (s.ok()) s = WriteSlot(fd, tmp, 1, Watermark{});
  if (s.ok() && fdatasync(fd) != 0) s = Status::IoError(Errno("cannot fdatasync", tmp));
  if (s.ok() && rename(tmp.c_str(), path.c_str()) != 0) {
    s = Status::IoError(Errno("cannot rename to", path));
  }
  if (s.ok()) s = SyncDir(dir);
  if (!s.ok()) {
    close(fd);
    return s;
  }
  return std::unique_ptr<WatermarkWriter>(new WatermarkWriter(fd, path, 0));
}

Result<std::unique_ptr<WatermarkWriter>> WatermarkWriter::OpenExisting(const std::string& dir,
                                                                       const Watermark& current) {
  std::string path = dir + "/" + kWatermarkFile;
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return Status::IoError(Errno("cannot open", path));
  auto writer = std::unique_ptr<WatermarkWriter>(new WatermarkWriter(fd, path, 0));
  // Rewrite both slots with the current value so that the next write may go to either slot
  // without ever leaving the file with only an older valid value.
  ATTUNE_RETURN_IF_ERROR(writer->Update(current, false));
  ATTUNE_RETURN_IF_ERROR(writer->Update(current, true));
  return writer;
}

Status WatermarkWriter::Update(const Watermark& mark, bool sync) {
  ATTUNE_RETURN_IF_ERROR(WriteSlot(fd_, path_, writes_ % 2, mark));
  ++writes_;
  dirty_ = true;
  return sync ? Sync() : Status::Ok();
}

Status WatermarkWriter::Sync() {
  if (!dirty_) return Status::Ok();
  if (fdatasync(fd_) != 0) return Status::IoError(Errno("cannot fdatasync", path_));
  dirty_ = false;
  return Status::Ok();
}

}  // namespace attune::log
