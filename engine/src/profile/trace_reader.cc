#include "profile/trace_reader.h"

#include <zlib.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <istream>
#include <streambuf>
#include <string_view>
#include <vector>

namespace attune::profile {

void TraceEvent::Clear() {
  ph.clear();
  name.clear();
  cat.clear();
  pid.clear();
  tid.clear();
  ts_ns = dur_ns = 0;
  has_ts = has_dur = false;
  correlation.reset();
  external_id.reset();
  stream.reset();
  collective.clear();
  dtype.clear();
  group_name.clear();
  group_desc.clear();
  in_nelems.reset();
  out_nelems.reset();
  group_size.reset();
  bytes.reset();
}

namespace {

using json = nlohmann::json;

// A streambuf over zlib's gzread, which reads gzip and passes plain files through unchanged.
class GzStreamBuf : public std::streambuf {
 public:
  explicit GzStreamBuf(gzFile file) : file_(file), buffer_(1 << 18) {}

  // Empty unless zlib reported a damaged or truncated stream.
  const std::string& error() const { return error_; }
  int64_t bytes_read() const { return bytes_read_; }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    int n = gzread(file_, buffer_.data(), static_cast<unsigned>(buffer_.size()));
    if (n <= 0) {
      int code = Z_OK;
      const char* message = gzerror(file_, &code);
      if (n < 0 || (code != Z_OK && code != Z_STREAM_END)) error_ = message ? message : "error";
      return traits_type::eof();
    }
    bytes_read_ += n;
    setg(buffer_.data(), buffer_.data(), buffer_.data() + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  gzFile file_;
  std::vector<char> buffer_;
  std::string error_;
  int64_t bytes_read_ = 0;
};

// Microseconds (a trace's unit) to integer nanoseconds; nullopt when not representable.
std::optional<int64_t> MicrosToNanos(double us) {
  double ns = us * 1000.0;
  if (!std::isfinite(ns) || std::fabs(ns) > 9.0e18) return std::nullopt;
  return std::llround(ns);
}

std::optional<int64_t> MicrosToNanos(int64_t us) {
  constexpr int64_t kLimit = 9'000'000'000'000'000;  // µs whose ns still fit in int64
  if (us > kLimit || us < -kLimit) return std::nullopt;
  return us * 1000;
}

// A decimal literal of microseconds ("4458677009853.422") to nanoseconds, exactly: going through
// a double would round (at 4e15 ns a double's step is 0.5). Digits beyond the nanosecond are
// rounded half away from zero. Nullopt for exponent forms and out-of-range values (the caller
// falls back to the double).
std::optional<int64_t> DecimalMicrosToNanos(std::string_view text) {
  bool negative = !text.empty() && text[0] == '-';
  if (negative) text.remove_prefix(1);
  int64_t value = 0;
  size_t i = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    if (value > 9'000'000'000'000'000 / 10) return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  if (i == 0 || value > 9'000'000'000'000'000) return std::nullopt;
  int64_t fraction = 0;
  int digits = 0;
  bool round_up = false;
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, ++digits) {
      if (digits < 3) fraction = fraction * 10 + (text[i] - '0');
      if (digits == 3) round_up = text[i] >= '5';
    }
  }
  if (i != text.size()) return std::nullopt;  // an exponent
  for (int d = std::min(digits, 3); d < 3; ++d) fraction *= 10;
  int64_t ns = value * 1000 + fraction + (round_up ? 1 : 0);
  return negative ? -ns : ns;
}

enum class Frame { kRootObject, kEvents, kEvent, kArgs, kCapture, kSkip };
enum class RootKey { kOther, kTraceEvents, kDistributedInfo, kDeviceProperties };
enum class EventKey { kOther, kPh, kName, kCat, kPid, kTid, kTs, kDur, kArgs };
enum class ArgKey {
  kOther, kCorrelation, kExternalId, kStream, kCollective, kDtype, kGroupName, kGroupDesc,
  kInNelems, kOutNelems, kGroupSize, kBytes,
};

EventKey EventKeyOf(std::string_view k) {
  if (k == "ph") return EventKey::kPh;
  if (k == "name") return EventKey::kName;
  if (k == "cat") return EventKey::kCat;
  if (k == "pid") return EventKey::kPid;
  if (k == "tid") return EventKey::kTid;
  if (k == "ts") return EventKey::kTs;
  if (k == "dur") return EventKey::kDur;
  if (k == "args") return EventKey::kArgs;
  return EventKey::kOther;
}

ArgKey ArgKeyOf(std::string_view k) {
  if (k == "correlation") return ArgKey::kCorrelation;
  if (k == "External id") return ArgKey::kExternalId;
  if (k == "stream") return ArgKey::kStream;
  if (k == "Collective name") return ArgKey::kCollective;
  if (k == "dtype") return ArgKey::kDtype;
  if (k == "Process Group Name") return ArgKey::kGroupName;
  if (k == "Process Group Description") return ArgKey::kGroupDesc;
  if (k == "In msg nelems") return ArgKey::kInNelems;
  if (k == "Out msg nelems") return ArgKey::kOutNelems;
  if (k == "Group size") return ArgKey::kGroupSize;
  if (k == "bytes") return ArgKey::kBytes;
  return ArgKey::kOther;
}

// The SAX consumer (nlohmann's json_sax interface): a stack of frames says where a value lands.
// Events are filled in place and handed to the sink when their object closes.
class TraceSax {
 public:
  TraceSax(const EventSink& sink, TraceHeader* header) : sink_(sink), header_(header) {}

