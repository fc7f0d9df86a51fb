// Routing for `attune serve`: pages, the JSON API, event-stream messages (docs/serve.md).
#include "serve/router.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "report/dashboard.h"

namespace attune::serve {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr size_t kDefaultLogTailBytes = 16 * 1024;
constexpr size_t kMaxLogTailBytes = 256 * 1024;
constexpr size_t kMaxEventsPerAnswer = kRecentEvents;

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

Response Error(int status, const std::string& message) {
  return Response{status, "application/json", Dump(json{{"error", message}}), {}, {}};
}

Response Json(const json& j) { return Response{200, "application/json", Dump(j), {}, {}}; }

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(path);
  while (std::getline(in, part, '/')) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

std::string HostName(const std::string& host) {
  if (!host.empty() && host[0] == '[') return host.substr(0, host.find(']') + 1);
  return host.substr(0, host.find(':'));
}

// 127.x.y.z written as an address, not a name that merely starts with "127." (a rebinding
// attacker's 127.0.0.1.example.com).
bool IsLoopbackV4(const std::string& name) {
  if (name.rfind("127.", 0) != 0 || name.find_first_not_of("0123456789.") != std::string::npos)
    return false;
  return std::count(name.begin(), name.end(), '.') == 3 && name.back() != '.';
}

bool LoopbackHost(const std::string& host) {
  const std::string name = HostName(host);
  return name.empty() || name == "localhost" || name == "[::1]" || IsLoopbackV4(name);
}

std::optional<uint64_t> Number(const std::map<std::string, std::string>& query, const char* key) {
  auto it = query.find(key);
  if (it == query.end() || it->second.empty() || it->second.size() > 18 ||
      it->second.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return std::stoull(it->second);
}

json BriefJson(const EventBrief& e) {
  return {{"seq", e.seq},
          {"type", e.type},
          {"ts_ms", e.ts_ms},
          {"candidate", e.candidate},
          {"job", e.job}};
}

json EventsAfter(const CampaignEntry& entry, uint64_t after) {
  json events = json::array();
  for (const auto& e : entry.recent) {
    if (e.seq > after) events.push_back(BriefJson(e));
  }
  return events;
}

bool IsUnder(const fs::path& path, const fs::path& root) {
  auto rel = path.lexically_relative(root);
  return !rel.empty() && *rel.begin() != "..";
}

}  // namespace

std::string PercentDecode(const std::string& s, bool* ok) {
  std::string out;
  *ok = true;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%') {
      if (i + 2 >= s.size() || !std::isxdigit(static_cast<unsigned char>(s[i + 1])) ||
          !std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
        *ok = false;
        return "";
      }
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  if (out.find('\0') != std::string::npos) *ok = false;
  return out;
}

std::map<std::string, std::string> ParseQuery(const std::string& query) {
  std::map<std::string, std::string> out;
  std::istringstream in(query);
  for (std::string pair; std::getline(in, pair, '&');) {
    const size_t eq = pair.find('=');
    bool ok_key = true, ok_value = true;
    std::string key = PercentDecode(pair.substr(0, eq), &ok_key);
    std::string value =
        eq == std::string::npos ? "" : PercentDecode(pair.substr(eq + 1), &ok_value);
    if (ok_key && ok_value) out[key] = value;
  }
  return out;
}

bool SameSecret(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < b.size(); ++i) {
    diff |= static_cast<unsigned char>((i < a.size() ? a[i] : 0) ^ b[i]);
  }
  return diff == 0;
}

