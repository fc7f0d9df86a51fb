// Copyright attune authors.
#include "yaml_load.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <cmath>
#include <initializer_list>
#include <map>
#include <sstream>

#include "utf8.h"

namespace attune {

std::string YamlWhere(const YAML::Mark& mark, const std::string& source) {
  if (mark.line < 0) return source;
  return source + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

std::string YamlWhere(const YAML::Node& node, const std::string& source) {
  return YamlWhere(node.Mark(), source);
}

namespace {

std::string PositionOf(const YAML::Node& node) {
  if (node.Mark().line < 0) return "earlier";
  return "at line " + std::to_string(node.Mark().line + 1) + ", column " +
         std::to_string(node.Mark().column + 1);
}

// One walk that sees the document as a converter would (aliases expanded), bounded.
class TreeChecker {
 public:
  TreeChecker(const std::string& source, const YamlLimits& limits)
      : source_(source), limits_(limits) {}

  Status Walk(const YAML::Node& node, int depth) {
    if (++nodes_ > limits_.max_nodes) {
      return Status::InvalidArgument(
          YamlWhere(node, source_) + ": the document expands to more than " +
          std::to_string(limits_.max_nodes) +
          " values (counting every use of an alias); a workflow or recipe is far smaller: "
          "check anchors (&) and aliases (*) that refer to one another");
    }
    if (depth > limits_.max_depth) {
      return Status::InvalidArgument(YamlWhere(node, source_) + ": nesting is deeper than " +
                                     std::to_string(limits_.max_depth) +
                                     " levels of mappings and lists; flatten the document");
    }
    if (node.IsSequence()) {
      for (const auto& item : node) ATTUNE_RETURN_IF_ERROR(Walk(item, depth + 1));
    } else if (node.IsMap()) {
      std::map<std::string, YAML::Node> seen;
      for (const auto& kv : node) {
        if (kv.first.IsScalar()) {
          auto [it, inserted] = seen.emplace(kv.first.Scalar(), kv.first);
          if (!inserted) {
            return Status::InvalidArgument(
                YamlWhere(kv.first, source_) + ": duplicate key '" + kv.first.Scalar() +
                "' (first given " + PositionOf(it->second) + "); YAML keeps only one of them: remove one");
          }
        }
        ATTUNE_RETURN_IF_ERROR(Walk(kv.first, depth + 1));
        ATTUNE_RETURN_IF_ERROR(Walk(kv.second, depth + 1));
      }
    }
    return Status::Ok();
  }

 private:
  const std::string& source_;
  const YamlLimits& limits_;
  size_t nodes_ = 0;
};

// Counts the values of a document as the parser reads it, without building the tree: yaml-cpp's
// tree costs about half a kilobyte per value, so a 1 MB list of numbers would take 250 MB before
// any check could look at it. Throws TooManyValues past the limit.
struct TooManyValues {
  YAML::Mark mark;
};

class CountingHandler : public YAML::EventHandler {
 public:
  explicit CountingHandler(size_t limit) : limit_(limit) {}
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { Count(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { Count(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    Count(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Count(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Count(mark);
  }
  void OnMapEnd() override {}

 private:
  void Count(const YAML::Mark& mark) {
    if (++count_ > limit_) throw TooManyValues{mark};
  }
  size_t limit_;
  size_t count_ = 0;
};

// yaml-cpp's message for a tab in indentation does not say "tab"; this does.
std::string SyntaxHint(std::string_view text, const YAML::Mark& mark) {
  if (mark.line < 0) return "";
  size_t start = 0;
  for (int line = 0; line < mark.line && start != std::string_view::npos; ++line) {
    start = text.find('\n', start);
    if (start != std::string_view::npos) ++start;
  }
  if (start == std::string_view::npos) return "";
  // The error may be reported on the line after the tab; look at this line and the one before.
  size_t prev = start == 0 ? 0 : text.rfind('\n', start >= 2 ? start - 2 : 0);
  prev = (prev == std::string_view::npos || start == 0) ? 0 : prev + 1;
  for (size_t begin : {start, prev}) {
    for (size_t i = begin; i < text.size() && (text[i] == ' ' || text[i] == '\t'); ++i) {
      if (text[i] == '\t') {
        return " (a tab character indents this line; YAML indents with spaces only: replace the "
               "tab with spaces)";
      }
    }
  }
  return "";
}

}  // namespace

namespace {

bool IsOneOf(const std::string& s, std::initializer_list<const char*> words) {
  for (const char* w : words) {
    if (s == w) return true;
  }
  return false;
}

Result<nlohmann::json> ScalarToJson(const YAML::Node& node, const std::string& source) {
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") return nlohmann::json(s);  // quoted in the source: a string
  if (IsOneOf(s, {"true", "True", "TRUE"})) return nlohmann::json(true);
  if (IsOneOf(s, {"false", "False", "FALSE"})) return nlohmann::json(false);
  if (IsOneOf(s, {"null", "Null", "NULL", "~", ""})) return nlohmann::json(nullptr);
  long long i = 0;
  if (YAML::convert<long long>::decode(node, i)) return nlohmann::json(i);
  double d = 0;
  if (YAML::convert<double>::decode(node, d)) {
    if (!std::isfinite(d)) {
      return Status::InvalidArgument(YamlWhere(node, source) + ": '" + s +
                                     "' is not a finite number; give a finite value (or quote "
                                     "it to mean the text '" + s + "')");
    }
    return nlohmann::json(d);
  }
  return nlohmann::json(s);
}

}  // namespace

Result<nlohmann::json> YamlToJson(const YAML::Node& node, const std::string& source) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json j = nlohmann::json::object();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) {
          return Status::InvalidArgument(YamlWhere(kv.first, source) +
                                         ": a key must be plain text, not a mapping or list");
        }
        ATTUNE_ASSIGN_OR_RETURN(j[kv.first.Scalar()], YamlToJson(kv.second, source));
      }
      return j;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& item : node) {
        ATTUNE_ASSIGN_OR_RETURN(nlohmann::json value, YamlToJson(item, source));
        j.push_back(std::move(value));
      }
      return j;
    }
    case YAML::NodeType::Scalar:
      return ScalarToJson(node, source);
    default:
      return nlohmann::json(nullptr);
  }
}

Status CheckYamlTree(const YAML::Node& root, const std::string& source,
                     const YamlLimits& limits) {
  TreeChecker checker(source, limits);
  return checker.Walk(root, 0);
}

Result<YAML::Node> LoadYamlDocument(std::string_view text, const std::string& source,
                                    const std::string& what, const YamlLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return Status::InvalidArgument(source + ": " + std::to_string(text.size()) +
                                   " bytes is too large for " + what + " (at most " +
                                   std::to_string(limits.max_bytes) +
                                   " bytes); is this the right file?");
  }
  ATTUNE_RETURN_IF_ERROR(CheckYamlText(text, source, what));
  YAML::Node root;
  try {
    {
      std::istringstream in{std::string(text)};
      YAML::Parser parser(in);
      CountingHandler counter(limits.max_nodes);
      while (parser.HandleNextDocument(counter)) {
      }
    }
    root = YAML::Load(std::string(text));
  } catch (const TooManyValues& e) {
    return Status::InvalidArgument(
        YamlWhere(e.mark, source) + ": the document holds more than " +
        std::to_string(limits.max_nodes) + " values; a workflow or recipe is far smaller: is this "
        "the right file?");
  } catch (const YAML::DeepRecursion& e) {
    return Status::InvalidArgument(source + ":" + std::to_string(e.mark.line + 1) + ":" +
                                   std::to_string(e.mark.column + 1) + ": nesting is " +
                                   std::to_string(e.depth()) +
                                   " levels deep, too deep to read; flatten the document");
  } catch (const YAML::ParserException& e) {
    // yaml-cpp reports syntax errors by throwing; its mark gives line and column.
    return Status::InvalidArgument(source + ":" + std::to_string(e.mark.line + 1) + ":" +
                                   std::to_string(e.mark.column + 1) + ": YAML syntax: " + e.msg +
                                   SyntaxHint(text, e.mark));
  }
  ATTUNE_RETURN_IF_ERROR(CheckYamlTree(root, source, limits));
  return root;
}

}  // namespace attune
