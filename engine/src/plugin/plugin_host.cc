// PluginHost: discovery over the search path, the name registry, and object creation.
#include "plugin/plugin_host.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "attune/hash.h"
#include "plugin/library_loader.h"

namespace attune {

namespace fs = std::filesystem;

namespace {

std::string FileSha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return Sha256Hex(bytes);
}

std::string Canonical(const std::string& path) {
  std::error_code ec;
  auto canonical = fs::weakly_canonical(path, ec);
  return ec ? path : canonical.string();
}

// Library files of one directory that look like plugins, sorted for a stable load order.
std::vector<std::string> PluginFilesIn(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("attune_", 0) == 0 && entry.path().extension() == ".so") {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

void DefaultLog(LogLevel level, const std::string& message) {
  static const char* kNames[] = {"debug", "info", "warn", "error"};
  if (level == LogLevel::kDebug) return;
  std::cerr << "[" << kNames[static_cast<int>(level)] << "] " << message << "\n";
}

// The descriptor's options schema, compiled (CheckDescriptorFields has already refused one that
// does not compile).
std::optional<support::JsonSchema> OptionsSchemaOf(const PluginDescriptor& d) {
  if (d.options_schema == nullptr) return std::nullopt;
  auto schema = support::JsonSchema::Parse(d.options_schema);
  if (!schema.ok()) return std::nullopt;
  return std::move(schema).value();
}

}  // namespace

class PluginHost::Impl {
 public:
  std::vector<std::string> search_path;
  std::vector<std::unique_ptr<LoadedPlugin>> plugins;

