// The network side of `attune serve`: Boost.Beast sessions on one Asio thread, the event-stream
// clients, and the timer that tails the logs.
#include "serve/server.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <deque>
#include <memory>
#include <optional>

#include "serve/catalog.h"
#include "serve/router.h"

namespace attune::serve {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

constexpr auto kReadTimeout = std::chrono::seconds(15);
constexpr auto kKeepAliveEvery = std::chrono::seconds(15);
constexpr size_t kMaxQueuedBytes = 4 << 20;  // an event-stream client this far behind is dropped

class Hub;

// Counts itself among the hub's open connections for as long as it lives.
class ConnectionSlot {
 public:
  explicit ConnectionSlot(size_t* open) : open_(open) { ++*open_; }
  ~ConnectionSlot() { --*open_; }
  ConnectionSlot(const ConnectionSlot&) = delete;
  ConnectionSlot& operator=(const ConnectionSlot&) = delete;

 private:
  size_t* open_;
};

// One event-stream client: a queue of messages written in order; a read that only notices the
// client going away.
class StreamClient : public std::enable_shared_from_this<StreamClient> {
 public:
  StreamClient(beast::tcp_stream stream, std::string campaign, uint64_t seq, size_t* open,
               size_t* streams)
      : stream_(std::move(stream)),
        campaign_(std::move(campaign)),
        seq_(seq),
        slot_(open),
        stream_slot_(streams) {}

  const std::string& campaign() const { return campaign_; }
  uint64_t seq() const { return seq_; }
  void set_seq(uint64_t seq) { seq_ = seq; }
  bool closed() const { return closed_; }

  void Start(std::string first) {
    stream_.expires_never();
    Send(std::move(first));
    auto self = shared_from_this();
    stream_.socket().async_read_some(net::buffer(sink_),
                                     [self](beast::error_code, size_t) { self->Close(); });
  }

  void Send(std::string message) {
    if (closed_) return;
    queued_bytes_ += message.size();
    if (queued_bytes_ > kMaxQueuedBytes) return Close();
    queue_.push_back(std::move(message));
    if (queue_.size() == 1) WriteNext();
  }

  void Close() {
    if (closed_) return;
    closed_ = true;
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.socket().close(ec);
  }

 private:
  void WriteNext() {
    auto self = shared_from_this();
    net::async_write(stream_.socket(), net::buffer(queue_.front()),
                     [self](beast::error_code ec, size_t) {
                       if (ec) return self->Close();
                       self->queued_bytes_ -= self->queue_.front().size();
                       self->queue_.pop_front();
                       if (!self->queue_.empty()) self->WriteNext();
                     });
  }

  beast::tcp_stream stream_;
  std::string campaign_;
  uint64_t seq_;
  ConnectionSlot slot_;
  ConnectionSlot stream_slot_;
  std::deque<std::string> queue_;
  size_t queued_bytes_ = 0;
  bool closed_ = false;
  char sink_[256];
};

// Everything the sessions share; lives on the I/O thread.
struct Hub {
  const ServeOptions& options;
  Catalog catalog;
  WebAssets assets;
  Router router;
  size_t open = 0;
  size_t streams = 0;
  std::vector<std::weak_ptr<StreamClient>> clients;

  Hub(const ServeOptions& o, RouterOptions ro)
      : options(o),
        catalog(o.roots),
        assets(LoadWebAssets(o.web_dir)),
        router(&catalog, &assets, std::move(ro)) {}
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, Hub* hub)
      : stream_(std::move(socket)), hub_(hub), slot_(&hub->open) {}

  void Start() { Read(); }

  // Refuses a connection over the limit with a short answer.
  void Refuse(int status, const std::string& message) {
    Respond(Response{status, "application/json", nlohmann::json{{"error", message}}.dump(), {}, {}},
            false, false);
  }