WebAssets LoadWebAssets(const std::string& web_dir) {
  struct File {
    const char* url;
    const char* path;
    const char* type;
  };
  static const File kFiles[] = {
      {"/", "index.html", "text/html; charset=utf-8"},
      {"/static/app.js", "app.js", "text/javascript; charset=utf-8"},
      {"/static/app.css", "app.css", "text/css; charset=utf-8"},
      {"/static/uPlot.iife.min.js", "vendor/node_modules/uplot/dist/uPlot.iife.min.js",
       "text/javascript; charset=utf-8"},
      {"/static/uPlot.min.css", "vendor/node_modules/uplot/dist/uPlot.min.css",
       "text/css; charset=utf-8"},
  };
  WebAssets assets;
  for (const File& f : kFiles) {
    const std::string path = (fs::path(web_dir) / f.path).string();
    std::ifstream in(path, std::ios::binary);
    std::stringstream content;
    if (in) content << in.rdbuf();
    if (!in) {
      assets.missing += (assets.missing.empty() ? "" : ", ") + path;
      continue;
    }
    assets.files[f.url] = {f.type, content.str()};
  }
  return assets;
}

bool Router::Authorized(const Request& request,
                        const std::map<std::string, std::string>& query) const {
  if (options_.token.empty()) return true;
  if (auto it = query.find("token"); it != query.end() && SameSecret(it->second, options_.token))
    return true;
  const std::string bearer = "Bearer ";
  if (request.authorization.rfind(bearer, 0) == 0 &&
      SameSecret(request.authorization.substr(bearer.size()), options_.token)) {
    return true;
  }
  std::istringstream cookies(request.cookie);
  for (std::string c; std::getline(cookies, c, ';');) {
    c.erase(0, c.find_first_not_of(' '));
    if (c.rfind("attune_token=", 0) == 0 && SameSecret(c.substr(13), options_.token)) return true;
  }
  return false;
}

Response Router::Handle(const Request& request) {
  if (request.method != "GET" && request.method != "HEAD") {
    Response r = Error(
        405, "attune serve is read-only: only GET and HEAD are answered, not " + request.method);
    r.headers.push_back({"Allow", "GET, HEAD"});
    return r;
  }
  if (options_.loopback_only && !LoopbackHost(request.host)) {
    return Error(403, "Host '" + request.host +
                          "' is not the loopback; attune serve without --token "
                          "answers only requests addressed to localhost or 127.0.0.1");
  }
  const size_t q = request.target.find('?');
  const std::string path = request.target.substr(0, q);
  const auto query = ParseQuery(q == std::string::npos ? "" : request.target.substr(q + 1));
  if (!Authorized(request, query)) {
    return Error(401,
                 "this server needs its token: add ?token=TOKEN to the address, or send "
                 "'Authorization: Bearer TOKEN' (attune serve printed it when it started)");
  }
  std::vector<std::string> parts;
  for (const auto& raw : SplitPath(path)) {
    bool ok = true;
    parts.push_back(PercentDecode(raw, &ok));
    if (!ok) return Error(400, "malformed percent-encoding in the path '" + path + "'");
  }
  if (!parts.empty() && parts[0] == "api") return Api(parts, query);
  const std::string page = parts.empty() || parts[0] == "campaign" ? "/" : path;
  auto it = assets_->files.find(page);
  if (it == assets_->files.end()) return Error(404, "no page " + path);
  Response r{200, it->second.first, it->second.second, {}, {}};
  if (page == "/" && !options_.token.empty() && query.count("token")) {
    // The page's own requests (fetch, EventSource) then carry the token without repeating it.
    r.headers.push_back({"Set-Cookie", "attune_token=" + query.at("token") +
                                           "; Path=/; HttpOnly; SameSite=Strict"});
  }
  return r;
}

Response Router::Api(const std::vector<std::string>& parts,
                     const std::map<std::string, std::string>& query) {
  if (parts.size() == 2 && parts[1] == "health") return Json(json{{"ok", true}});
  if (parts.size() < 2 || parts[1] != "campaigns") {
    return Error(404, "unknown API path; see docs/serve.md for the routes under /api/");
  }
  if (parts.size() == 2) return Json(catalog_->ListJson());
  CampaignEntry* entry = catalog_->Find(parts[2]);
  if (!entry) {
    return Error(404, "no campaign named '" + parts[2] +
                          "' under the served roots (GET /api/campaigns lists them)");
  }
  return Campaign(*entry, parts, query);
}

