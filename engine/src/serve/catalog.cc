// The catalog: finding campaign directories under the roots and keeping their folded state
// current from the tail of each log.
#include "serve/catalog.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "report/dashboard.h"

namespace attune::serve {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// "fd:01:1234567" keys of every lock in /proc/locks.
std::set<std::string> LockedFiles() {
  std::set<std::string> out;
  std::ifstream in("/proc/locks");
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    for (std::string w; words >> w;) {
      if (std::count(w.begin(), w.end(), ':') == 2 && w.find("->") == std::string::npos &&
          std::isxdigit(static_cast<unsigned char>(w[0]))) {
        out.insert(w);
        break;
      }
    }
  }
  return out;
}

std::string LockKeyOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%02x:%02x:%lu", major(st.st_dev), minor(st.st_dev),
                static_cast<unsigned long>(st.st_ino));
  return buf;
}

bool IsCampaignDir(const fs::path& dir) {
  std::error_code ec;
  const fs::path log = EventLogDirOf(dir.string());
  return fs::exists(log / "CURRENT", ec) || fs::exists(log / "ACKED", ec);
}

std::string DataString(const json& data, const char* key) {
  if (!data.is_object()) return "";
  auto it = data.find(key);
  return it != data.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

bool WriterAlive(const std::string& campaign_dir) {
  const std::string key = LockKeyOf(EventLogDirOf(campaign_dir));
  return !key.empty() && LockedFiles().count(key) > 0;
}

std::string CampaignEntry::StateName() const {
  if (!damage.empty()) return "damaged";
  if (state.finished) return "finished";
  if (writer_alive) return "running";
  if (state.paused) return "paused";
  return "interrupted";
}

Catalog::Catalog(std::vector<std::string> roots) {
  for (const auto& r : roots) {
    std::error_code ec;
    fs::path canonical = fs::canonical(r, ec);
    roots_.push_back(ec ? r : canonical.string());
  }
}

std::string Catalog::NameFor(const std::string& root, const std::string& dir) const {
  std::string name = dir == root ? fs::path(root).filename().string()
                                 : fs::path(dir).lexically_relative(root).generic_string();
  if (name.empty()) name = "campaign";
  std::string unique = name;
  for (int n = 2; entries_.count(unique); ++n) unique = name + "~" + std::to_string(n);
  return unique;
}

size_t Catalog::Scan() {
  size_t found = 0;
  for (const auto& root : roots_) {
    std::vector<std::pair<fs::path, int>> todo{{fs::path(root), 0}};
    while (!todo.empty()) {
      auto [dir, depth] = todo.back();
      todo.pop_back();
      if (IsCampaignDir(dir)) {
        const std::string d = dir.string();
        if (name_of_dir_.count(d)) continue;
        CampaignEntry entry;
        entry.name = NameFor(root, d);
        entry.dir = d;
        entry.root = root;
        Open(&entry);
        name_of_dir_[d] = entry.name;
        entries_.emplace(entry.name, std::move(entry));
        ++found;
        continue;  // a campaign's own folders (jobs, log) hold no campaigns
      }
      if (depth >= kMaxDepth) continue;
      std::error_code ec;
      for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        // Symbolic links are not followed: a link must not lead the scan out of the root.
        if (it->is_directory(ec) && !it->is_symlink(ec)) todo.push_back({it->path(), depth + 1});
      }
    }
  }
  return found;
}

void Catalog::Open(CampaignEntry* entry) {
  std::vector<EventRecord> events;
  auto tail = EventTail::Open(entry->dir, &events);
  entry->state = CampaignState();
  entry->recent.clear();
  entry->page_seq = 0;
  if (!tail.ok()) {
    entry->damage = tail.status().message();
    return;
  }
  entry->tail = std::move(tail).value();
  entry->damage.clear();
  Apply(entry, events);
  entry->writer_alive = WriterAlive(entry->dir);
}

