// Copyright attune authors.
//
// The read-only allow-list for plain programs. Kept apart from kubectl/helm/attune rules because
// it is the list people extend.
#include <algorithm>
#include <cctype>
#include <set>
#include <string>

#include "guard_rules.h"

namespace attune::agentkit {
namespace {

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// Programs that only read (files, the cluster's queue, the GPUs) whatever their arguments.
const std::set<std::string> kReadOnly = {
    "ls",       "cat",    "head",   "tail",    "grep",      "egrep",    "fgrep",   "rg",
    "wc",       "jq",     "squeue", "sacct",   "sinfo",     "sstat",    "sprio",   "sshare",
    "stat",     "file",   "du",     "df",      "pwd",       "echo",     "printf",  "date",
    "uniq",     "cut",    "tr",     "diff",    "cmp",       "basename", "dirname", "realpath",
    "readlink", "true",   "false",  "tree",    "zcat",      "zgrep",    "column",  "nl",
    "tac",      "seq",    "which",  "whoami",  "hostname",  "uname",    "nproc",   "free",
    "uptime",   "id",     "test",   "[",       "sha256sum", "md5sum",   "comm",    "paste",
    "fold",     "expand", "od",     "hexdump", "xxd",       "strings",  "cd",      "type",
    "ps",       "numfmt", "yq"};

// Programs that write or delete files: denied, with the event-log reason when they aim there.
const std::set<std::string> kWriters = {"rm",     "mv",    "cp",    "touch",   "truncate",
                                        "dd",     "tee",   "ln",    "chmod",   "chown",
                                        "rmdir",  "mkdir", "shred", "install", "rsync",
                                        "unlink", "patch", "split", "sqlite3", "ldb"};

bool AnyArg(const CommandCall& call, bool (*pred)(const std::string&)) {
  return std::any_of(call.args.begin(), call.args.end(),
                     [&](const Word& w) { return pred(w.text); });
}

// sed is read-only unless it edits in place or its script writes (w, W) or executes (e).
GuardDecision JudgeSed(const CommandCall& call) {
  if (AnyArg(call, [](const std::string& a) {
        return StartsWith(a, "-i") || StartsWith(a, "--in-place") ||
               (StartsWith(a, "-") && !StartsWith(a, "--") && a.find('i') != std::string::npos);
      })) {
    return Deny("'sed -i' edits files in place; the agent is read-only");
  }
  for (const Word& w : call.args) {
    if (StartsWith(w.text, "-")) continue;
    bool simple = std::all_of(w.text.begin(), w.text.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) || c == ',' || c == '$' || c == 'p' ||
             c == ';' || c == 'q' || c == 'd' || c == ' ';
    });
    if (!simple || w.dynamic) {
      return Deny(
          "only line-range sed scripts such as 'sed -n 10,20p FILE' are allowed (sed "
          "scripts can write files); use head, tail or grep");
    }
    break;  // the first non-option word is the script; the rest are files
  }
  return Allow();
}

GuardDecision JudgeSort(const CommandCall& call) {
  if (AnyArg(call, [](const std::string& a) {
        return a == "-o" || StartsWith(a, "--output") ||
               (StartsWith(a, "-") && !StartsWith(a, "--") && a.find('o') != std::string::npos);
      })) {
    return Deny("'sort -o' writes a file; the agent is read-only");
  }
  return Allow();
}

// nvidia-smi: queries only. Reset, persistence mode, clocks, power limits and compute modes change
// the machine.
GuardDecision JudgeNvidiaSmi(const CommandCall& call) {
  static const std::set<std::string> kSubcommands = {"topo", "dmon", "pmon", "nvlink"};
  if (!call.args.empty() && kSubcommands.count(call.args[0].text)) return Allow();
  static const std::set<std::string> kFlags = {
      "-q",   "--query",   "-L", "--list-gpus", "-x", "--xml-format",
      "-i",   "--id",      "-d", "--display",   "-l", "--loop",
      "-lms", "--loop-ms", "-f", "--filename",  "-u", "--unit"};
  static const std::set<std::string> kValued = {"-i", "-d", "-l", "-lms", "-f"};
  for (size_t i = 0; i < call.args.size(); ++i) {
    const std::string& a = call.args[i].text;
    std::string name = a.substr(0, a.find('='));
    bool query = StartsWith(a, "--query-") || StartsWith(a, "--format=") || kFlags.count(name);
    if (!query) {
      return Deny("'nvidia-smi " + a +
                  "' is not a query; only inspection (-q, -L, "
                  "--query-gpu=..., topo, dmon) is allowed");
    }
    if (name == "-f" || name == "--filename") return Deny("'nvidia-smi -f' writes a file");
    if (kValued.count(a) && i + 1 < call.args.size()) ++i;
  }
  return Allow();
}

GuardDecision JudgeScontrol(const CommandCall& call) {
  if (!call.args.empty() && (call.args[0].text == "show" || call.args[0].text == "-d")) {
    return Allow();
  }
  return Deny("only 'scontrol show ...' is allowed; the engine's launcher owns the jobs");
}

GuardDecision JudgeWriter(const GuardConfig& config, const CommandCall& call,
                          const std::string& cwd) {
  for (const Word& w : call.args) {
    if (StartsWith(w.text, "-")) continue;
    std::string v = EventLogViolation(config, w.text, cwd);
    if (!v.empty()) return Deny("'" + call.program + "': " + v);
  }
  return Deny("'" + call.program +
              "' changes files; the agent is read-only (it inspects, then "
              "answers with a JSON proposal)");
}

}  // namespace

GuardDecision JudgeProgram(const GuardConfig& config, const CommandCall& call,
                           const std::string& cwd) {
  const std::string& p = call.program;
  if (kReadOnly.count(p)) return Allow();
  if (p == "sed") return JudgeSed(call);
  if (p == "sort") return JudgeSort(call);
  if (p == "nvidia-smi") return JudgeNvidiaSmi(call);
  if (p == "scontrol") return JudgeScontrol(call);
  if (kWriters.count(p)) return JudgeWriter(config, call, cwd);
  return Deny("'" + p +
              "' is not on the allow-list. Allowed: read-only inspection (ls, cat, "
              "head, tail, grep, wc, jq, nvidia-smi, squeue, sacct, ...), kubectl/helm read-only "
              "in the campaign's namespace, and attune status|events|stack show|log parse|log "
              "triage|gate check|recipe import");
}

}  // namespace attune::agentkit