Response Router::Campaign(CampaignEntry& entry, const std::vector<std::string>& parts,
                          const std::map<std::string, std::string>& query) {
  if (parts.size() == 3)
    return Response{200, "application/json", catalog_->PageJson(entry), {}, {}};
  const std::string& what = parts[3];
  if (what == "stream" && parts.size() == 4) {
    Response r{200, "text/event-stream", "", {}, entry.name};
    return r;
  }
  if (what == "events" && parts.size() == 4) {
    const uint64_t from = Number(query, "from").value_or(1);
    json events = EventsAfter(entry, from > 0 ? from - 1 : 0);
    if (events.size() > kMaxEventsPerAnswer)
      events.erase(events.begin(), events.end() - kMaxEventsPerAnswer);
    return Json(json{{"seq", entry.state.last_seq},
                     {"state", entry.StateName()},
                     {"oldest_held", entry.recent.empty() ? 0 : entry.recent.front().seq},
                     {"events", events}});
  }
  if (what == "candidates" && parts.size() == 5) {
    auto detail = DashboardCandidate(entry.state, parts[4]);
    if (!detail)
      return Error(404, "campaign '" + entry.name + "' has no candidate '" + parts[4] + "'");
    return Json(*detail);
  }
  if (what == "jobs" && parts.size() == 6 && parts[5] == "log")
    return LogTail(entry, parts[4], query);
  return Error(404, "unknown API path under /api/campaigns/" + entry.name + "; see docs/serve.md");
}

Response Router::LogTail(CampaignEntry& entry, const std::string& job,
                         const std::map<std::string, std::string>& query) {
  const JobRecord* j = entry.state.FindJob(job);
  if (!j) return Error(404, "campaign '" + entry.name + "' has no job '" + job + "'");
  if (j->log_path.empty()) return Error(404, "job '" + job + "' has no log recorded");
  std::error_code ec;
  fs::path log = fs::weakly_canonical(fs::path(entry.dir) / j->log_path, ec);
  if (ec || !IsUnder(log, entry.root)) {
    return Error(403, "the log of job '" + job +
                          "' is outside the served roots; read it where it is: " + j->log_path);
  }
  const size_t want =
      std::min<size_t>(Number(query, "bytes").value_or(kDefaultLogTailBytes), kMaxLogTailBytes);
  std::ifstream in(log, std::ios::binary | std::ios::ate);
  if (!in) return Error(404, "the log of job '" + job + "' (" + log.string() + ") cannot be read");
  const std::streamoff size = in.tellg();
  const std::streamoff start =
      size > static_cast<std::streamoff>(want) ? size - static_cast<std::streamoff>(want) : 0;
  in.seekg(start);
  std::string text(static_cast<size_t>(size - start), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  return Json(json{{"job", job}, {"size", size}, {"offset", start}, {"text", text}});
}

std::string Router::StreamHello(const std::string& campaign) {
  CampaignEntry* entry = catalog_->Find(campaign);
  if (!entry) return "";
  const uint64_t seq = entry->state.last_seq;
  json msg = {{"seq", seq},
              {"state", entry->StateName()},
              {"damage", entry->damage},
              {"events", EventsAfter(*entry, seq > 20 ? seq - 20 : 0)}};
  return "retry: 1000\nid: " + std::to_string(seq) + "\nevent: hello\ndata: " + Dump(msg) + "\n\n";
}

std::string Router::StreamUpdate(const std::string& campaign, uint64_t after_seq) {
  CampaignEntry* entry = catalog_->Find(campaign);
  if (!entry) {
    json gone = {{"seq", after_seq},
                 {"state", "removed"},
                 {"damage", "the campaign directory was removed"},
                 {"events", json::array()}};
    return "event: update\ndata: " + Dump(gone) + "\n\n";
  }
  json msg = {{"seq", entry->state.last_seq},
              {"state", entry->StateName()},
              {"damage", entry->damage},
              {"events", EventsAfter(*entry, after_seq)}};
  return "id: " + std::to_string(entry->state.last_seq) + "\nevent: update\ndata: " + Dump(msg) +
         "\n\n";
}

}  // namespace attune::serve
