// Copyright attune authors.
#include "attune/agentkit/shell_words.h"

#include <cctype>
#include <string>
#include <utility>

namespace attune::agentkit {
namespace {

constexpr int kMaxDepth = 16;

bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Characters that end an unquoted word.
bool IsMeta(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' ||
         c == ')' || c == '<' || c == '>';
}

bool IsAssignment(const Word& w) {
  auto eq = w.text.find('=');
  if (eq == std::string::npos || eq == 0 || !IsNameStart(w.text[0])) return false;
  for (size_t i = 1; i < eq; ++i) {
    if (!IsNameChar(w.text[i])) return false;
  }
  return true;
}

// Recursive-descent splitter over one script. Commands found at any depth are appended to `out`
// in the order their text ends, which keeps a substitution's commands beside their parent.
class Splitter {
 public:
  Splitter(std::string_view s, int depth, std::vector<SimpleCommand>* out)
      : s_(s), depth_(depth), out_(out) {}

  // Parses commands until `end` (')' or '\0' for the end of input). Leaves pos_ after `end`.
  Status ParseList(char end) {
    if (depth_ > kMaxDepth) return Error("commands are nested too deeply");
    SimpleCommand cmd;
    while (true) {
      SkipBlanks();
      if (AtEnd()) {
        if (end != '\0') return Error(std::string("expected '") + end + "' before the end");
        Finish(&cmd);
        return Status::Ok();
      }
      char c = s_[pos_];
      if (c == end && end == ')') {
        ++pos_;
        Finish(&cmd);
        return Status::Ok();
      }
      if (c == '#') {
        SkipComment();
        continue;
      }
      if (c == '\n' || c == ';' || c == '&' || c == '|') {
        ATTUNE_RETURN_IF_ERROR(Operator(&cmd));
        continue;
      }
      if (c == '<' || c == '>') {
        ATTUNE_RETURN_IF_ERROR(Redirection(&cmd, ""));
        continue;
      }
      if (c == '(') {
        ATTUNE_RETURN_IF_ERROR(Subshell(&cmd));
        continue;
      }
      if (c == ')') return Error("unexpected ')'");
      ATTUNE_RETURN_IF_ERROR(WordOrFdRedirect(&cmd));
    }
  }

  size_t pos() const { return pos_; }

 private:
  bool AtEnd() const { return pos_ >= s_.size(); }
  char Peek(size_t ahead = 0) const { return pos_ + ahead < s_.size() ? s_[pos_ + ahead] : '\0'; }

  Status Error(const std::string& what) const {
    return Status::InvalidArgument("shell syntax at offset " + std::to_string(pos_) + ": " + what);
  }

  void SkipBlanks() {
    while (!AtEnd()) {
      if (s_[pos_] == ' ' || s_[pos_] == '\t') {
        ++pos_;
      } else if (s_[pos_] == '\\' && Peek(1) == '\n') {
        pos_ += 2;  // a line continuation is not a separator
      } else {
        break;
      }
    }
  }

  void SkipComment() {
    while (!AtEnd() && s_[pos_] != '\n') ++pos_;
  }

  void Finish(SimpleCommand* cmd) {
    if (!cmd->argv.empty() || !cmd->assignments.empty() || !cmd->redirects.empty()) {
      out_->push_back(std::move(*cmd));
    }
    *cmd = SimpleCommand();
  }

  // ; & && || | |& and newline all end the current simple command; the guard judges each
  // command on its own, so which operator it was does not matter.
  Status Operator(SimpleCommand* cmd) {
    char c = s_[pos_];
    if (c == '&' && Peek(1) == '>') return Redirection(cmd, "");
    ++pos_;
    if ((c == '&' || c == '|' || c == ';') && Peek() == c) ++pos_;
    if (c == '|' && Peek() == '&') ++pos_;
    Finish(cmd);
    return Status::Ok();
  }

  Status Subshell(SimpleCommand* cmd) {
    if (!cmd->argv.empty()) return Error("unexpected '(' (function definitions are not supported)");
    ++pos_;
    Finish(cmd);
    Splitter inner(s_.substr(pos_), depth_ + 1, out_);
    ATTUNE_RETURN_IF_ERROR(inner.ParseList(')').WithContext("in a subshell"));
    pos_ += inner.pos();
    return Status::Ok();
  }

  // A word; digits directly followed by < or > are the file descriptor of a redirection.
  Status WordOrFdRedirect(SimpleCommand* cmd) {
    size_t start = pos_;
    Word w;
    ATTUNE_RETURN_IF_ERROR(ReadWord(&w));
    bool all_digits = pos_ > start;
    for (size_t i = start; i < pos_; ++i)
      all_digits = all_digits && std::isdigit(static_cast<unsigned char>(s_[i]));
    if (all_digits && (Peek() == '<' || Peek() == '>')) return Redirection(cmd, w.text);
    if (cmd->argv.empty() && IsAssignment(w)) {
      cmd->assignments.push_back(std::move(w));
    } else {
      cmd->argv.push_back(std::move(w));
    }
    return Status::Ok();
  }

