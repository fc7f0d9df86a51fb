// Copyright attune authors.
//
// Status and Result<T>: how every fallible call in attune reports an error.
//
// Errors that a user can cause or that the world can cause (bad YAML, a missing plugin, a failed
// job, a corrupt log) are values, never exceptions. No exception crosses a plugin boundary: a
// plugin returns a Status or a Result.
//
// A Status message says where, what was expected, what was found and what to do, e.g.
//   "workflows/tune.yaml:14:9: steps[2].uses: unknown step 'benchmrk' (did you mean 'benchmark'?)"
//
// Thread-safety: Status and Result are values; distinct objects may be used from distinct threads.
#ifndef ATTUNE_STATUS_H_
#define ATTUNE_STATUS_H_

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace attune {

// What kind of error. Callers branch on the code; people read the message.
enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // the input is wrong: bad flag, bad YAML, unknown key
  kNotFound,            // a named thing (file, plugin, job, lever) does not exist
  kAlreadyExists,       // e.g. a duplicate plugin name
  kFailedPrecondition,  // the state does not allow it (campaign locked, budget exhausted)
  kCorruption,          // stored data is damaged (hash chain, missing events)
  kIoError,             // the operating system refused (disk full, read-only, permission)
  kUnavailable,         // a service is not reachable right now; retrying may help
  kDeadlineExceeded,    // a timeout
  kAborted,             // stopped on request (signal, cancel)
  kInternal,            // a bug in attune or a plugin; the message says where
  kUnimplemented,       // the plugin does not offer this operation
};

// Returns a stable lowercase name such as "invalid_argument" (used in --json output and events).
const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  // An OK status.
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status FailedPrecondition(std::string m) {
    return {StatusCode::kFailedPrecondition, std::move(m)};
  }
  static Status Corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }
  static Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status DeadlineExceeded(std::string m) {
    return {StatusCode::kDeadlineExceeded, std::move(m)};
  }
  static Status Aborted(std::string m) { return {StatusCode::kAborted, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
  static Status Unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "invalid_argument: <message>", or "ok".
  std::string ToString() const;

  // Returns a copy whose message is "<context>: <message>"; OK stays OK.
  Status WithContext(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Either a T or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : data_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(data_).ok());  // because an OK Result must carry a value
  }

  bool ok() const { return std::holds_alternative<T>(data_); }
  // OK when a value is held.
  Status status() const { return ok() ? Status() : std::get<Status>(data_); }

  // Preconditions: ok().
  const T& value() const& { return std::get<T>(data_); }
  T& value() & { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace attune

// Returns early from the enclosing function when `expr` (a Status) is not OK.
#define ATTUNE_RETURN_IF_ERROR(expr)          \
  do {                                        \
    ::attune::Status attune_status_ = (expr); \
    if (!attune_status_.ok()) return attune_status_; \
  } while (0)

#define ATTUNE_CONCAT_INNER_(a, b) a##b
#define ATTUNE_CONCAT_(a, b) ATTUNE_CONCAT_INNER_(a, b)
// `ATTUNE_ASSIGN_OR_RETURN(auto x, MakeX());` declares x from a Result or returns its Status.
#define ATTUNE_ASSIGN_OR_RETURN(lhs, expr)                                  \
  auto ATTUNE_CONCAT_(attune_result_, __LINE__) = (expr);                   \
  if (!ATTUNE_CONCAT_(attune_result_, __LINE__).ok())                       \
    return ATTUNE_CONCAT_(attune_result_, __LINE__).status();               \
  lhs = std::move(ATTUNE_CONCAT_(attune_result_, __LINE__)).value()

#endif  // ATTUNE_STATUS_H_