  bool null() { return Scalar(nullptr); }
  bool boolean(bool v) { return Scalar(v); }
  bool number_integer(json::number_integer_t v) { return Number(v, static_cast<double>(v)); }
  bool number_unsigned(json::number_unsigned_t v) {
    return v <= static_cast<uint64_t>(INT64_MAX) ? Number(static_cast<int64_t>(v), static_cast<double>(v))
                                                 : Float(static_cast<double>(v), {});
  }
  bool number_float(json::number_float_t v, const json::string_t& text) { return Float(v, text); }
  bool string(json::string_t& v);
  bool binary(json::binary_t&) { return Scalar(nullptr); }
  bool start_object(std::size_t);
  bool key(json::string_t& k);
  bool end_object() { return End(); }
  bool start_array(std::size_t);
  bool end_array() { return End(); }
  bool parse_error(std::size_t, const std::string&, const json::exception& ex) {
    syntax_error_ = ex.what();
    return false;
  }

  const std::string& syntax_error() const { return syntax_error_; }
  const std::string& shape_error() const { return shape_error_; }
  bool saw_events() const { return saw_events_; }

 private:
  Frame Top() const { return stack_.back(); }
  bool Number(int64_t i, double d);
  bool Float(double d, std::string_view text = {});
  bool Scalar(json v);
  bool End();
  bool OpenCapture(json* target, json initial);
  void CaptureInsert(json v);
  void SetTime(std::optional<int64_t> ns);
  void SetArgInt(std::optional<int64_t> v);

