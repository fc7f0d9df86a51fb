// Copyright attune authors.
//
// Streaming reader of chrome-trace JSON as torch.profiler writes it: Kineto's
// `{"schemaVersion":…, "distributedInfo":…, "traceEvents":[…]}` (tensorboard_trace_handler and
// export_chrome_trace) and the legacy profiler's bare `[event, …]`, plain or gzip-compressed
// (detected from the bytes, not the name). Events are handed to a sink one at a time and then
// forgotten: memory does not grow with the file. Only the fields the analyser reads are kept;
// nested values it does not read (call stacks, input shapes) are skipped unparsed into values.
#ifndef ATTUNE_ENGINE_PROFILE_TRACE_READER_H_
#define ATTUNE_ENGINE_PROFILE_TRACE_READER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "attune/status.h"

namespace attune::profile {

// One trace event: the fields the analyser reads. Times are in integer nanoseconds (the trace's
// microseconds × 1000, rounded); has_ts/has_dur say whether the trace gave them.
struct TraceEvent {
  std::string ph;    // "X" (complete), "i", "M", "s", "f", ...
  std::string name;
  std::string cat;   // "kernel", "cuda_runtime", "cpu_op", ...; empty in legacy traces
  std::string pid;   // as text: numbers are printed in decimal ("0", "CPU functions")
  std::string tid;
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
  bool has_ts = false;
  bool has_dur = false;
  // From "args".
  std::optional<int64_t> correlation;
  std::optional<int64_t> external_id;
  std::optional<int64_t> stream;
  std::string collective;  // "Collective name": "allreduce", "send", ...
  std::string dtype;       // "Float", "BFloat16", ...
  std::string group_name;  // "Process Group Name": "0", "1", ...
  std::string group_desc;  // "Process Group Description": "default_pg", ...
  std::optional<int64_t> in_nelems;
  std::optional<int64_t> out_nelems;
  std::optional<int64_t> group_size;
  std::optional<double> bytes;  // memcpy/memset size

  void Clear();
};

// What a trace says about itself, besides its events.
struct TraceHeader {
  nlohmann::json distributed_info;   // the "distributedInfo" object; null when absent
  nlohmann::json device_properties;  // "deviceProperties"; null when absent
  bool legacy_array = false;         // the file is a bare array of events
  int64_t events = 0;                // events handed to the sink
  int64_t skipped_events = 0;        // elements of traceEvents that were not objects
};

using EventSink = std::function<void(const TraceEvent&)>;

// Reads the trace at `path`, calling `sink` for every event in file order. Errors, each naming
// the file: unreadable file, empty file, damaged gzip stream, invalid or truncated JSON (with the
// line and column in the decompressed text), a JSON document that is not a trace. `sink` must
// not throw.
Result<TraceHeader> ReadTrace(const std::string& path, const EventSink& sink);

}  // namespace attune::profile

#endif  // ATTUNE_ENGINE_PROFILE_TRACE_READER_H_