 private:
  void Read() {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(hub_->options.max_header_bytes));
    parser_->body_limit(0);
    stream_.expires_after(kReadTimeout);
    auto self = shared_from_this();
    http::async_read(stream_, buffer_, *parser_,
                     [self](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

  void OnRead(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
        ec == net::error::operation_aborted) {
      return Close();
    }
    if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
      return Refuse(431, "request headers larger than " +
                             std::to_string(hub_->options.max_header_bytes) + " bytes");
    }
    if (ec == http::error::body_limit || ec == http::error::unexpected_body) {
      return Refuse(413, "attune serve accepts no request body");
    }
    if (ec) return Refuse(400, "malformed request: " + ec.message());
    const auto& req = parser_->get();
    Request request{std::string(req.method_string()), std::string(req.target()),
                    std::string(req[http::field::host]),
                    std::string(req[http::field::authorization]),
                    std::string(req[http::field::cookie])};
    Response response = hub_->router.Handle(request);
    const bool head = req.method() == http::verb::head;
    if (!response.stream_campaign.empty() && response.status == 200 && !head)
      return StartStream(response);
    Respond(std::move(response), req.keep_alive(), head);
  }

  void StartStream(const Response& response) {
    if (hub_->streams >= hub_->options.max_event_streams) {
      return Refuse(
          503, "too many live streams (" + std::to_string(hub_->options.max_event_streams) +
                   "); close a dashboard tab or start attune serve with a larger --max-streams");
    }
    const std::string header =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n"
        "X-Content-Type-Options: nosniff\r\nConnection: keep-alive\r\n\r\n";
    CampaignEntry* entry = hub_->catalog.Find(response.stream_campaign);
    auto client = std::make_shared<StreamClient>(std::move(stream_), response.stream_campaign,
                                                 entry ? entry->state.last_seq : 0, &hub_->open,
                                                 &hub_->streams);
    hub_->clients.push_back(client);
    client->Start(header + hub_->router.StreamHello(response.stream_campaign));
  }

  void Respond(Response response, bool keep_alive, bool head) {
    auto res = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(response.status), 11);
    res->set(http::field::server, "attune");
    res->set(http::field::content_type, response.content_type);
    res->set(http::field::cache_control, "no-store");
    res->set("X-Content-Type-Options", "nosniff");
    res->set("Content-Security-Policy",
             "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
             "frame-ancestors 'none'");
    for (const auto& [k, v] : response.headers) res->set(k, v);
    const size_t length = response.body.size();
    if (!head) res->body() = std::move(response.body);
    res->content_length(length);
    res->keep_alive(keep_alive && response.status < 400);
    auto self = shared_from_this();
    stream_.expires_after(kReadTimeout);
    http::async_write(stream_, *res, [self, res](beast::error_code ec, size_t) {
      if (ec || !res->keep_alive()) return self->Close();
      self->Read();
    });
  }

  void Close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.socket().close(ec);
  }

  beast::tcp_stream stream_;
  Hub* hub_;
  ConnectionSlot slot_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::empty_body>> parser_;
};

class Listener {
 public:
  Listener(net::io_context& io, Hub* hub) : io_(io), acceptor_(io), hub_(hub) {}

  Status Listen(const std::string& bind, unsigned short port) {
    beast::error_code ec;
    const std::string host = bind == "localhost" ? "127.0.0.1" : bind;
    auto address = net::ip::make_address(host, ec);
    if (ec)
      return Status::InvalidArgument("--bind '" + bind +
                                     "' is not an IP address (e.g. 127.0.0.1, 0.0.0.0, ::1)");
    tcp::endpoint endpoint(address, port);
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
    if (ec) {
      return Status::Unavailable("cannot listen on " + bind + ":" + std::to_string(port) + ": " +
                                 ec.message() +
                                 (ec == net::error::address_in_use
                                      ? " (choose another --port, or --port 0 for any free one)"
                                      : ""));
    }
    return Status::Ok();
  }

  std::string Address() const {
    auto ep = acceptor_.local_endpoint();
    const std::string host =
        ep.address().is_v6() ? "[" + ep.address().to_string() + "]" : ep.address().to_string();
    return host + ":" + std::to_string(ep.port());
  }