  Status Redirection(SimpleCommand* cmd, const std::string& fd) {
    std::string op;
    if (Peek() == '<' && Peek(1) == '(') return ProcessSubstitutionWord(cmd);
    if (Peek() == '>' && Peek(1) == '(') return ProcessSubstitutionWord(cmd);
    static const char* kOps[] = {"&>>", "<<<", "&>", ">>", ">|", ">&", "<&", "<>", "<<", ">", "<"};
    for (const char* candidate : kOps) {
      if (s_.substr(pos_).starts_with(candidate)) {
        op = candidate;
        break;
      }
    }
    if (op == "<<")
      return Error("here-documents (<<) are not supported; pass the text another way");
    pos_ += op.size();
    SkipBlanks();
    if (AtEnd() || IsMeta(Peek())) return Error("redirection '" + fd + op + "' has no target");
    Redirect r;
    r.op = op;
    ATTUNE_RETURN_IF_ERROR(ReadWord(&r.target));
    cmd->redirects.push_back(std::move(r));
    return Status::Ok();
  }

  // <(cmd) and >(cmd) are words (a path to a pipe) whose command runs on its own.
  Status ProcessSubstitutionWord(SimpleCommand* cmd) {
    char kind = s_[pos_];
    pos_ += 2;
    Splitter inner(s_.substr(pos_), depth_ + 1, out_);
    ATTUNE_RETURN_IF_ERROR(inner.ParseList(')').WithContext("in a process substitution"));
    pos_ += inner.pos();
    Word w{"<(...)", true};
    w.text[0] = kind;
    cmd->argv.push_back(std::move(w));
    return Status::Ok();
  }

  // Reads one word up to an unquoted metacharacter.
  Status ReadWord(Word* w) {
    while (!AtEnd() && !IsMeta(s_[pos_])) {
      char c = s_[pos_];
      if (c == '\\') {
        ATTUNE_RETURN_IF_ERROR(Backslash(w));
      } else if (c == '\'') {
        ATTUNE_RETURN_IF_ERROR(SingleQuoted(w));
      } else if (c == '"') {
        ATTUNE_RETURN_IF_ERROR(DoubleQuoted(w));
      } else if (c == '$') {
        ATTUNE_RETURN_IF_ERROR(Dollar(w, false));
      } else if (c == '`') {
        ATTUNE_RETURN_IF_ERROR(Backtick(w));
      } else {
        w->text += c;
        ++pos_;
      }
    }
    return Status::Ok();
  }

  Status Backslash(Word* w) {
    if (pos_ + 1 >= s_.size()) return Error("a trailing backslash escapes nothing");
    if (s_[pos_ + 1] != '\n') w->text += s_[pos_ + 1];
    pos_ += 2;
    return Status::Ok();
  }

  Status SingleQuoted(Word* w) {
    auto close = s_.find('\'', pos_ + 1);
    if (close == std::string_view::npos) return Error("unterminated single quote");
    w->text.append(s_.substr(pos_ + 1, close - pos_ - 1));
    pos_ = close + 1;
    return Status::Ok();
  }

  Status DoubleQuoted(Word* w) {
    ++pos_;
    while (true) {
      if (AtEnd()) return Error("unterminated double quote");
      char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return Status::Ok();
      }
      if (c == '\\') {
        char n = Peek(1);
        if (n == '$' || n == '`' || n == '"' || n == '\\') {
          w->text += n;
        } else if (n != '\n') {
          w->text += c;
          w->text += n;
        }
        pos_ += 2;
      } else if (c == '$') {
        ATTUNE_RETURN_IF_ERROR(Dollar(w, true));
      } else if (c == '`') {
        ATTUNE_RETURN_IF_ERROR(Backtick(w));
      } else {
        w->text += c;
        ++pos_;
      }
    }
  }

  Status Dollar(Word* w, bool in_double_quotes) {
    char n = Peek(1);
    if (n == '(' && Peek(2) == '(') return Arithmetic(w);
    if (n == '(') return CommandSubstitution(w);
    if (n == '{') return Braced(w);
    if (n == '\'' && !in_double_quotes) return AnsiCQuoted(w);
    if (IsNameStart(n)) {
      size_t end = pos_ + 1;
      while (end < s_.size() && IsNameChar(s_[end])) ++end;
      w->text.append(s_.substr(pos_, end - pos_));
      w->dynamic = true;
      pos_ = end;
      return Status::Ok();
    }
    if (n != '\0' && std::string_view("@*#?$!-0123456789").find(n) != std::string_view::npos) {
      w->text.append(s_.substr(pos_, 2));
      w->dynamic = true;
      pos_ += 2;
      return Status::Ok();
    }
    w->text += '$';
    ++pos_;
    return Status::Ok();
  }

