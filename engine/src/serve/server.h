// Copyright attune authors.
//
// `attune serve`: a read-only HTTP server (Boost.Beast on one Boost.Asio thread) for the
// dashboard pages, its JSON API and live updates by Server-Sent Events. docs/serve.md is the
// user's reference (routes, members, limits, the token).
//
// Safety: it binds 127.0.0.1 unless told otherwise, and any other address needs a token that
// every request must carry; on loopback without a token it accepts only Host headers naming the
// loopback (so a web page elsewhere cannot read it through DNS rebinding). Only GET and HEAD are
// answered; request headers, connections and event-stream clients are bounded; nothing it does
// writes to a campaign.
#ifndef ATTUNE_ENGINE_SERVE_SERVER_H_
#define ATTUNE_ENGINE_SERVE_SERVER_H_

#include <atomic>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "attune/status.h"

namespace attune::serve {

struct ServeOptions {
  std::vector<std::string> roots;  // folders holding campaign directories (or campaigns)
  std::string bind = "127.0.0.1";
  unsigned short port = 8080;      // 0: any free port (printed)
  std::string token;               // required on every request when not empty
  std::string web_dir;             // index.html, app.js, app.css, vendor/ (DefaultDataDir()/web)
  size_t max_connections = 64;     // open sockets, event streams included
  size_t max_event_streams = 32;   // Server-Sent Events clients
  size_t max_header_bytes = 8192;  // a request's start line and headers
  int poll_ms = 250;               // how often the logs are tailed
  int scan_ms = 2000;              // how often the roots are searched for new campaigns
};

// Listens, then serves until *stop becomes true (checked every poll). `on_listening` gets the
// address actually bound ("127.0.0.1:8080"), once, before the first request is read.
Status Serve(const ServeOptions& options, const std::atomic<bool>* stop,
             const std::function<void(const std::string&)>& on_listening);

// Whether `address` is a loopback address (127.0.0.0/8, ::1) or "localhost". kInvalidArgument
// when it is not an IP address or "localhost".
Result<bool> IsLoopback(const std::string& address);

}  // namespace attune::serve

#endif  // ATTUNE_ENGINE_SERVE_SERVER_H_