void Catalog::Apply(CampaignEntry* entry, const std::vector<EventRecord>& events) {
  for (const auto& e : events) {
    Status s = entry->state.Apply(e);
    if (!s.ok()) {
      entry->damage = "event " + std::to_string(e.seq) + ": " + s.message();
      entry->tail.reset();
      return;
    }
    entry->last_event_ms = e.ts_ms;
    entry->recent.push_back(EventBrief{e.seq, e.type, e.ts_ms, DataString(e.data, "candidate"),
                                       DataString(e.data, "job")});
    if (entry->recent.size() > kRecentEvents) entry->recent.pop_front();
  }
}

std::vector<std::string> Catalog::Poll() {
  std::vector<std::string> changed;
  const std::set<std::string> locked = LockedFiles();
  for (auto it = entries_.begin(); it != entries_.end();) {
    // A campaign directory removed under the server leaves the list (and may come back).
    std::error_code ec;
    if (!fs::exists(it->second.dir, ec)) {
      changed.push_back(it->first);
      name_of_dir_.erase(it->second.dir);
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& [name, entry] : entries_) {
    const uint64_t seq = entry.state.last_seq;
    const std::string before = entry.StateName();
    entry.writer_alive = locked.count(LockKeyOf(EventLogDirOf(entry.dir))) > 0;
    // A damaged log is opened again every few seconds: what looked damaged may have been a
    // campaign caught while its first `attune run` was creating it, or a restored backup.
    if (!entry.tail && (entry.damage.empty() || ++entry.damaged_polls % 20 == 0)) Open(&entry);
    if (entry.tail) {
      auto events = entry.tail->Poll();
      if (events.ok()) {
        Apply(&entry, *events);
      } else {
        entry.damage = events.status().message();
        entry.tail.reset();
      }
    }
    if (entry.state.last_seq != seq || entry.StateName() != before) changed.push_back(name);
  }
  return changed;
}

CampaignEntry* Catalog::Find(const std::string& name) {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

json Catalog::RowJson(const CampaignEntry& entry) {
  json row = entry.damage.empty() ? DashboardSummary(entry.state) : json::object();
  row["name"] = entry.name;
  row["state"] = entry.StateName();
  row["damage"] = entry.damage;
  row["last_event_ms"] = entry.last_event_ms;
  row["seq"] = entry.state.last_seq;
  return row;
}

json Catalog::ListJson() const {
  json list = json::array();
  for (const auto& [name, entry] : entries_) list.push_back(RowJson(entry));
  return json{{"roots", roots_}, {"campaigns", list}};
}

std::string Catalog::PageJson(CampaignEntry& entry) {
  // Rendered once per seq (a 10,000-candidate campaign takes about a second); the state, which
  // can change without an event (a writer starting or dying), is put in front of it per answer.
  const auto now = std::chrono::steady_clock::now();
  const bool stale = entry.page_seq != entry.state.last_seq;
  const bool busy = now - entry.page_rendered_at < 2 * entry.page_render_time;
  if (entry.page_json.empty() || (stale && !busy)) {
    json page = entry.damage.empty() ? DashboardCampaign(entry.state) : json::object();
    page["name"] = entry.name;
    page["seq"] = entry.state.last_seq;
    page["damage"] = entry.damage;
    page["last_event_ms"] = entry.last_event_ms;
    json recent = json::array();
    for (const auto& e : entry.recent) {
      recent.push_back({{"seq", e.seq},
                        {"type", e.type},
                        {"ts_ms", e.ts_ms},
                        {"candidate", e.candidate},
                        {"job", e.job}});
    }
    page["recent_events"] = recent;
    entry.page_json = page.dump(-1, ' ', false, json::error_handler_t::replace);
    entry.page_seq = entry.state.last_seq;
    entry.page_rendered_at = std::chrono::steady_clock::now();
    entry.page_render_time = entry.page_rendered_at - now;
  }
  std::string out = "{\"state\":\"" + entry.StateName() + "\",";
  out.append(entry.page_json, 1, std::string::npos);
  return out;
}

}  // namespace attune::serve