  void Accept() {
    acceptor_.async_accept(net::make_strand(io_), [this](beast::error_code ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted) return;
      if (!ec) {
        const bool full = hub_->open >= hub_->options.max_connections;
        auto session = std::make_shared<Session>(std::move(socket), hub_);
        if (full) {
          session->Refuse(
              503, "too many connections (" + std::to_string(hub_->options.max_connections) + ")");
        } else {
          session->Start();
        }
      }
      Accept();
    });
  }

  void Stop() {
    beast::error_code ec;
    acceptor_.close(ec);
  }

 private:
  net::io_context& io_;
  tcp::acceptor acceptor_;
  Hub* hub_;
};

// Tails the logs every poll_ms and tells the stream clients what changed.
class Ticker {
 public:
  Ticker(net::io_context& io, Hub* hub, const std::atomic<bool>* stop, Listener* listener)
      : io_(io), timer_(io), hub_(hub), stop_(stop), listener_(listener) {}

  void Start() { Schedule(); }

 private:
  void Schedule() {
    timer_.expires_after(std::chrono::milliseconds(hub_->options.poll_ms));
    timer_.async_wait([this](beast::error_code ec) {
      if (ec) return;
      if (stop_ && stop_->load()) return Shutdown();
      Tick();
      Schedule();
    });
  }

  void Tick() {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_scan_ >= std::chrono::milliseconds(hub_->options.scan_ms)) {
      hub_->catalog.Scan();
      last_scan_ = now;
    }
    const bool keep_alive = now - last_keep_alive_ >= kKeepAliveEvery;
    if (keep_alive) last_keep_alive_ = now;
    const std::vector<std::string> changed = hub_->catalog.Poll();
    auto& clients = hub_->clients;
    for (auto it = clients.begin(); it != clients.end();) {
      auto client = it->lock();
      if (!client || client->closed()) {
        it = clients.erase(it);
        continue;
      }
      if (std::find(changed.begin(), changed.end(), client->campaign()) != changed.end()) {
        client->Send(hub_->router.StreamUpdate(client->campaign(), client->seq()));
        if (const CampaignEntry* e = hub_->catalog.Find(client->campaign()))
          client->set_seq(e->state.last_seq);
      } else if (keep_alive) {
        client->Send(": keep-alive\n\n");
      }
      ++it;
    }
  }

  void Shutdown() {
    listener_->Stop();
    for (auto& weak : hub_->clients) {
      if (auto client = weak.lock()) client->Close();
    }
    // Keep-alive connections of open pages would otherwise hold the loop until they time out.
    io_.stop();
  }

  net::io_context& io_;
  net::steady_timer timer_;
  Hub* hub_;
  const std::atomic<bool>* stop_;
  Listener* listener_;
  std::chrono::steady_clock::time_point last_scan_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_keep_alive_ = std::chrono::steady_clock::now();
};

}  // namespace

Result<bool> IsLoopback(const std::string& address) {
  if (address == "localhost") return true;
  beast::error_code ec;
  auto a = net::ip::make_address(address, ec);
  if (ec) return Status::InvalidArgument("'" + address + "' is not an IP address");
  return a.is_loopback();
}

Status Serve(const ServeOptions& options, const std::atomic<bool>* stop,
             const std::function<void(const std::string&)>& on_listening) {
  ATTUNE_ASSIGN_OR_RETURN(bool loopback, IsLoopback(options.bind));
  if (!loopback && options.token.empty()) {
    return Status::InvalidArgument("binding " + options.bind +
                                   " exposes the campaigns beyond this machine: "
                                   "give --token TOKEN (every request must then carry it)");
  }
  net::io_context io(1);
  Hub hub(options, RouterOptions{options.token, options.token.empty()});
  hub.catalog.Scan();
  Listener listener(io, &hub);
  ATTUNE_RETURN_IF_ERROR(listener.Listen(options.bind, options.port));
  if (on_listening) on_listening(listener.Address());
  if (!hub.assets.missing.empty() && on_listening) {
    on_listening("warning: missing web files (" + hub.assets.missing + "); run tools/setup.sh");
  }
  listener.Accept();
  Ticker ticker(io, &hub, stop, &listener);
  ticker.Start();
  io.run();
  return Status::Ok();
}

}  // namespace attune::serve