  Status CommandSubstitution(Word* w) {
    pos_ += 2;
    Splitter inner(s_.substr(pos_), depth_ + 1, out_);
    ATTUNE_RETURN_IF_ERROR(inner.ParseList(')').WithContext("in $(...)"));
    pos_ += inner.pos();
    w->text += "$(...)";
    w->dynamic = true;
    return Status::Ok();
  }

  // $((...)) and ${...}: skipped to their matching close; their value is unknown.
  // $((expr)) is arithmetic only when it closes with "))"; `$((cmd) )` is a command substitution
  // of a subshell, whose command must be checked like any other.
  Status Arithmetic(Word* w) {
    int depth = 0;
    for (size_t i = pos_ + 3; i < s_.size(); ++i) {
      char c = s_[i];
      if (c == '(') ++depth;
      if (c != ')') continue;
      if (depth > 0) {
        --depth;
        continue;
      }
      if (i + 1 >= s_.size() || s_[i + 1] != ')') return CommandSubstitution(w);
      std::string_view expr = s_.substr(pos_ + 3, i - pos_ - 3);
      if (expr.find("$(") != std::string_view::npos || expr.find('`') != std::string_view::npos) {
        return Error("command substitution inside $((...)) is not supported");
      }
      pos_ = i + 2;
      w->text += "$((...))";
      w->dynamic = true;
      return Status::Ok();
    }
    return Error("unterminated $((...))");
  }
  Status Braced(Word* w) { return SkipBalanced(w, '{', '}', 1, "${...}"); }

  Status SkipBalanced(Word* w, char open, char close, size_t skip_prefix, const char* shown) {
    size_t i = pos_ + skip_prefix;
    int depth = 0;
    for (; i < s_.size(); ++i) {
      if (s_[i] == open) ++depth;
      if (s_[i] == close && --depth == 0) break;
    }
    if (i >= s_.size()) return Error(std::string("unterminated ") + shown);
    pos_ = i + 1;
    w->text += shown;
    w->dynamic = true;
    return Status::Ok();
  }

  Status AnsiCQuoted(Word* w) {
    size_t i = pos_ + 2;
    for (; i < s_.size() && s_[i] != '\''; ++i) {
      if (s_[i] != '\\' || i + 1 >= s_.size()) {
        w->text += s_[i];
        continue;
      }
      char e = s_[++i];
      switch (e) {
        case 'n':
          w->text += '\n';
          break;
        case 't':
          w->text += '\t';
          break;
        case '\\':
          w->text += '\\';
          break;
        case '\'':
          w->text += '\'';
          break;
        case '"':
          w->text += '"';
          break;
        default:
          // Octal, hex and unicode escapes could spell anything: the value is unknown.
          w->text += '\\';
          w->text += e;
          w->dynamic = true;
      }
    }
    if (i >= s_.size()) return Error("unterminated $'...'");
    pos_ = i + 1;
    return Status::Ok();
  }

  Status Backtick(Word* w) {
    std::string inner;
    size_t i = pos_ + 1;
    for (; i < s_.size() && s_[i] != '`'; ++i) {
      if (s_[i] == '\\' && i + 1 < s_.size() &&
          (s_[i + 1] == '`' || s_[i + 1] == '\\' || s_[i + 1] == '$')) {
        ++i;
      }
      inner += s_[i];
    }
    if (i >= s_.size()) return Error("unterminated backquote");
    Splitter sub(inner, depth_ + 1, out_);
    ATTUNE_RETURN_IF_ERROR(sub.ParseList('\0').WithContext("in `...`"));
    pos_ = i + 1;
    w->text += "`...`";
    w->dynamic = true;
    return Status::Ok();
  }

  std::string_view s_;
  int depth_;
  std::vector<SimpleCommand>* out_;
  size_t pos_ = 0;
};

}  // namespace

Result<std::vector<SimpleCommand>> SplitCommands(std::string_view script) {
  std::vector<SimpleCommand> out;
  Splitter splitter(script, 0, &out);
  ATTUNE_RETURN_IF_ERROR(splitter.ParseList('\0'));
  return out;
}

std::vector<std::vector<std::string>> ArgvTexts(const std::vector<SimpleCommand>& commands) {
  std::vector<std::vector<std::string>> out;
  for (const auto& c : commands) {
    std::vector<std::string> argv;
    for (const auto& w : c.argv) argv.push_back(w.text);
    out.push_back(std::move(argv));
  }
  return out;
}

}  // namespace attune::agentkit
