// `anvil cache`: what anvil's cache holds (`list`, or `du`), and bounding it
// (`prune`: least recently used entries first, by size and/or age).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cache/byte_size.h"
#include "cache/cache_prune.h"
#include "cache/cache_scan.h"
#include "cli/commands.h"
#include "cli/table.h"
#include "core/environment.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

constexpr double kSecondsPerDay = 24 * 60 * 60;
constexpr double kMaxDays = 100 * 365;  // Longer is "never" (and keeps the seconds in range).

struct CacheArgs {
  std::string cache_dir;
  bool json = false;
  std::string max_size;
  std::optional<double> older_than_days;
  bool dry_run = false;
};

const char* KindLabel(CacheKind kind) {
  switch (kind) {
    case CacheKind::kArtifact:
      return "artifacts";
    case CacheKind::kTorchPch:
      return "torch PCH";
    case CacheKind::kHostPch:
      return "host PCH";
    case CacheKind::kFailedBuild:
      return "failed builds";
    case CacheKind::kTask:
      return "tasks";
    case CacheKind::kVerdict:
      return "verdicts";
    case CacheKind::kOther:
      return "other";
  }
  return "other";
}

// The cache folder to work on; nullopt (after saying why) when there is none.
std::optional<fs::path> CacheRoot(const CacheArgs& a, const char* command) {
  std::error_code ec;
  const fs::path root = fs::absolute(a.cache_dir.empty() ? DefaultCacheDir() : fs::path(a.cache_dir), ec);
  if (fs::is_directory(root, ec)) return root;
  std::fprintf(stderr,
               "anvil cache %s: no cache folder at %s; pass --cache-dir (or set ANVIL_CACHE_DIR) to the folder "
               "anvil eval used\n",
               command, root.c_str());
  return std::nullopt;
}

// "12 min", "5 h", "3 d".
std::string Age(fs::file_time_type then, fs::file_time_type now) {
  const auto minutes = std::chrono::duration_cast<std::chrono::minutes>(now - then).count();
  if (minutes < 60) return std::to_string(std::max<long long>(minutes, 0)) + " min";
  if (minutes < 48 * 60) return std::to_string(minutes / 60) + " h";
  return std::to_string(minutes / (24 * 60)) + " d";
}

long long UnixSeconds(fs::file_time_type t) {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::file_clock::to_sys(t).time_since_epoch())
      .count();
}

nlohmann::json EntryJson(const CacheEntry& e) {
  return {{"kind", CacheKindName(e.kind)},
          {"path", e.path.string()},
          {"bytes", e.bytes},
          {"last_used", UnixSeconds(e.last_used)}};
}

std::string Relative(const fs::path& path, const fs::path& root) { return path.lexically_relative(root).string(); }

int RunList(const CacheArgs& a) {
  const std::optional<fs::path> root = CacheRoot(a, "list");
  if (!root) return kExitUsage;
  auto contents = ScanCache(*root);
  if (!contents.ok()) {
    std::fprintf(stderr, "anvil cache list: %s\n", contents.message().c_str());
    return kExitFailure;
  }
  const auto by_kind = contents.value().ByKind();
  const CacheKindTotal total = contents.value().Total();
  if (a.json) {
    nlohmann::json kinds = nlohmann::json::object();
    for (std::size_t k = 0; k < kCacheKinds; ++k) {
      kinds[CacheKindName(static_cast<CacheKind>(k))] = {{"entries", by_kind[k].count}, {"bytes", by_kind[k].bytes}};
    }
    nlohmann::json entries = nlohmann::json::array();
    for (const CacheEntry& e : contents.value().entries) entries.push_back(EntryJson(e));
    const nlohmann::json out = {{"cache_dir", root->string()},
                                {"kinds", kinds},
                                {"total", {{"entries", total.count}, {"bytes", total.bytes}}},
                                {"entries", entries}};
    std::printf("%s\n", out.dump(2).c_str());
    return kExitOk;
  }
  // Entries come least recently used first: the first of a kind is its oldest.
  std::array<std::optional<fs::file_time_type>, kCacheKinds> oldest;
  for (const CacheEntry& e : contents.value().entries) {
    auto& first = oldest[static_cast<std::size_t>(e.kind)];
    if (!first) first = e.last_used;
  }
  const fs::file_time_type now = fs::file_time_type::clock::now();
  TextTable table({"kind", "entries", "size", "least recently used"});
  for (std::size_t k = 0; k < kCacheKinds; ++k) {
    table.Add({KindLabel(static_cast<CacheKind>(k)), std::to_string(by_kind[k].count), FormatBytes(by_kind[k].bytes),
               oldest[k] ? Age(*oldest[k], now) + " ago" : "-"});
  }
  table.Add({"total", std::to_string(total.count), FormatBytes(total.bytes), ""});
  std::printf("cache: %s\n%s", root->c_str(), table.Render().c_str());
  return kExitOk;
}

