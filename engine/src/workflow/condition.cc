// The `if:` expression language: a tokenizer and a recursive-descent evaluator over JSON values.
//   expr    := or
//   or      := and ("||" and)*
//   and     := unary ("&&" unary)*
//   unary   := "!" unary | compare
//   compare := primary (("=="|"!="|"<"|"<="|">"|">=") primary)?
//   primary := number | 'string' | "string" | true | false | name | "(" expr ")"
// Truthiness: false, 0, "" and null are false.
#include <cctype>

#include "attune/support/names.h"
#include "workflow/workflow.h"

namespace attune {
namespace {

using Json = nlohmann::json;

struct Token {
  enum Kind { kEnd, kNumber, kString, kName, kOp } kind = kEnd;
  std::string text;
  size_t pos = 0;
};

Result<std::vector<Token>> Tokenize(const std::string& s) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) { ++i; continue; }
    size_t start = i;
    if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && i + 1 < s.size())) {
      while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' ||
                              s[i] == 'e' || s[i] == 'E')) ++i;
      out.push_back({Token::kNumber, s.substr(start, i - start), start});
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_' ||
                              s[i] == '.')) ++i;
      out.push_back({Token::kName, s.substr(start, i - start), start});
    } else if (c == '\'' || c == '"') {
      size_t end = s.find(c, i + 1);
      if (end == std::string::npos) {
        return Status::InvalidArgument("unterminated string starting at column " +
                                       std::to_string(start + 1));
      }
      out.push_back({Token::kString, s.substr(i + 1, end - i - 1), start});
      i = end + 1;
    } else {
      static const char* kOps[] = {"==", "!=", "<=", ">=", "&&", "||", "<", ">", "!", "(", ")"};
      bool matched = false;
      for (const char* op : kOps) {
        std::string o(op);
        if (s.compare(i, o.size(), o) == 0) {
          out.push_back({Token::kOp, o, start});
          i += o.size();
          matched = true;
          break;
        }
      }
      if (!matched) {
        return Status::InvalidArgument("unexpected '" + std::string(1, c) + "' at column " +
                                       std::to_string(start + 1));
      }
    }
  }
  out.push_back({Token::kEnd, "", s.size()});
  return out;
}

bool Truthy(const Json& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) return v.get<double>() != 0;
  if (v.is_string()) return !v.get<std::string>().empty();
  return !v.is_null();
}

class Evaluator {
 public:
  Evaluator(std::vector<Token> tokens, const std::map<std::string, Json>* values)
      : tokens_(std::move(tokens)), values_(values) {}

  Result<Json> Parse() {
    ATTUNE_ASSIGN_OR_RETURN(Json v, Or());
    if (Peek().kind != Token::kEnd) return Unexpected();
    return v;
  }

 private:
  const Token& Peek() const { return tokens_[pos_]; }
  bool Accept(const std::string& op) {
    if (Peek().kind == Token::kOp && Peek().text == op) {
      ++pos_;
      return true;
    }
    return false;
  }
  Status Unexpected() const {
    const Token& t = Peek();
    return Status::InvalidArgument(
        (t.kind == Token::kEnd ? std::string("unexpected end of expression")
                               : "unexpected '" + t.text + "'") +
        " at column " + std::to_string(t.pos + 1));
  }

  Result<Json> Or() {
    ATTUNE_ASSIGN_OR_RETURN(Json left, And());
    while (Accept("||")) {
      ATTUNE_ASSIGN_OR_RETURN(Json right, And());
      left = Truthy(left) || Truthy(right);
    }
    return left;
  }

  Result<Json> And() {
    ATTUNE_ASSIGN_OR_RETURN(Json left, Unary());
    while (Accept("&&")) {
      ATTUNE_ASSIGN_OR_RETURN(Json right, Unary());
      left = Truthy(left) && Truthy(right);
    }
    return left;
  }

  Result<Json> Unary() {
    if (Accept("!")) {
      ATTUNE_ASSIGN_OR_RETURN(Json v, Unary());
      return Json(!Truthy(v));
    }
    return Compare();
  }

  Result<Json> Compare() {
    ATTUNE_ASSIGN_OR_RETURN(Json left, Primary());
    for (const char* op : {"==", "!=", "<=", ">=", "<", ">"}) {
      if (!Accept(op)) continue;
      ATTUNE_ASSIGN_OR_RETURN(Json right, Primary());
      return Apply(op, left, right);
    }
    return left;
  }

  static Json Apply(const std::string& op, const Json& a, const Json& b) {
    if (op == "==") return a == b;
    if (op == "!=") return a != b;
    bool comparable = (a.is_number() && b.is_number()) || (a.is_string() && b.is_string());
    if (!comparable) return false;
    if (op == "<") return a < b;
    if (op == "<=") return a <= b;
    if (op == ">") return a > b;
    return a >= b;
  }

  Result<Json> Primary() {
    Token t = Peek();
    if (Accept("(")) {
      ATTUNE_ASSIGN_OR_RETURN(Json v, Or());
      if (!Accept(")")) return Unexpected();
      return v;
    }
    if (t.kind == Token::kNumber) {
      ++pos_;
      try {
        return Json(std::stod(t.text));
      } catch (const std::exception&) {
        // std::stod reports a malformed number by throwing.
        return Status::InvalidArgument("bad number '" + t.text + "' at column " +
                                       std::to_string(t.pos + 1));
      }
    }
    if (t.kind == Token::kString) {
      ++pos_;
      return Json(t.text);
    }
    if (t.kind == Token::kName) {
      ++pos_;
      return Name(t);
    }
    return Unexpected();
  }

  Result<Json> Name(const Token& t) {
    if (t.text == "true") return Json(true);
    if (t.text == "false") return Json(false);
    if (values_ == nullptr) return Json(nullptr);  // syntax check only
    auto it = values_->find(t.text);
    if (it != values_->end()) return it->second;
    std::string known;
    for (const auto& [name, value] : *values_) known += (known.empty() ? "" : ", ") + name;
    return Status::InvalidArgument("unknown name '" + t.text + "' at column " +
                                   std::to_string(t.pos + 1) + "; known names: " +
                                   (known.empty() ? "none" : known));
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  const std::map<std::string, Json>* values_;
};

}  // namespace

Result<bool> EvaluateCondition(const std::string& expr, const std::map<std::string, Json>& values) {
  ATTUNE_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(expr));
  Evaluator evaluator(std::move(tokens), &values);
  ATTUNE_ASSIGN_OR_RETURN(Json v, evaluator.Parse());
  return Truthy(v);
}

Status CheckCondition(const std::string& expr, const std::set<std::string>& names) {
  ATTUNE_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(expr));
  if (!names.empty()) {
    // Every name must be one the engine defines; a misspelt one would otherwise only fail when
    // the step is reached, after the steps before it have spent their budget.
    // (Keywords true/false are literals, not names.)
    std::vector<std::string> known(names.begin(), names.end());
    for (const Token& t : tokens) {
      if (t.kind != Token::kName || t.text == "true" || t.text == "false" || names.count(t.text)) {
        continue;
      }
      std::string nearest = support::NearestName(t.text, known);
      std::string list;
      for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
      return Status::InvalidArgument("unknown name '" + t.text + "'" +
                                     (nearest.empty() ? "" : " (did you mean '" + nearest + "'?)") +
                                     "; conditions may use: " + list);
    }
  }
  Evaluator evaluator(std::move(tokens), nullptr);
  return evaluator.Parse().status();
}

}  // namespace attune
