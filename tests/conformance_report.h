// Copyright attune authors.
//
// Checks the JSON report of a conformance suite run (`attune launcher check ... --json`): exit 0,
// "pass": true, every one of `clauses` clauses passed and none was skipped.
#ifndef ATTUNE_TESTS_CONFORMANCE_REPORT_H_
#define ATTUNE_TESTS_CONFORMANCE_REPORT_H_

#include <catch2/catch.hpp>
#include <string>

#include <nlohmann/json.hpp>

namespace attune::testing {

inline void CheckSuitePassed(int exit_code, const std::string& out, const std::string& err, size_t clauses) {
  INFO("stdout: " << out << "\nstderr: " << err);
  auto report = nlohmann::json::parse(out, nullptr, false);
  REQUIRE(report.is_object());
  CHECK(exit_code == 0);
  CHECK(report["pass"] == true);
  REQUIRE(report["clauses"].size() == clauses);
  for (const auto& c : report["clauses"]) {
    INFO(c.dump());
    CHECK(c["pass"] == true);
    CHECK(c["skipped"] == false);
  }
}

}  // namespace attune::testing

#endif  // ATTUNE_TESTS_CONFORMANCE_REPORT_H_
