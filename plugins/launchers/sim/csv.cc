#include "csv.h"

namespace attune::sim {

Result<std::vector<CsvRow>> ParseCsv(std::string_view text) {
  std::vector<CsvRow> rows;
  CsvRow row;
  std::string field;
  bool quoted = false, field_started = false;
  int line = 1, quote_line = 0;
  auto end_field = [&] {
    row.push_back(field);
    field.clear();
    field_started = false;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"' && !field_started) {
      quoted = field_started = true;
      quote_line = line;
    } else if (c == ',') {
      end_field();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      end_field();
      if (!(row.size() == 1 && row[0].empty())) rows.push_back(row);
      row.clear();
      ++line;
    } else {
      field += c;
      field_started = true;
    }
  }
  if (quoted) {
    return Status::InvalidArgument("csv line " + std::to_string(quote_line) +
                                   ": a quoted field is not closed (expected a closing '\"')");
  }
  if (field_started || !row.empty()) {
    end_field();
    rows.push_back(row);
  }
  return rows;
}

std::string CsvField(const std::string& value) {
  if (value.find_first_of(",\"\n\r") == std::string::npos) return value;
  std::string out = "\"";
  for (char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

Result<CsvTable> ParseCsvTable(std::string_view text) {
  ATTUNE_ASSIGN_OR_RETURN(auto rows, ParseCsv(text));
  if (rows.empty()) return Status::InvalidArgument("csv: empty input (expected a header row)");
  CsvTable table;
  table.header = rows[0];
  for (size_t r = 1; r < rows.size(); ++r) {
    std::map<std::string, std::string> named;
    for (size_t c = 0; c < table.header.size(); ++c) {
      named[table.header[c]] = c < rows[r].size() ? rows[r][c] : "";
    }
    table.rows.push_back(std::move(named));
  }
  return table;
}

}  // namespace attune::sim
