// Copyright attune authors.
#include "attune/agentkit/shell_words.h"

#include <catch2/catch.hpp>

using attune::agentkit::ArgvTexts;
using attune::agentkit::SplitCommands;
using Argvs = std::vector<std::vector<std::string>>;

namespace {

Argvs Split(const std::string& s) {
  auto r = SplitCommands(s);
  REQUIRE(r.ok());
  return ArgvTexts(*r);
}

}  // namespace

TEST_CASE("plain words are split on blanks", "[agentkit][shell]") {
  CHECK(Split("ls -la  /tmp\t x") == Argvs{{"ls", "-la", "/tmp", "x"}});
}

TEST_CASE("quotes group words and are removed", "[agentkit][shell]") {
  CHECK(Split(R"(echo 'a b' "c d" e\ f)") == Argvs{{"echo", "a b", "c d", "e f"}});
  CHECK(Split(R"(echo "it's" 'say "hi"')") == Argvs{{"echo", "it's", "say \"hi\""}});
  CHECK(Split(R"(echo a"b"'c'd)") == Argvs{{"echo", "abcd"}});
  CHECK(Split(R"(echo "")") == Argvs{{"echo", ""}});
}

TEST_CASE("backslashes escape inside double quotes only before special characters",
          "[agentkit][shell]") {
  CHECK(Split(R"(echo "a\"b" "c\d" "\$x")") == Argvs{{"echo", "a\"b", "c\\d", "$x"}});
}

TEST_CASE("ANSI-C quoting decodes simple escapes", "[agentkit][shell]") {
  CHECK(Split(R"(echo $'a\nb' $'it\'s')") == Argvs{{"echo", "a\nb", "it's"}});
}

TEST_CASE("list and pipeline operators separate commands", "[agentkit][shell]") {
  CHECK(Split("a; b && c || d | e |& f & g\nh") ==
        Argvs{{"a"}, {"b"}, {"c"}, {"d"}, {"e"}, {"f"}, {"g"}, {"h"}});
  CHECK(Split("a;b&&c") == Argvs{{"a"}, {"b"}, {"c"}});
}

TEST_CASE("operators inside quotes are literal", "[agentkit][shell]") {
  CHECK(Split("echo 'a; b && c' \"|\"") == Argvs{{"echo", "a; b && c", "|"}});
}

TEST_CASE("comments and line continuations", "[agentkit][shell]") {
  CHECK(Split("ls # rm -rf /\necho x") == Argvs{{"ls"}, {"echo", "x"}});
  CHECK(Split("echo a#b") == Argvs{{"echo", "a#b"}});
  CHECK(Split("kubectl get \\\n pods") == Argvs{{"kubectl", "get", "pods"}});
}

TEST_CASE("command substitutions are split as commands of their own", "[agentkit][shell]") {
  auto r = SplitCommands("echo $(kubectl get pods -A) `rm x` \"$(helm ls)\"");
  REQUIRE(r.ok());
  auto argvs = ArgvTexts(*r);
  CHECK(argvs == Argvs{{"kubectl", "get", "pods", "-A"},
                       {"rm", "x"},
                       {"helm", "ls"},
                       {"echo", "$(...)", "`...`", "$(...)"}});
  CHECK(r->back().argv[1].dynamic);
  CHECK_FALSE(r->back().argv[0].dynamic);
}

TEST_CASE("nested substitutions and subshells", "[agentkit][shell]") {
  CHECK(Split("(cd /x && ls); echo $(echo $(whoami))") ==
        Argvs{{"cd", "/x"}, {"ls"}, {"whoami"}, {"echo", "$(...)"}, {"echo", "$(...)"}});
}

TEST_CASE("variables and arithmetic make a word dynamic", "[agentkit][shell]") {
  auto r = SplitCommands("kubectl -n $NS get pods ${X} $((1+2)) plain");
  REQUIRE(r.ok());
  const auto& argv = (*r)[0].argv;
  REQUIRE(argv.size() == 8);
  CHECK(argv[2].dynamic);
  CHECK(argv[5].dynamic);
  CHECK(argv[6].dynamic);
  CHECK_FALSE(argv[3].dynamic);
  CHECK_FALSE(argv[7].dynamic);
  CHECK_FALSE(SplitCommands("echo '$HOME'")->at(0).argv[1].dynamic);
}

TEST_CASE("assignments before the command name are separated", "[agentkit][shell]") {
  auto r = SplitCommands("KUBECONFIG=/x A=1 kubectl get pods B=2");
  REQUIRE(r.ok());
  REQUIRE((*r)[0].assignments.size() == 2);
  CHECK((*r)[0].assignments[0].text == "KUBECONFIG=/x");
  CHECK(ArgvTexts(*r) == Argvs{{"kubectl", "get", "pods", "B=2"}});
}

TEST_CASE("redirections are recorded with their targets", "[agentkit][shell]") {
  auto r = SplitCommands("cat a >out 2>>err <in &>both 2>&1 >| clob");
  REQUIRE(r.ok());
  const auto& c = (*r)[0];
  CHECK(ArgvTexts(*r) == Argvs{{"cat", "a"}});
  REQUIRE(c.redirects.size() == 6);
  CHECK(c.redirects[0].op == ">");
  CHECK(c.redirects[0].target.text == "out");
  CHECK(c.redirects[1].op == ">>");
  CHECK(c.redirects[2].op == "<");
  CHECK(c.redirects[3].op == "&>");
  CHECK(c.redirects[4].op == ">&");
  CHECK(c.redirects[4].target.text == "1");
  CHECK(c.redirects[5].op == ">|");
}

TEST_CASE("a quoted redirection target keeps its spaces", "[agentkit][shell]") {
  auto r = SplitCommands("echo x > \"a dir/f\"");
  REQUIRE(r.ok());
  CHECK((*r)[0].redirects.at(0).target.text == "a dir/f");
}

TEST_CASE("process substitution runs its own command", "[agentkit][shell]") {
  CHECK(Split("diff <(ls a) <(kubectl get pods)") ==
        Argvs{{"ls", "a"}, {"kubectl", "get", "pods"}, {"diff", "<(...)", "<(...)"}});
}

TEST_CASE("malformed input is refused with the offset", "[agentkit][shell]") {
  for (const char* bad : {"echo 'open", "echo \"open", "echo $(ls", "echo `ls", "echo \\",
                          "cat <<EOF\nx\nEOF", "ls )", "echo ${x", "cat >"}) {
    auto r = SplitCommands(bad);
    INFO(bad);
    CHECK_FALSE(r.ok());
    if (!r.ok()) CHECK(r.status().message().find("offset") != std::string::npos);
  }
}

TEST_CASE("deep nesting is refused", "[agentkit][shell]") {
  std::string s = "ls";
  for (int i = 0; i < 20; ++i) s = "echo $(" + s + ")";
  CHECK_FALSE(SplitCommands(s).ok());
}

TEST_CASE("$((cmd) ) is a command substitution, $((expr)) arithmetic", "[agentkit][shell]") {
  CHECK(Split("echo $((kubectl get pods -A) )") ==
        Argvs{{"kubectl", "get", "pods", "-A"}, {"echo", "$(...)"}});
  CHECK(Split("echo $((1 + (2 * 3)))") == Argvs{{"echo", "$((...))"}});
  CHECK_FALSE(SplitCommands("echo $(( $(kubectl get pods -A | wc -l) + 1 ))").ok());
}
