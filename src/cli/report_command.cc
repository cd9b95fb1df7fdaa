// `anvil report RUN.db -o report.html`: a run as one self-contained HTML file
// (docs/report.md); RUN may also be a KernelBench folder judged by `anvil
// kernelbench`. Exit 0 when written, 2 for bad usage or a database that
// cannot be read, 1 when writing failed.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "core/files.h"
#include "report/html_report.h"
#include "runs/run_db.h"

namespace anvil {
namespace {

struct ReportArgs {
  std::string run;
  std::string out = "report.html";
  std::string verdicts;  // A KernelBench folder's verdicts file, when not DIR/anvil_verdicts.jsonl.
  double faster_than = 1.1;
};

int Run(const ReportArgs& a) {
  const char* me = "anvil report";
  ReportOptions options;
  options.faster_than = a.faster_than;
  Result<ReportData> data = Status::Error("");
  std::error_code ec;
  if (std::filesystem::is_directory(a.run, ec) || !a.verdicts.empty()) {
    // A KernelBench folder judged by anvil kernelbench: its verdicts file.
    const std::filesystem::path verdicts =
        !a.verdicts.empty() ? std::filesystem::path(a.verdicts) : std::filesystem::path(a.run) / "anvil_verdicts.jsonl";
    if (!std::filesystem::exists(verdicts, ec)) {
      std::fprintf(stderr,
                   "%s: %s has no verdicts (%s): judge it first with anvil kernelbench --run %s, or name its "
                   "verdicts file with --verdicts\n",
                   me, a.run.c_str(), verdicts.c_str(), a.run.c_str());
      return kExitUsage;
    }
    data = FolderReportData(verdicts, a.run, options);
  } else {
    auto db = RunDb::Open(a.run, /*create=*/false, /*read_only=*/true);
    if (!db.ok()) {
      std::fprintf(stderr, "%s: %s\n", me, db.message().c_str());
      return kExitUsage;
    }
    data = RunReportData(*db.value(), a.run, options);
  }
  if (!data.ok()) {
    std::fprintf(stderr, "%s: %s: %s\n", me, a.run.c_str(), data.message().c_str());
    return kExitUsage;
  }
  auto page = ReportPage(data.value());
  if (!page.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, page.message().c_str());
    return kExitFailure;
  }
  if (Status written = WriteFileAtomic(a.out, page.value()); !written.ok()) {
    std::fprintf(stderr, "%s: cannot write %s: %s\n", me, a.out.c_str(), written.message().c_str());
    return kExitFailure;
  }
  std::printf("%s: %zu sample(s) of %zu problem(s), %.1f KB; open it in a browser (it needs no network)\n",
              a.out.c_str(), data.value().data["samples"].size(), data.value().data["tasks"].size(),
              static_cast<double>(page.value().size()) / 1024.0);
  return kExitOk;
}

}  // namespace

void RegisterReport(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand("report", "Write a run as one HTML file: its tables and every candidate");
  cmd->add_option("run", args->run,
                  "The run database (anvil generate --out), or a KernelBench run folder judged by anvil kernelbench")
      ->required();
  cmd->add_option("--verdicts", args->verdicts,
                  "A KernelBench folder's verdicts file (anvil kernelbench --out), when not RUN/anvil_verdicts.jsonl");
  cmd->add_option("-o,--out", args->out, "The HTML file to write")->capture_default_str();
  cmd->add_option("--faster-than", args->faster_than, "Faster Rate counts passing samples with speedup > this")
      ->capture_default_str();
  cmd->callback([args, &exit_code] { exit_code = Run(*args); });
}

}  // namespace anvil