  const EventSink& sink_;
  TraceHeader* header_;
  std::vector<Frame> stack_;
  RootKey root_key_ = RootKey::kOther;
  EventKey event_key_ = EventKey::kOther;
  ArgKey arg_key_ = ArgKey::kOther;
  TraceEvent event_;
  std::vector<json*> capture_;  // open containers of the value being captured
  std::string capture_key_;
  std::string syntax_error_;
  std::string shape_error_;
  bool saw_events_ = false;
};

bool TraceSax::key(json::string_t& k) {
  if (stack_.empty()) return true;
  switch (Top()) {
    case Frame::kRootObject:
      root_key_ = k == "traceEvents"       ? RootKey::kTraceEvents
                  : k == "distributedInfo"  ? RootKey::kDistributedInfo
                  : k == "deviceProperties" ? RootKey::kDeviceProperties
                                            : RootKey::kOther;
      break;
    case Frame::kEvent:
      event_key_ = EventKeyOf(k);
      break;
    case Frame::kArgs:
      arg_key_ = ArgKeyOf(k);
      break;
    case Frame::kCapture:
      capture_key_ = std::move(k);
      break;
    default:
      break;
  }
  return true;
}

bool TraceSax::start_object(std::size_t) {
  if (stack_.empty()) {
    stack_.push_back(Frame::kRootObject);
    return true;
  }
  switch (Top()) {
    case Frame::kRootObject:
      if (root_key_ == RootKey::kDistributedInfo) {
        return OpenCapture(&header_->distributed_info, json::object());
      }
      if (root_key_ == RootKey::kDeviceProperties) {
        return OpenCapture(&header_->device_properties, json::object());
      }
      if (root_key_ == RootKey::kTraceEvents) {
        shape_error_ = "\"traceEvents\" is an object, expected an array of events";
        return false;
      }
      break;
    case Frame::kEvents:
      event_.Clear();
      stack_.push_back(Frame::kEvent);
      return true;
    case Frame::kEvent:
      stack_.push_back(event_key_ == EventKey::kArgs ? Frame::kArgs : Frame::kSkip);
      return true;
    case Frame::kCapture:
      CaptureInsert(json::object());
      stack_.push_back(Frame::kCapture);
      return true;
    default:
      break;
  }
  stack_.push_back(Frame::kSkip);
  return true;
}

bool TraceSax::start_array(std::size_t) {
  if (stack_.empty()) {
    header_->legacy_array = true;
    saw_events_ = true;
    stack_.push_back(Frame::kEvents);
    return true;
  }
  switch (Top()) {
    case Frame::kRootObject:
      if (root_key_ == RootKey::kTraceEvents) {
        saw_events_ = true;
        stack_.push_back(Frame::kEvents);
        return true;
      }
      if (root_key_ == RootKey::kDeviceProperties) {
        return OpenCapture(&header_->device_properties, json::array());
      }
      if (root_key_ == RootKey::kDistributedInfo) {
        return OpenCapture(&header_->distributed_info, json::array());
      }
      break;
    case Frame::kEvents:
      ++header_->skipped_events;
      break;
    case Frame::kCapture:
      CaptureInsert(json::array());
      stack_.push_back(Frame::kCapture);
      return true;
    default:
      break;
  }
  stack_.push_back(Frame::kSkip);
  return true;
}

bool TraceSax::OpenCapture(json* target, json initial) {
  *target = std::move(initial);
  capture_.assign(1, target);
  stack_.push_back(Frame::kCapture);
  return true;
}

// Adds a value to the innermost open captured container; a container becomes the new innermost.
void TraceSax::CaptureInsert(json v) {
  json* top = capture_.back();
  bool container = v.is_structured();
  json* slot = nullptr;
  if (top->is_object()) {
    slot = &((*top)[capture_key_] = std::move(v));
  } else {
    top->push_back(std::move(v));
    slot = &top->back();
  }
  if (container) capture_.push_back(slot);
}

bool TraceSax::End() {
  if (stack_.empty()) return true;
  Frame closed = Top();
  stack_.pop_back();
  if (closed == Frame::kCapture) {
    capture_.pop_back();
  } else if (closed == Frame::kEvent) {
    ++header_->events;
    sink_(event_);
  }
  return true;
}

bool TraceSax::Scalar(json v) {
  if (stack_.empty()) {
    shape_error_ = "the document is a single " + std::string(v.type_name()) +
                   ", expected a trace object or an array of events";
    return false;
  }
  if (Top() == Frame::kCapture) {
    CaptureInsert(std::move(v));
  } else if (Top() == Frame::kEvents) {
    ++header_->skipped_events;
  } else if (Top() == Frame::kRootObject && root_key_ == RootKey::kTraceEvents) {
    shape_error_ = "\"traceEvents\" is a " + std::string(v.type_name()) + ", expected an array";
    return false;
  }
  return true;
}

bool TraceSax::string(json::string_t& v) {
  if (stack_.empty() || (Top() != Frame::kEvent && Top() != Frame::kArgs)) return Scalar(v);
  if (Top() == Frame::kEvent) {
    switch (event_key_) {
      case EventKey::kPh: event_.ph = std::move(v); break;
      case EventKey::kName: event_.name = std::move(v); break;
      case EventKey::kCat: event_.cat = std::move(v); break;
      case EventKey::kPid: event_.pid = std::move(v); break;
      case EventKey::kTid: event_.tid = std::move(v); break;
      default: break;
    }
    return true;
  }
  switch (arg_key_) {
    case ArgKey::kCollective: event_.collective = std::move(v); break;
    case ArgKey::kDtype: event_.dtype = std::move(v); break;
    case ArgKey::kGroupName: event_.group_name = std::move(v); break;
    case ArgKey::kGroupDesc: event_.group_desc = std::move(v); break;
    default: break;
  }
  return true;
}

void TraceSax::SetTime(std::optional<int64_t> ns) {
  if (!ns) return;
  if (event_key_ == EventKey::kTs) {
    event_.ts_ns = *ns;
    event_.has_ts = true;
  } else {
    event_.dur_ns = *ns;
    event_.has_dur = true;
  }
}

void TraceSax::SetArgInt(std::optional<int64_t> v) {
  switch (arg_key_) {
    case ArgKey::kCorrelation: event_.correlation = v; break;
    case ArgKey::kExternalId: event_.external_id = v; break;
    case ArgKey::kStream: event_.stream = v; break;
    case ArgKey::kInNelems: event_.in_nelems = v; break;
    case ArgKey::kOutNelems: event_.out_nelems = v; break;
    case ArgKey::kGroupSize: event_.group_size = v; break;
    default: break;
  }
}

bool TraceSax::Number(int64_t i, double d) {
  if (stack_.empty() || (Top() != Frame::kEvent && Top() != Frame::kArgs)) return Scalar(i);
  if (Top() == Frame::kEvent) {
    if (event_key_ == EventKey::kTs || event_key_ == EventKey::kDur) SetTime(MicrosToNanos(i));
    if (event_key_ == EventKey::kPid) event_.pid = std::to_string(i);
    if (event_key_ == EventKey::kTid) event_.tid = std::to_string(i);
    return true;
  }
  if (arg_key_ == ArgKey::kBytes) event_.bytes = d;
  SetArgInt(i);
  return true;
}

bool TraceSax::Float(double d, std::string_view text) {
  if (stack_.empty() || (Top() != Frame::kEvent && Top() != Frame::kArgs)) return Scalar(d);
  if (Top() == Frame::kEvent) {
    if (event_key_ == EventKey::kTs || event_key_ == EventKey::kDur) {
      std::optional<int64_t> exact = DecimalMicrosToNanos(text);
      SetTime(exact ? exact : MicrosToNanos(d));
    }
    return true;
  }
  if (arg_key_ == ArgKey::kBytes) event_.bytes = d;
  if (std::isfinite(d) && std::fabs(d) < 9.0e18) SetArgInt(std::llround(d));
  return true;
}

// "[json.exception.parse_error.101] parse error at line 3, column 7: ..." → "line 3, column 7: ...".
std::string CleanSyntaxError(const std::string& what) {
  std::string s = what;
  size_t bracket = s.find("] ");
  if (s.rfind("[json.exception", 0) == 0 && bracket != std::string::npos) s = s.substr(bracket + 2);
  if (s.rfind("parse error at ", 0) == 0) s = s.substr(15);
  return s;
}

Status SyntaxStatus(const std::string& path, const std::string& what) {
  std::string detail = CleanSyntaxError(what);
  bool truncated = detail.find("unexpected end of input") != std::string::npos;
  std::string head = truncated ? "the JSON ends early (the trace is truncated)"
                               : "the JSON is invalid";
  return Status::InvalidArgument(
      path + ": " + head + " at " + detail +
      " (line and column of the decompressed text); re-export the trace: torch.profiler writes "
      "the whole file when the profiler stops, so a job killed while writing leaves a cut file");
}

}  // namespace