  const LoadedPlugin* FindByName(const std::string& name) const {
    for (const auto& p : plugins) {
      if (p->name == name) return p.get();
    }
    return nullptr;
  }
  const LoadedPlugin* FindByPath(const std::string& path) const {
    for (const auto& p : plugins) {
      if (!p->path.empty() && p->path == path) return p.get();
    }
    return nullptr;
  }
  Result<const LoadedPlugin*> Add(std::unique_ptr<LoadedPlugin> plugin);
  template <typename T>
  Result<std::unique_ptr<T>> Create(PluginKind kind, const std::string& name,
                                    const PluginContext& ctx, const PluginHost& host);
};

Result<const LoadedPlugin*> PluginHost::Impl::Add(std::unique_ptr<LoadedPlugin> plugin) {
  if (const LoadedPlugin* other = FindByName(plugin->name)) {
    std::string here = plugin->path.empty() ? "a test registration" : plugin->path;
    std::string there = other->path.empty() ? "a test registration" : other->path;
    return Status::AlreadyExists("plugin name '" + plugin->name + "' is provided by both " +
                                 there + " and " + here +
                                 "; plugin names must be unique: remove one of them from the "
                                 "plugin search path");
  }
  plugins.push_back(std::move(plugin));
  return plugins.back().get();
}

PluginHost::PluginHost(std::vector<std::string> search_path) : impl_(std::make_unique<Impl>()) {
  impl_->search_path = std::move(search_path);
}
PluginHost::~PluginHost() = default;

Status PluginHost::DiscoverAll() {
  for (const std::string& dir : impl_->search_path) {
    for (const std::string& file : PluginFilesIn(dir)) {
      ATTUNE_RETURN_IF_ERROR(LoadFile(file).status());
    }
  }
  return Status::Ok();
}

Result<const LoadedPlugin*> PluginHost::LoadFile(const std::string& path) {
  std::string canonical = Canonical(path);
  // The same file reached through two search-path entries is one plugin, not a duplicate.
  if (const LoadedPlugin* known = impl_->FindByPath(canonical)) return known;
  ATTUNE_ASSIGN_OR_RETURN(const PluginDescriptor* d, plugin::LoadLibraryDescriptor(canonical));
  auto loaded = std::make_unique<LoadedPlugin>();
  loaded->name = d->name;
  loaded->version = d->version;
  loaded->kind = d->kind;
  loaded->path = canonical;
  loaded->sha256 = FileSha256(canonical);
  loaded->descriptor = d;
  loaded->options_schema = OptionsSchemaOf(*d);
  return impl_->Add(std::move(loaded));
}

Status PluginHost::RegisterForTesting(const PluginDescriptor* descriptor) {
  if (descriptor == nullptr) return Status::InvalidArgument("RegisterForTesting: null descriptor");
  if (descriptor->abi_version != kAbiVersion) {
    return Status::FailedPrecondition("test descriptor has ABI " +
                                      std::to_string(descriptor->abi_version) + ", expected " +
                                      std::to_string(kAbiVersion));
  }
  ATTUNE_RETURN_IF_ERROR(plugin::CheckDescriptorFields(*descriptor, "test registration"));
  auto loaded = std::make_unique<LoadedPlugin>();
  loaded->name = descriptor->name;
  loaded->version = descriptor->version;
  loaded->kind = descriptor->kind;
  loaded->descriptor = descriptor;
  loaded->options_schema = OptionsSchemaOf(*descriptor);
  return impl_->Add(std::move(loaded)).status();
}

Result<const LoadedPlugin*> PluginHost::Find(PluginKind kind, const std::string& name) const {
  const LoadedPlugin* p = impl_->FindByName(name);
  if (p != nullptr && p->kind == kind) return p;
  if (p != nullptr) {
    return Status::InvalidArgument("plugin '" + name + "' (" + p->path + ") is a " +
                                   PluginKindName(p->kind) + ", not a " + PluginKindName(kind) +
                                   "; use it where a " + PluginKindName(p->kind) +
                                   " is expected");
  }
  std::vector<std::string> same_kind;
  for (const auto& q : impl_->plugins) {
    if (q->kind == kind) same_kind.push_back(q->name);
  }
  std::string nearest = NearestName(name, same_kind);
  std::string searched;
  for (const auto& dir : impl_->search_path) searched += (searched.empty() ? "" : ", ") + dir;
  std::string known;
  for (const auto& n : same_kind) known += (known.empty() ? "" : ", ") + n;
  return Status::NotFound(
      std::string("no ") + PluginKindName(kind) + " plugin named '" + name + "'" +
      (nearest.empty() ? "" : " (did you mean '" + nearest + "'?)") +
      "; known: " + (known.empty() ? "none" : known) + "; searched: " +
      (searched.empty() ? "(empty search path)" : searched) +
      ". Add the plugin's directory with --plugin-path or ATTUNE_PLUGIN_PATH");
}

std::vector<const LoadedPlugin*> PluginHost::List() const {
  std::vector<const LoadedPlugin*> out;
  for (const auto& p : impl_->plugins) out.push_back(p.get());
  std::sort(out.begin(), out.end(), [](const LoadedPlugin* a, const LoadedPlugin* b) {
    return std::make_pair(a->kind, a->name) < std::make_pair(b->kind, b->name);
  });
  return out;
}

const std::vector<std::string>& PluginHost::search_path() const { return impl_->search_path; }

template <typename T>
Result<std::unique_ptr<T>> PluginHost::Impl::Create(PluginKind kind, const std::string& name,
                                                    const PluginContext& ctx,
                                                    const PluginHost& host) {
  ATTUNE_ASSIGN_OR_RETURN(const LoadedPlugin* p, host.Find(kind, name));
  PluginContext context = ctx;
  if (!context.log) context.log = DefaultLog;
  std::string where = "plugin '" + name + "' (" + (p->path.empty() ? "test" : p->path) + ")";
  if (p->options_schema) {
    const nlohmann::json& with = context.config.is_null() ? nlohmann::json::object() : context.config;
    Status valid = p->options_schema->Validate(with, "with");
    if (!valid.ok()) return Status::InvalidArgument("plugin '" + name + "': " + valid.message());
  }
  Result<std::unique_ptr<Plugin>> made = Status::Internal("not called");
  try {
    made = p->descriptor->create(context);
  } catch (const std::exception& e) {
    // ATTUNE_PLUGIN catches inside the plugin; a hand-written factory may not.
    return Status::Internal(where + " threw from its factory: " + e.what());
  }
  if (!made.ok()) {
    return Status(made.status().code(),
                  where + " failed to start: " + made.status().message());
  }
  std::unique_ptr<Plugin> object = std::move(made).value();
  if (!object) return Status::Internal(where + ": its factory returned no object (a plugin bug)");
  T* typed = dynamic_cast<T*>(object.get());
  if (typed == nullptr) {
    return Status::Internal(where + " declares kind " + PluginKindName(kind) +
                            " but its object does not implement that interface (a plugin bug)");
  }
  object.release();
  return std::unique_ptr<T>(typed);
}

Result<std::unique_ptr<Stack>> PluginHost::CreateStack(const std::string& name,
                                                       const PluginContext& ctx) {
  return impl_->Create<Stack>(PluginKind::kStack, name, ctx, *this);
}
Result<std::unique_ptr<Launcher>> PluginHost::CreateLauncher(const std::string& name,
                                                             const PluginContext& ctx) {
  return impl_->Create<Launcher>(PluginKind::kLauncher, name, ctx, *this);
}
Result<std::unique_ptr<Agent>> PluginHost::CreateAgent(const std::string& name,
                                                       const PluginContext& ctx) {
  return impl_->Create<Agent>(PluginKind::kAgent, name, ctx, *this);
}

}  // namespace attune
