// Copyright attune authors.
#include "data/tokenizer.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "attune/hash.h"

namespace attune::data {
namespace {

namespace fs = std::filesystem;

Result<std::string> ReadBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path.string() + ": cannot open the tokenizer file");
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return Status::IoError(path.string() + ": read failed");
  return s.str();
}

}  // namespace

Result<std::unique_ptr<Tokenizer>> LoadTokenizer(const std::string& path) {
  std::error_code ec;
  fs::path file(path);
  if (fs::is_directory(file, ec)) file /= "tokenizer.json";
  if (!fs::exists(file, ec)) {
    return Status::NotFound(file.string() +
                            ": no such tokenizer (give a tokenizer.json, a directory holding one, "
                            "or a SentencePiece .model file)");
  }
  ATTUNE_ASSIGN_OR_RETURN(std::string bytes, ReadBytes(file));
  std::unique_ptr<Tokenizer> tok;
  if (file.extension() == ".model") {
    ATTUNE_ASSIGN_OR_RETURN(tok, LoadSentencePiece(file.string(), bytes));
  } else {
    std::string config;
    fs::path config_path = file.parent_path() / "tokenizer_config.json";
    if (fs::exists(config_path, ec)) {
      ATTUNE_ASSIGN_OR_RETURN(config, ReadBytes(config_path));
    }
    ATTUNE_ASSIGN_OR_RETURN(tok, LoadHfTokenizer(file.string(), bytes, config));
  }
  return tok;
}

}  // namespace attune::data
