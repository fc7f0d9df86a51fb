// Copyright attune authors.
//
// What `attune serve` answers, without the network: a request in, a response out (or "this is an
// event stream for campaign X"). The server (server.cc) does the sockets; this file decides.
//
// Not thread-safe: the server's I/O thread owns it.
#ifndef ATTUNE_ENGINE_SERVE_ROUTER_H_
#define ATTUNE_ENGINE_SERVE_ROUTER_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "serve/catalog.h"

namespace attune::serve {

struct Request {
  std::string method;  // "GET"
  std::string target;  // "/api/campaigns?x=1" as sent
  std::string host;    // the Host header
  std::string authorization;
  std::string cookie;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // Set for /api/campaigns/NAME/stream: the server keeps the connection as an event stream.
  std::string stream_campaign;
};

// The page files, read once at start (web/index.html, app.js, app.css and the charting library
// from web/vendor/, installed by tools/setup.d/61-web.sh).
struct WebAssets {
  std::map<std::string, std::pair<std::string, std::string>> files;  // url -> (type, content)
  std::string missing;  // what could not be read ("" when complete)
};
WebAssets LoadWebAssets(const std::string& web_dir);

struct RouterOptions {
  std::string token;          // "" when none is required
  bool loopback_only = true;  // without a token: only Host headers naming the loopback
};

class Router {
 public:
  Router(Catalog* catalog, const WebAssets* assets, RouterOptions options)
      : catalog_(catalog), assets_(assets), options_(std::move(options)) {}

  Response Handle(const Request& request);

  // The first message of an event stream: the campaign's seq and state and its recent events.
  std::string StreamHello(const std::string& campaign);
  // The message sent when a campaign changed: events after `after_seq`, seq and state.
  std::string StreamUpdate(const std::string& campaign, uint64_t after_seq);

 private:
  Response Api(const std::vector<std::string>& parts,
               const std::map<std::string, std::string>& query);
  Response Campaign(CampaignEntry& entry, const std::vector<std::string>& parts,
                    const std::map<std::string, std::string>& query);
  Response LogTail(CampaignEntry& entry, const std::string& job,
                   const std::map<std::string, std::string>& query);
  bool Authorized(const Request& request, const std::map<std::string, std::string>& query) const;

  Catalog* catalog_;
  const WebAssets* assets_;
  RouterOptions options_;
};

// Helpers (exposed for tests).
std::string PercentDecode(const std::string& s, bool* ok);
std::map<std::string, std::string> ParseQuery(const std::string& query);
// Constant-time comparison (a token must not leak through timing).
bool SameSecret(const std::string& a, const std::string& b);

}  // namespace attune::serve

#endif  // ATTUNE_ENGINE_SERVE_ROUTER_H_