Result<TraceHeader> ReadTrace(const std::string& path, const EventSink& sink) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) {
    return Status::NotFound(path + ": cannot open the trace: " + std::strerror(errno));
  }
  gzbuffer(file, 1 << 18);
  GzStreamBuf buf(file);
  std::istream in(&buf);
  TraceHeader header;
  TraceSax sax(sink, &header);
  bool ok = false;
  try {
    ok = json::sax_parse(in, &sax, json::input_format_t::json, /*strict=*/true);
  } catch (const std::exception& e) {
    gzclose(file);
    return Status::Internal(path + ": reading the trace failed: " + e.what());
  }
  gzclose(file);
  if (!buf.error().empty()) {
    return Status::InvalidArgument(path + ": the gzip stream is damaged or truncated after " +
                                   std::to_string(buf.bytes_read()) +
                                   " decompressed bytes (zlib: " + buf.error() +
                                   "); copy or export the trace again");
  }
  if (buf.bytes_read() == 0) {
    return Status::InvalidArgument(path + ": the file is empty; expected a chrome-trace JSON "
                                   "written by torch.profiler");
  }
  if (!sax.shape_error().empty()) {
    return Status::InvalidArgument(path + ": not a chrome trace: " + sax.shape_error());
  }
  if (!ok) return SyntaxStatus(path, sax.syntax_error());
  if (!sax.saw_events()) {
    return Status::InvalidArgument(
        path + ": a JSON object without \"traceEvents\": not a chrome trace (torch.profiler "
               "writes {\"traceEvents\": [...]}, the legacy profiler a bare array of events)");
  }
  return header;
}

}  // namespace attune::profile
