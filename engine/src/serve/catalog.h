// Copyright attune authors.
//
// The campaigns `attune serve` shows: every campaign directory under the given roots, each folded
// once when found and then kept current by tailing its event log (log/event_tail.h), never by
// folding it again.
//
// A campaign is known by its name: its path relative to its root ('/'-separated; the root's own
// folder name when the root is itself a campaign). Names are only ever looked up in this catalog;
// nothing a client sends becomes part of a filesystem path, so no request can reach a file outside
// the roots.
//
// Not thread-safe: the server's one I/O thread owns it.
#ifndef ATTUNE_ENGINE_SERVE_CATALOG_H_
#define ATTUNE_ENGINE_SERVE_CATALOG_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "campaign/campaign_state.h"
#include "log/event_tail.h"

namespace attune::serve {

// One event as the page's feed shows it.
struct EventBrief {
  uint64_t seq = 0;
  std::string type;
  int64_t ts_ms = 0;
  std::string candidate;  // data.candidate when the event names one
  std::string job;        // data.job when it names one
};

struct CampaignEntry {
  std::string name;
  std::string dir;   // absolute, canonical
  std::string root;  // absolute, canonical
  std::unique_ptr<EventTail> tail;
  CampaignState state;
  std::string damage;         // why the log cannot be read ("" when it can): state "damaged"
  bool writer_alive = false;  // an `attune run` holds the campaign's lock
  int64_t last_event_ms = 0;
  std::deque<EventBrief> recent;  // the last kRecentEvents events
  // The campaign page's JSON, rendered once per seq and shared by every client.
  uint64_t page_seq = 0;
  std::string page_json;
  std::chrono::steady_clock::time_point page_rendered_at;
  std::chrono::steady_clock::duration page_render_time{};
  int damaged_polls = 0;  // polls since it was found damaged (it is opened again now and then)

  // "running", "paused", "finished", "interrupted" (no writer and neither paused nor finished:
  // it crashed or was killed; `attune run` resumes it) or "damaged".
  std::string StateName() const;
};

inline constexpr size_t kRecentEvents = 200;

class Catalog {
 public:
  // `roots` must exist (checked by the caller); they are made canonical here.
  explicit Catalog(std::vector<std::string> roots);

  // Looks for campaign directories not yet known (at most kMaxDepth folders below each root)
  // and opens them. Returns the number found.
  size_t Scan();
  // Reads what every known campaign appended since the last call and refreshes whether its
  // writer is alive. Returns the names of the campaigns whose seq or state changed.
  std::vector<std::string> Poll();

  CampaignEntry* Find(const std::string& name);
  const std::map<std::string, CampaignEntry>& entries() const { return entries_; }
  const std::vector<std::string>& roots() const { return roots_; }

  // The campaigns list (/api/campaigns).
  nlohmann::json ListJson() const;
  // The campaign page's data (/api/campaigns/NAME), rendered once per seq, and for a campaign
  // whose page takes long to render (10,000 candidates: about a second) at most once per two
  // rendering times: the answer may then be that much behind the last event (its "seq" says
  // which), which the page notices and asks again. Small campaigns are always current.
  std::string PageJson(CampaignEntry& entry);
  // The header of a campaign: its list row.
  static nlohmann::json RowJson(const CampaignEntry& entry);

  static constexpr int kMaxDepth = 3;

 private:
  void Open(CampaignEntry* entry);
  void Apply(CampaignEntry* entry, const std::vector<EventRecord>& events);
  std::string NameFor(const std::string& root, const std::string& dir) const;

  std::vector<std::string> roots_;
  std::map<std::string, CampaignEntry> entries_;
  std::map<std::string, std::string> name_of_dir_;
};

// True when an flock is held on the campaign's log folder, i.e. an `attune run` owns it. Read from
// /proc/locks, so probing never contends with a writer that is starting.
bool WriterAlive(const std::string& campaign_dir);

}  // namespace attune::serve

#endif  // ATTUNE_ENGINE_SERVE_CATALOG_H_
