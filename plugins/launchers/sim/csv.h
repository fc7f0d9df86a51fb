// Copyright attune authors.
//
// A small RFC 4180 CSV reader and writer: quoted fields may hold commas, doubled quotes and line
// breaks.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_SIM_CSV_H_
#define ATTUNE_PLUGINS_LAUNCHERS_SIM_CSV_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "attune/status.h"

namespace attune::sim {

using CsvRow = std::vector<std::string>;

// Parses the whole text into rows. Fails on an unterminated quoted field, naming its line.
Result<std::vector<CsvRow>> ParseCsv(std::string_view text);

// A field quoted when it holds a comma, a quote or a line break.
std::string CsvField(const std::string& value);

// Rows keyed by the header's column names (missing trailing cells read as "").
struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
};
Result<CsvTable> ParseCsvTable(std::string_view text);

}  // namespace attune::sim

#endif  // ATTUNE_PLUGINS_LAUNCHERS_SIM_CSV_H_
