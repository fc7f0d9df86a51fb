// Copyright attune authors.
#include "kubectl.h"

#include <algorithm>
#include <cmath>

namespace attune::kuberay {
namespace {

using Json = nlohmann::json;

bool Contains(const std::string& text, const char* word) {
  return text.find(word) != std::string::npos;
}

// kubectl's message without trailing newlines, at most a few lines (enough for a 422's causes).
std::string Said(const CommandResult& r) {
  std::string text = r.err.empty() ? r.out : r.err;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.size() > 2000) text = text.substr(0, 2000) + " ...";
  return text;
}

bool IsTransient(const std::string& text) {
  static const char* kWords[] = {
      "(InternalError)", "(ServiceUnavailable)", "(Timeout)", "(TooManyRequests)",
      "(ServerTimeout)", "Unable to connect to the server", "connection refused",
      "The connection to the server",
      "connection reset", "i/o timeout", "TLS handshake timeout", "context deadline exceeded",
      "the server is currently unable to handle the request", "net/http: request canceled",
      "Client.Timeout exceeded", "unexpected EOF", "http2: server sent GOAWAY",
      "the server was unable to return a response in the time allotted", "Internal error occurred"};
  return std::any_of(std::begin(kWords), std::end(kWords),
                     [&](const char* w) { return Contains(text, w); });
}

}  // namespace

Status ClassifyKubectl(const CommandResult& r, const std::string& what, bool* transient) {
  *transient = false;
  if (!r.timed_out && r.exit_code == 0) return Status::Ok();
  const std::string said = Said(r);
  const std::string message = what + ": " + said;
  if (r.timed_out) {
    *transient = true;
    return Status::Unavailable(what + ": kubectl did not answer in time");
  }
  if (Contains(said, "(NotFound)")) return Status::NotFound(message);
  if (Contains(said, "(AlreadyExists)") || Contains(said, "(Conflict)")) {
    return Status::AlreadyExists(message);
  }
  if (Contains(said, "(Forbidden)") || Contains(said, "(Unauthorized)") ||
      Contains(said, "You must be logged in")) {
    return Status::FailedPrecondition(
        message + " (the credentials may not do this: `attune kuberay rbac --namespace NS` prints "
                  "the Role the launcher needs)");
  }
  if (IsTransient(said)) {
    *transient = true;
    return Status::Unavailable(message);
  }
  if (Contains(said, "(Invalid)") || Contains(said, "is invalid") ||
      Contains(said, "(BadRequest)") || Contains(said, "strict decoding error")) {
    return Status::InvalidArgument(message);
  }
  return Status::FailedPrecondition(message);
}

Kubectl::Kubectl(const KubeRayOptions& options, Sleep sleep, Log log)
    : options_(options), sleep_(std::move(sleep)), log_(std::move(log)) {}

std::vector<std::string> Kubectl::CommandLine(const std::vector<std::string>& args) const {
  std::vector<std::string> argv{options_.kubectl};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("-n");
  argv.push_back(options_.namespace_);
  if (!options_.kubeconfig.empty()) argv.push_back("--kubeconfig=" + options_.kubeconfig);
  if (!options_.context.empty()) argv.push_back("--context=" + options_.context);
  argv.push_back("--request-timeout=" +
                 std::to_string(static_cast<int>(std::ceil(options_.request_timeout_s))) + "s");
  return argv;
}

Result<std::string> Kubectl::Run(const std::vector<std::string>& args, const std::string& what) {
  const std::vector<std::string> argv = CommandLine(args);
  // kubectl makes several requests for one verb (discovery, then the call): room for a few.
  const double timeout = 3 * options_.request_timeout_s + 10;
  double delay = options_.api_backoff_s;
  Status last;
  for (int attempt = 0; attempt <= options_.api_retries; ++attempt) {
    if (attempt > 0) {
      if (log_) {
        log_(LogLevel::kWarn, "kuberay: " + last.message() + "; retry " + std::to_string(attempt) +
                                  " of " + std::to_string(options_.api_retries) + " in " +
                                  Json(delay).dump() + " s");
      }
      sleep_(delay);
      delay = std::min(options_.api_backoff_max_s, delay * 2);
    }
    ATTUNE_ASSIGN_OR_RETURN(CommandResult r, RunCommand(argv, "", timeout));
    bool transient = false;
    last = ClassifyKubectl(r, what, &transient);
    if (last.ok()) return r.out;
    if (!transient) return last;
  }
  return Status::Unavailable(last.message() + " (gave up after " +
                             std::to_string(options_.api_retries) +
                             " retries; the job is not failed: resume the campaign when the API "
                             "server answers again)");
}

Result<std::vector<Json>> Kubectl::Items(const std::vector<std::string>& args,
                                         const std::string& what) {
  ATTUNE_ASSIGN_OR_RETURN(std::string out, Run(args, what));
  Json list = Json::parse(out, nullptr, false);
  if (list.is_discarded() || !list.is_object() || !list.contains("items") ||
      !list["items"].is_array()) {
    return Status::Unavailable(what + ": kubectl printed no JSON list: " + out.substr(0, 200));
  }
  return list["items"].get<std::vector<Json>>();
}

Result<std::vector<Json>> Kubectl::ListRayJobs(const std::string& selector) {
  return Items({"get", "rayjobs.ray.io", "-l", selector, "-o", "json"},
               "kubectl get rayjobs -l " + selector + " -n " + options_.namespace_);
}

Result<std::optional<Json>> Kubectl::GetRayJob(const std::string& name) {
  auto out = Run({"get", "rayjobs.ray.io", name, "-o", "json"},
                 "kubectl get rayjob " + name + " -n " + options_.namespace_);
  if (!out.ok() && out.status().code() == StatusCode::kNotFound) return std::optional<Json>();
  if (!out.ok()) return out.status();
  Json job = Json::parse(*out, nullptr, false);
  if (job.is_discarded() || !job.is_object()) {
    return Status::Unavailable("kubectl get rayjob " + name + ": not JSON: " + out->substr(0, 200));
  }
  return std::optional<Json>(std::move(job));
}

Result<std::string> Kubectl::Apply(const std::string& manifest_path) {
  return Run({"apply", "-f", manifest_path},
             "kubectl apply -f " + manifest_path + " -n " + options_.namespace_);
}

Status Kubectl::DeleteRayJob(const std::string& name) {
  auto out = Run({"delete", "rayjobs.ray.io", name, "--wait=false", "--ignore-not-found"},
                 "kubectl delete rayjob " + name + " -n " + options_.namespace_);
  return out.ok() ? Status::Ok() : out.status();
}

Result<std::vector<Json>> Kubectl::ListPods(const std::string& selector) {
  return Items({"get", "pods", "-l", selector, "-o", "json"},
               "kubectl get pods -l " + selector + " -n " + options_.namespace_);
}

Result<std::vector<Json>> Kubectl::Events(const std::string& field_selector) {
  return Items({"get", "events", "--field-selector", field_selector, "-o", "json"},
               "kubectl get events --field-selector " + field_selector + " -n " +
                   options_.namespace_);
}

Result<std::string> Kubectl::Logs(const std::string& pod, const std::string& container) {
  std::vector<std::string> args{"logs", pod};
  if (!container.empty()) args.push_back("--container=" + container);
  return Run(args, "kubectl logs " + pod + " -n " + options_.namespace_);
}

}  // namespace attune::kuberay
