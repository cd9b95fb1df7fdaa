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

// What the page shows of RUN: a run database's, or a KernelBench folder's verdicts.
Result<ReportData> ReadReport(const ReportArgs& a) {
  ReportOptions options;
  options.faster_than = a.faster_than;
  std::error_code ec;
  const bool folder = std::filesystem::is_directory(a.run, ec) || !a.verdicts.empty();
  if (!folder) {
    auto db = RunDb::Open(a.run, /*create=*/false, /*read_only=*/true);
    if (!db.ok()) return db.status();
    auto data = RunReportData(*db.value(), a.run, options);
    if (!data.ok()) return Status::Error(a.run + ": " + data.message());
    return data;
  }
  const std::filesystem::path verdicts =
      !a.verdicts.empty() ? std::filesystem::path(a.verdicts) : std::filesystem::path(a.run) / "anvil_verdicts.jsonl";
  if (!std::filesystem::exists(verdicts, ec)) {
    return Status::Error(a.run + " has no verdicts (" + verdicts.string() +
                         "): judge it first with anvil kernelbench "
                         "--run " +
                         a.run + ", or name its verdicts file with --verdicts");
  }
  auto data = FolderReportData(verdicts, a.run, options);
  if (!data.ok()) return Status::Error(a.run + ": " + data.message());
  return data;
}

int Run(const ReportArgs& a) {
  const char* me = "anvil report";
  auto data = ReadReport(a);
  if (!data.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, data.message().c_str());
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
