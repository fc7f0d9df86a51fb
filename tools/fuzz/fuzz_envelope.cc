// Fuzzes the event-envelope decoder: any bytes read back from RocksDB must give a Status, never a
// crash, and a value that passes the hash check must decode to the seq the check read.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "log/envelope.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view value(reinterpret_cast<const char*>(data), size);
  auto links = attune::log::CheckEnvelope(value);
  auto record = attune::log::DecodeEnvelope(value);
  if (links.ok() && record.ok() && record->seq != links->seq) abort();  // the two readers disagree
  attune::log::SeqFromKey(value, "fuzz");
  return 0;
}
