// Copyright attune authors.
//
// DirLock: the exclusive lock that makes one process (and one EventLog) the only writer of a
// campaign directory. It is an flock(2) on the directory itself, which no user can delete while
// the directory exists (deleting the lock files under a live run used to let a second writer in
// and destroy the log), and an flock on DIR/LOCK-attune, which holds the owner's pid as text so
// that a refused opener can say who holds it (when that file is gone, the holder's pid is read
// from /proc/locks). The kernel releases the lock when the process
// dies, so a crash never leaves a stale lock. flock locks belong to the open file description,
// so a second DirLock in the same process is refused too.
//
// Not thread-safe.
#ifndef ATTUNE_ENGINE_LOG_DIR_LOCK_H_
#define ATTUNE_ENGINE_LOG_DIR_LOCK_H_

#include <memory>
#include <string>

#include "attune/status.h"

namespace attune::log {

inline constexpr char kLockFile[] = "LOCK-attune";

class DirLock {
 public:
  // kFailedPrecondition "campaign directory X is in use by attune pid N; ..." when held.
  static Result<std::unique_ptr<DirLock>> Acquire(const std::string& dir);
  ~DirLock();  // releases the lock

  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  DirLock(int dir_fd, int fd) : dir_fd_(dir_fd), fd_(fd) {}
  int dir_fd_;
  int fd_;
};

}  // namespace attune::log

#endif  // ATTUNE_ENGINE_LOG_DIR_LOCK_H_
