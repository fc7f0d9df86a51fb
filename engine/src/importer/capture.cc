// Copyright attune authors.
#include "importer/capture.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "attune/support/process.h"
#include "importer/capture_stub.h"

namespace attune::importer {
namespace {

namespace fs = std::filesystem;

// Variables the shell or the stub set by themselves: never part of a recipe.
const std::set<std::string> kShellVariables = {"PWD", "OLDPWD", "SHLVL", "_", "ATTUNE_CAPTURE_DIR",
                                                "ATTUNE_IMPORT_GPUS", "ATTUNE_IMPORT_WRAPPER", "ATTUNE_REAL_PYTHON",
                                                "ATTUNE_IMPORT_NOUNSET", "SLURM_JOB_ID",
                                                // the allocation a batch script is told of
                                                "SLURM_JOB_NUM_NODES", "SLURM_NNODES", "SLURM_SUBMIT_DIR",
                                                "SLURM_JOB_NAME", "SLURM_JOB_NODELIST", "SLURM_NODELIST",
                                                "SLURM_NTASKS_PER_NODE", "SLURM_NTASKS", "SLURM_NPROCS",
                                                "SLURM_GPUS_PER_NODE", "SLURM_GPUS_ON_NODE",
                                                "SLURM_CPUS_PER_TASK", "SLURM_JOB_PARTITION",
                                                "SLURM_JOB_ACCOUNT",
                                                // per-task values a wrapper's shell sees
                                                "SLURM_PROCID", "SLURM_NODEID", "SLURM_LOCALID",
                                                "OMPI_COMM_WORLD_RANK", "PMI_RANK"};

// Folders whose stubbed programs are covered by a stub mounted over them, so that an absolute
// path (/usr/bin/python3) is recorded as well.
const std::vector<std::string> kBinDirs = {"/usr/local/bin", "/usr/local/sbin", "/usr/bin",
                                           "/usr/sbin", "/bin", "/sbin", "/opt/conda/bin"};

// A scratch folder removed with everything in it when the capture ends.
class Scratch {
 public:
  static Result<Scratch> Make() {
    std::string pattern = (fs::temp_directory_path() / "attune-import-XXXXXX").string();
    if (!mkdtemp(pattern.data())) {
      return Status::IoError("cannot create a scratch folder under " +
                             fs::temp_directory_path().string());
    }
    return Scratch(pattern);
  }
  Scratch(Scratch&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  Scratch(const Scratch&) = delete;
  ~Scratch() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  explicit Scratch(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

Status WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Status::IoError("cannot write " + path.string());
  return Status::Ok();
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> SplitNul(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\0', start);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

Status InstallStubs(const fs::path& bin, const fs::path& stub) {
  std::error_code ec;
  fs::create_directories(bin, ec);
  if (ec) return Status::IoError("cannot create " + bin.string() + ": " + ec.message());
  ATTUNE_RETURN_IF_ERROR(WriteFile(stub, kCaptureStub));
  fs::permissions(stub, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec, ec);
  for (const auto* names : {&StubbedCommands(), &FileCommands()}) {
    for (const auto& name : *names) {
      fs::create_symlink(stub, bin / name, ec);
      if (ec) return Status::IoError("cannot create the stub " + (bin / name).string() + ": " + ec.message());
    }
  }
  return Status::Ok();
}

bool UnderTmp(const std::string& path) {
  for (const char* tmp : {"/tmp", "/var/tmp"}) {
    std::string prefix = std::string(tmp) + "/";
    if (path == tmp || path.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// A folder the script may write into, as a scratch copy bound over it: `path` as the script sees
// it, `copy` where the copy lies.
struct WritableCopy {
  std::string path;
  std::string copy;
};

std::vector<std::string> SandboxArgv(const CaptureOptions& o, const std::string& scratch,
                                     const std::string& stub, const std::string& script_dir,
                                     const std::string& cwd, const std::vector<WritableCopy>& writable,
                                     const std::string& real_python) {
  std::vector<std::string> argv = {o.bwrap, "--die-with-parent", "--new-session", "--unshare-all",
                                   "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                                   "--tmpfs", "/tmp", "--tmpfs", "/var/tmp",
                                   "--bind", scratch, scratch};
  std::set<std::string> shown;
  for (const auto& dir : {script_dir, cwd}) {
    if (UnderTmp(dir) && shown.insert(dir).second && dir.rfind(scratch, 0) != 0) {
      argv.insert(argv.end(), {"--ro-bind", dir, dir});
    }
  }
  // Paths the user gave (--arg, --env) under the private /tmp: shown read-only as they are, since
  // a script checks that its checkpoint or data folder exists before it launches.
  std::vector<std::string> given = o.args;
  for (const auto& [name, value] : o.env) given.push_back(value);
  std::error_code ec;
  for (const auto& path : given) {
    // Only a plain path strictly inside /tmp or /var/tmp that neither holds nor lies in the
    // scratch folder (binding /tmp itself would hide the sandbox's own folders).
    if (!UnderTmp(path) || path == "/tmp" || path == "/var/tmp" ||
        fs::path(path).lexically_normal().string() != path || path.rfind(scratch, 0) == 0 ||
        scratch.rfind(path + "/", 0) == 0 || !fs::exists(path, ec)) {
      continue;
    }
    if (shown.insert(path).second) argv.insert(argv.end(), {"--ro-bind", path, path});
  }
  for (const auto& w : writable) argv.insert(argv.end(), {"--bind", w.copy, w.path});
  // The interpreter itself, where the stub can run it for an installed Python tool.
  if (!real_python.empty()) argv.insert(argv.end(), {"--ro-bind", real_python, scratch + "/real-python"});
  for (const auto& dir : kBinDirs) {
    if (fs::is_symlink(dir, ec) || !fs::is_directory(dir, ec)) continue;
    for (const auto& name : StubbedCommands()) {
      const std::string path = dir + "/" + name;
      if (fs::exists(path, ec)) argv.insert(argv.end(), {"--ro-bind", stub, path});
    }
  }
  argv.insert(argv.end(), {"--chdir", cwd});
  return argv;
}

// Copies `from` (a folder the script writes into) to `to`, keeping symbolic links as links. Refused,
// with the reason, past kMaxCopyFiles files or kMaxCopyBytes bytes: such a folder is a data or home
// folder, not a recipe's, and copying it would cost more than the import is worth.
constexpr size_t kMaxCopyFiles = 20000;
constexpr uintmax_t kMaxCopyBytes = uintmax_t{256} << 20;

Status CopyForWriting(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  size_t files = 0;
  uintmax_t bytes = 0;
  for (auto it = fs::recursive_directory_iterator(from, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (++files > kMaxCopyFiles) {
      return Status::FailedPrecondition(from.string() + " holds more than " + std::to_string(kMaxCopyFiles) + " files");
    }
    if (it->is_regular_file(ec) && !it->is_symlink(ec)) bytes += it->file_size(ec);
    if (bytes > kMaxCopyBytes) {
      return Status::FailedPrecondition(from.string() + " holds more than " + std::to_string(kMaxCopyBytes >> 20) + " MiB");
    }
  }
  fs::create_directories(to, ec);
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::copy_symlinks, ec);
  if (ec) return Status::Internal("cannot copy " + from.string() + ": " + ec.message());
  return Status::Ok();
}

// The folders a script that failed on a read-only one may write into: its own and the one it runs
// in (the outer one when one holds the other), never the file system's root.
std::vector<std::string> FoldersToCopy(const std::string& script_dir, const std::string& cwd) {
  std::vector<std::string> out;
  auto within = [](const std::string& inner, const std::string& outer) {
    return inner == outer || (inner.rfind(outer, 0) == 0 && inner.size() > outer.size() && inner[outer.size()] == '/');
  };
  for (const auto& dir : {script_dir, cwd}) {
    if (dir.empty() || dir == "/") continue;
    bool covered = false;
    for (auto& kept : out) {
      if (within(dir, kept)) covered = true;
      if (!covered && within(kept, dir)) {
        kept = dir;
        covered = true;
      }
    }
    if (!covered) out.push_back(dir);
  }
  return out;
}

// The last `lines` lines of `text`.
std::string Tail(const std::string& text, size_t lines) {
  size_t at = text.size();
  while (lines > 0 && at > 0) {
    at = text.rfind('\n', at - 1);
    if (at == std::string::npos) return text;
    if (at + 1 < text.size()) --lines;
  }
  return text.substr(at == 0 ? 0 : at + 1);
}

struct Unbound {
  std::string where;  // "line 7: MODEL_SIZE"
  std::string name;   // "MODEL_SIZE", "1"
};

// From bash's "script.sh: line 7: MODEL_SIZE: unbound variable" (or "$1: unbound variable").
std::optional<Unbound> UnsetVariable(const std::string& err) {
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    size_t end = line.find(": unbound variable");
    if (end == std::string::npos) continue;
    size_t name_at = line.rfind(": ", end - 1);
    std::string name = name_at == std::string::npos ? line.substr(0, end) : line.substr(name_at + 2, end - name_at - 2);
    if (!name.empty() && name[0] == '$') name = name.substr(1);
    size_t at = line.find(": line ");
    std::string where = at == std::string::npos || at > end ? line.substr(0, end) : line.substr(at + 2, end - at - 2);
    return Unbound{where, name};
  }
  return std::nullopt;
}

bool IsPositional(const std::string& name) {
  return !name.empty() && name.find_first_not_of("0123456789") == std::string::npos;
}

Result<std::vector<CapturedCall>> ReadCalls(const fs::path& records, const std::map<std::string, std::string>& start) {
  std::vector<fs::path> stamps;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(records, ec)) {
    if (entry.path().extension() == ".argv") stamps.push_back(entry.path());
  }
  std::sort(stamps.begin(), stamps.end());
  std::vector<CapturedCall> calls;
  std::map<std::string, size_t> by_stamp;  // "<time>-<pid>" -> index in calls
  for (auto stamp : stamps) {
    CapturedCall call;
    call.argv = SplitNul(ReadFile(stamp));
    if (call.argv.empty()) continue;  // killed while recording
    by_stamp[stamp.stem().string()] = calls.size();
    auto parent = by_stamp.find(ReadFile(fs::path(stamp).replace_extension(".parent")));
    if (parent != by_stamp.end()) call.wrapper = parent->second;
    for (const auto& entry : SplitNul(ReadFile(stamp.replace_extension(".env")))) {
      size_t eq = entry.find('=');
      if (eq == std::string::npos) continue;
      std::string name = entry.substr(0, eq), value = entry.substr(eq + 1);
      if (kShellVariables.count(name) || name.rfind("BASH_FUNC_", 0) == 0) continue;
      auto was = start.find(name);
      if (was != start.end() && was->second == value) continue;
      call.env.emplace_back(std::move(name), std::move(value));
    }
    call.cwd = ReadFile(stamp.replace_extension(".cwd"));
    while (!call.cwd.empty() && call.cwd.back() == '\n') call.cwd.pop_back();
    call.refused_file_command = ReadFile(stamp.replace_extension(".kind")) == "soft";
    call.batch_script = ReadFile(stamp.replace_extension(".script"));
    calls.push_back(std::move(call));
  }
  return calls;
}

}  // namespace

std::vector<std::string> SbatchHeader(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string::npos && line[first] != '#') break;  // sbatch stops at a command
    if (line.rfind("#SBATCH", 0) == 0) out.push_back(line.substr(7));
  }
  return out;
}

const std::vector<std::string>& StubbedCommands() {
  static const std::vector<std::string> kNames = {
      "torchrun", "python", "python3", "python3.8", "python3.9", "python3.10", "python3.11",
      "python3.12", "python3.13", "ray", "srun", "mpirun", "mpiexec", "deepspeed", "accelerate",
      "uv", "automodel", "nvidia-smi", "pip", "pip3", "sleep", "wandb", "huggingface-cli",
      "scontrol", "sbatch"};
  return kNames;
}

const std::vector<std::string>& FileCommands() {
  static const std::vector<std::string> kNames = {"mkdir", "touch", "rm", "cp", "mv", "ln", "chmod"};
  return kNames;
}

Result<Capture> CaptureScript(const std::string& script_path, const CaptureOptions& o) {
  std::error_code ec;
  if (!fs::is_regular_file(script_path, ec)) {
    return Status::NotFound("cannot read the script " + script_path);
  }
  const std::string script = fs::absolute(script_path, ec).lexically_normal().string();
  const std::string cwd = o.cwd.empty() ? fs::current_path(ec).string() : fs::absolute(o.cwd, ec).string();
  ATTUNE_ASSIGN_OR_RETURN(Scratch scratch, Scratch::Make());
  const fs::path root = scratch.path();
  const fs::path stub = root / "stub";
  ATTUNE_RETURN_IF_ERROR(InstallStubs(root / "bin", stub));
  for (const char* sub : {"home", "tmp", "rec", "rec-u"}) fs::create_directories(root / sub, ec);

  std::map<std::string, std::string> start = {
      {"PATH", (root / "bin").string() + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
      {"HOME", (root / "home").string()},
      {"TMPDIR", (root / "tmp").string()},
      {"LANG", "C.UTF-8"},
      {"USER", "attune"},
      {"LOGNAME", "attune"}};
  for (const auto& [k, v] : o.env) start[k] = v;
  if (o.gpus) start["ATTUNE_IMPORT_GPUS"] = std::to_string(*o.gpus);
  // The interpreter of the user's environment (the first python3 on PATH), for installed Python
  // tools and for pip's read-only queries.
  std::string real_python;
  std::vector<std::string> candidates;
  if (const char* path = getenv("PATH")) {
    std::istringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');) {
      if (!dir.empty()) candidates.push_back(dir + "/python3");
    }
  }
  candidates.push_back("/usr/bin/python3");
  auto is_binary = [](const fs::path& file) {  // an ELF executable, not a shim script (pyenv)
    std::ifstream in(file, std::ios::binary);
    char magic[4] = {};
    return in.read(magic, 4) && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
  };
  for (const auto& candidate : candidates) {
    fs::path resolved = fs::canonical(candidate, ec);
    if (!ec && fs::is_regular_file(resolved, ec) && is_binary(resolved)) {
      real_python = resolved.string();
      start["ATTUNE_REAL_PYTHON"] = (root / "real-python").string();
      break;
    }
  }

  const std::string script_dir = fs::path(script).parent_path().string();
  std::vector<WritableCopy> writable;
  auto run = [&](const std::string& records, bool nounset, const std::map<std::string, std::string>& empty_env,
                 const std::vector<std::string>& args) -> Result<support::ProcessResult> {
    support::ProcessOptions po;
    po.clear_environment = true;
    po.env.assign(start.begin(), start.end());
    for (const auto& [k, v] : empty_env) po.env.emplace_back(k, v);
    po.env.emplace_back("ATTUNE_CAPTURE_DIR", records);
    // A batch script given to sbatch (or imported as one) runs under `set -u` too.
    if (nounset) po.env.emplace_back("ATTUNE_IMPORT_NOUNSET", "1");
    po.timeout_s = o.timeout_s;
    po.max_output = 1 << 20;
    std::vector<std::string> argv =
        SandboxArgv(o, root.string(), stub.string(), script_dir, cwd, writable, real_python);
    if (o.as_batch_job) {
      argv.push_back((root / "bin" / "sbatch").string());  // the stub: runs it as the job would
    } else {
      argv.push_back("bash");
      if (nounset) argv.push_back("-u");
    }
    argv.push_back(script);
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = support::RunProcess(argv, po);
    if (!r.ok()) {
      return Status::FailedPrecondition(
          "cannot start the sandbox (" + r.status().message() + "): recipe import runs the script "
          "under bubblewrap; install it (apt-get install bubblewrap) or import statically with "
          "--no-exec");
    }
    if (r->exit_code != 0 && r->err.rfind("bwrap:", 0) == 0) {
      return Status::FailedPrecondition("bubblewrap could not set up the sandbox: " + Tail(r->err, 3) +
                                        "; import statically with --no-exec instead");
    }
    return r;
  };

  ATTUNE_ASSIGN_OR_RETURN(support::ProcessResult first, run((root / "rec").string(), false, {}, o.args));
  std::string records = (root / "rec").string();
  // A script that writes a file of its own next to its configs (`envsubst < c.yaml > c.yaml.tmp`)
  // stops on the read-only sandbox. It runs again on scratch copies of its folder and the one it
  // runs in, bound over them: it writes, and its writes are thrown away with the scratch.
  if (first.exit_code != 0 && !first.timed_out && first.err.find("Read-only file system") != std::string::npos) {
    std::vector<WritableCopy> copies;
    std::string refused;
    for (const auto& dir : FoldersToCopy(script_dir, cwd)) {
      WritableCopy w{dir, (root / "rw" / std::to_string(copies.size())).string()};
      if (Status s = CopyForWriting(dir, w.copy); !s.ok()) {
        refused = s.message();
        break;
      }
      copies.push_back(w);
    }
    if (refused.empty() && !copies.empty()) {
      writable = copies;
      records = (root / "rec-w").string();
      fs::create_directories(records, ec);
      ATTUNE_ASSIGN_OR_RETURN(first, run(records, false, {}, o.args));
    } else if (!refused.empty()) {
      first.err += "\nattune: the script writes where the sandbox is read-only, and the folder it works in "
                   "is too large to copy for it (" + refused + "); import it from a smaller folder\n";
    }
  }
  Capture capture;
  for (const auto& w : writable) capture.writable_copies.push_back(w.path);
  capture.exit_code = first.exit_code;
  capture.timed_out = first.timed_out;
  capture.stderr_tail = Tail(first.err, 8);
  capture.stdout_tail = Tail(first.out, 8);
  ATTUNE_ASSIGN_OR_RETURN(capture.calls, ReadCalls(records, start));
  if (capture.timed_out) return capture;
  // What the script reads unset: under `set -u` bash stops at the first one; it is then set to
  // empty (as the first run saw it) and the script runs again, to find the next.
  std::map<std::string, std::string> emptied;
  std::vector<std::string> args = o.args;
  while (capture.unset_variables.size() < kMaxUnsetReported) {
    ATTUNE_ASSIGN_OR_RETURN(support::ProcessResult strict, run((root / "rec-u").string(), true, emptied, args));
    auto unbound = UnsetVariable(strict.err);
    if (!unbound || strict.timed_out) break;
    capture.unset_variables.push_back(IsPositional(unbound->name) ? unbound->where + " (a positional argument)" : unbound->where);
    if (IsPositional(unbound->name)) {
      const size_t n = std::stoul(unbound->name);
      if (n == 0 || n > 64 || args.size() >= n) break;
      args.resize(n);
    } else if (!emptied.emplace(unbound->name, "").second || start.count(unbound->name)) {
      break;  // not ours to fix (a nameref, an array element): stop rather than loop
    }
  }
  return capture;
}

}  // namespace attune::importer