int RunPrune(const CacheArgs& a) {
  PruneOptions options;
  if (a.max_size.empty() && !a.older_than_days) {
    std::fprintf(stderr,
                 "anvil cache prune: say what to remove: --max-size SIZE (least recently used entries first, "
                 "until the cache fits, e.g. 50G) and/or --older-than DAYS (entries not used for that long)\n");
    return kExitUsage;
  }
  if (!a.max_size.empty()) {
    auto bytes = ParseByteSize(a.max_size);
    if (!bytes.ok()) {
      std::fprintf(stderr, "anvil cache prune: --max-size %s\n", bytes.message().c_str());
      return kExitUsage;
    }
    options.max_bytes = bytes.value();
  }
  if (a.older_than_days) {
    if (!(*a.older_than_days >= 0)) {
      std::fprintf(stderr, "anvil cache prune: --older-than %g: give a number of days, 0 or more (e.g. 30)\n",
                   *a.older_than_days);
      return kExitUsage;
    }
    options.older_than =
        std::chrono::seconds(static_cast<long long>(std::min(*a.older_than_days, kMaxDays) * kSecondsPerDay));
  }
  options.dry_run = a.dry_run;
  const std::optional<fs::path> root = CacheRoot(a, "prune");
  if (!root) return kExitUsage;
  auto pruned = PruneCache(*root, options);
  if (!pruned.ok()) {
    std::fprintf(stderr, "anvil cache prune: %s\n", pruned.message().c_str());
    return kExitFailure;
  }
  const PruneResult& r = pruned.value();
  if (a.json) {
    nlohmann::json removed = nlohmann::json::array(), in_use = nlohmann::json::array();
    for (const CacheEntry& e : r.removed) removed.push_back(EntryJson(e));
    for (const CacheEntry& e : r.in_use) in_use.push_back(EntryJson(e));
    const nlohmann::json out = {{"cache_dir", root->string()},
                                {"dry_run", a.dry_run},
                                {"removed", removed},
                                {"removed_bytes", r.RemovedBytes()},
                                {"in_use", in_use},
                                {"failures", r.failures},
                                {"leftovers", r.leftovers.size()},
                                {"bytes_before", r.bytes_before},
                                {"bytes_after", r.bytes_after}};
    std::printf("%s\n", out.dump(2).c_str());
    return r.failures.empty() ? kExitOk : kExitFailure;
  }
  const fs::file_time_type now = fs::file_time_type::clock::now();
  const char* verb = a.dry_run ? "would remove" : "removed";
  for (const CacheEntry& e : r.removed) {
    std::printf("%s %s  %s  (%s, last used %s ago)\n", verb, Relative(e.path, *root).c_str(),
                FormatBytes(e.bytes).c_str(), KindLabel(e.kind), Age(e.last_used, now).c_str());
  }
  for (const CacheEntry& e : r.in_use) {
    std::printf("kept %s  %s  (in use by another anvil process)\n", Relative(e.path, *root).c_str(),
                FormatBytes(e.bytes).c_str());
  }
  for (const std::string& failure : r.failures) std::fprintf(stderr, "anvil cache prune: %s\n", failure.c_str());
  std::string summary =
      std::string(verb) + " " + std::to_string(r.removed.size()) + " entries (" + FormatBytes(r.RemovedBytes()) + ")";
  if (!r.leftovers.empty()) {
    summary += ", with " + std::to_string(r.leftovers.size()) + " leftover(s) of a killed prune";
  }
  summary += std::string("; the cache ") + (a.dry_run ? "would then hold " : "now holds ") +
             FormatBytes(r.bytes_after) + " (was " + FormatBytes(r.bytes_before) + ")";
  std::printf("%s\n", summary.c_str());
  if (options.max_bytes && r.bytes_after > *options.max_bytes) {
    std::printf("still above --max-size %s: what is left is %s\n", a.max_size.c_str(),
                r.in_use.empty() ? "not evictable (probes, locks, builds in progress)"
                                 : "in use, or not evictable (probes, locks, builds in progress)");
  }
  return r.failures.empty() ? kExitOk : kExitFailure;
}

}  // namespace

void RegisterCache(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<CacheArgs>();
  CLI::App* cmd = app.add_subcommand("cache", "Show what anvil's cache holds, and bound it");
  cmd->require_subcommand(1);
  const std::string cache_help = "Cache folder (default $ANVIL_CACHE_DIR or ~/.cache/anvil)";

  CLI::App* list = cmd->add_subcommand("list", "Entries and sizes by kind: artifacts, precompiled headers, tasks");
  list->alias("du");
  list->add_option("--cache-dir", args->cache_dir, cache_help);
  list->add_flag("--json", args->json, "Print JSON (with every entry's size and last use)");
  list->callback([args, &exit_code] { exit_code = RunList(*args); });

  CLI::App* prune =
      cmd->add_subcommand("prune", "Remove least recently used entries (never one another anvil process is using)");
  prune->add_option("--cache-dir", args->cache_dir, cache_help);
  prune
      ->add_option("--max-size", args->max_size,
                   "Remove least recently used entries until the cache holds at most SIZE (e.g. 50G, 500M; "
                   "powers of 1024)")
      ->option_text("SIZE");
  prune->add_option("--older-than", args->older_than_days, "Remove entries not used for DAYS days")
      ->option_text("DAYS");
  prune->add_flag("--dry-run", args->dry_run, "Remove nothing; print what would go");
  prune->add_flag("--json", args->json, "Print JSON");
  prune->callback([args, &exit_code] { exit_code = RunPrune(*args); });
}

}  // namespace anvil
