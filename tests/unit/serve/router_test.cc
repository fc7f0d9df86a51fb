// The routing of `attune serve` without sockets: methods, the Host check, the token in its three
// forms, lookups that never become paths, and the helpers that decode requests.
#include "serve/router.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "serve/catalog.h"
#include "serve/server.h"

namespace attune::serve {
namespace {

namespace fs = std::filesystem;

struct Fixture {
  fs::path root = fs::temp_directory_path() / ("attune_router_test_" + std::to_string(::getpid()));
  Catalog catalog;
  WebAssets assets;
  explicit Fixture()
      : catalog({MakeRoot(root)}), assets(LoadWebAssets(std::string(ATTUNE_SOURCE_DIR) + "/web")) {
    catalog.Scan();
  }
  ~Fixture() { fs::remove_all(root); }
  static std::string MakeRoot(const fs::path& p) {
    fs::create_directories(p / "empty");
    return p.string();
  }
};

Request Get(const std::string& target, const std::string& host = "127.0.0.1:8080") {
  return Request{"GET", target, host, "", ""};
}

TEST_CASE("only GET and HEAD are answered", "[serve]") {
  Fixture f;
  Router r(&f.catalog, &f.assets, RouterOptions{});
  for (const char* method : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS"}) {
    Request req = Get("/api/campaigns");
    req.method = method;
    CHECK(r.Handle(req).status == 405);
  }
  CHECK(r.Handle(Get("/api/campaigns")).status == 200);
  CHECK(r.Handle(Get("/api/health")).body == "{\"ok\":true}");
}

TEST_CASE("without a token only loopback Host headers are answered", "[serve]") {
  Fixture f;
  Router r(&f.catalog, &f.assets, RouterOptions{});
  for (const char* host : {"localhost:8080", "127.0.0.1", "127.1.2.3:80", "[::1]:8080", ""}) {
    INFO(host);
    CHECK(r.Handle(Get("/api/health", host)).status == 200);
  }
  for (const char* host :
       {"evil.example", "127.0.0.1.evil.example", "127.evil:80", "10.0.0.1", "[::2]"}) {
    INFO(host);
    CHECK(r.Handle(Get("/api/health", host)).status == 403);
  }
}

TEST_CASE("with a token every request carries it: query, bearer header or cookie", "[serve]") {
  Fixture f;
  Router r(&f.catalog, &f.assets, RouterOptions{"s3cret-token", false});
  CHECK(r.Handle(Get("/api/health", "anything")).status == 401);
  CHECK(r.Handle(Get("/api/health?token=wrong", "anything")).status == 401);
  CHECK(r.Handle(Get("/api/health?token=s3cret-token", "anything")).status == 200);
  Request bearer = Get("/api/health", "anything");
  bearer.authorization = "Bearer s3cret-token";
  CHECK(r.Handle(bearer).status == 200);
  Request cookie = Get("/api/health", "anything");
  cookie.cookie = "other=1; attune_token=s3cret-token";
  CHECK(r.Handle(cookie).status == 200);
  Response page = r.Handle(Get("/?token=s3cret-token", "anything"));
  REQUIRE(page.status == 200);
  REQUIRE(page.headers.size() == 1);
  CHECK_THAT(page.headers[0].second,
             Catch::StartsWith("attune_token=s3cret-token; Path=/; HttpOnly"));
}

TEST_CASE("names are looked up, never joined into paths", "[serve]") {
  Fixture f;
  Router r(&f.catalog, &f.assets, RouterOptions{});
  for (const char* target :
       {"/api/campaigns/..", "/api/campaigns/..%2F..%2Fetc", "/api/campaigns/empty",
        "/static/../../etc/passwd", "/etc/passwd", "/api/campaigns/%2Fetc%2Fpasswd/jobs/x/log"}) {
    INFO(target);
    const Response res = r.Handle(Get(target));
    CHECK(res.status == 404);
    CHECK(res.body.find("root:") == std::string::npos);
  }
  CHECK(r.Handle(Get("/api/campaigns/%zz")).status == 400);
  CHECK(r.Handle(Get("/api/campaigns/a%00b")).status == 400);
}

TEST_CASE("the page and its assets are served from the web folder", "[serve]") {
  Fixture f;
  Router r(&f.catalog, &f.assets, RouterOptions{});
  CHECK(r.Handle(Get("/")).content_type == "text/html; charset=utf-8");
  CHECK(r.Handle(Get("/campaign?name=x")).status == 200);
  CHECK(r.Handle(Get("/static/app.js")).status == 200);
  CHECK(r.Handle(Get("/static/nothing.js")).status == 404);
  const WebAssets none = LoadWebAssets("/nonexistent");
  CHECK_THAT(none.missing, Catch::Contains("/nonexistent/index.html"));
}

TEST_CASE("query and path decoding", "[serve]") {
  bool ok = true;
  CHECK(PercentDecode("group%2Fa+b", &ok) == "group/a b");
  CHECK(ok);
  PercentDecode("%4", &ok);
  CHECK_FALSE(ok);
  PercentDecode("a%00", &ok);
  CHECK_FALSE(ok);
  const auto q = ParseQuery("from=3&name=group%2Fa&flag&bad=%zz");
  CHECK(q.at("from") == "3");
  CHECK(q.at("name") == "group/a");
  CHECK(q.at("flag").empty());
  CHECK(q.count("bad") == 0);
  CHECK(SameSecret("abcdefgh", "abcdefgh"));
  CHECK_FALSE(SameSecret("abcdefgh", "abcdefgi"));
  CHECK_FALSE(SameSecret("abcdefg", "abcdefgh"));
  CHECK_FALSE(SameSecret("abcdefghi", "abcdefgh"));
}

TEST_CASE("IsLoopback tells --bind addresses apart", "[serve]") {
  CHECK(IsLoopback("127.0.0.1").value());
  CHECK(IsLoopback("::1").value());
  CHECK(IsLoopback("localhost").value());
  CHECK_FALSE(IsLoopback("0.0.0.0").value());
  CHECK_FALSE(IsLoopback("192.168.1.4").value());
  CHECK_FALSE(IsLoopback("example.com").ok());
}

}  // namespace
}  // namespace attune::serve
