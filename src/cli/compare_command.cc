// `anvil compare RUN_A.db RUN_B.db [-o compare.html]`: two runs side by side
// (docs/report.md). Text on the terminal, JSON with --json, HTML with -o.
// Exit 0 when done, 2 for bad usage or a database that cannot be read, 1 when
// writing failed.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/table.h"
#include "core/files.h"
#include "core/fixed.h"
#include "report/html_report.h"
#include "report/run_compare.h"
#include "runs/run_db.h"

namespace anvil {
namespace {

using nlohmann::json;

struct CompareArgs {
  std::string a, b;
  std::string out;
  std::string turn = "last";
  double faster_than = 1.1;
  bool json = false;
};

// "33.3 -> 50.0 (+16.7)"; "-" for a side without the number.
std::string Change(const json& a, const json& b, int digits) {
  auto text = [digits](const json& v) { return v.is_number() ? Fixed(v.get<double>(), digits) : std::string("-"); };
  std::string s = text(a) + " -> " + text(b);
  if (a.is_number() && b.is_number()) {
    const double d = b.get<double>() - a.get<double>();
    s += " (" + std::string(d >= 0 ? "+" : "") + Fixed(d, digits) + ")";
  }
  return s;
}

void PrintText(const json& c) {
  auto run = [](const json& r) {
    return r["model"].get<std::string>() + " (" + r["backend"].get<std::string>() + ", " +
           std::to_string(r["samples"].get<int>()) + " samples, turn " + std::to_string(r["turn"].get<int>()) +
           "): " + r["run"].get<std::string>();
  };
  std::printf("A: %s\nB: %s\n", run(c["a"]).c_str(), run(c["b"]).c_str());
  for (const auto& w : c["warnings"]) std::printf("warning: %s\n", w.get<std::string>().c_str());
  TextTable table({"level", "Pass@1", "Pass@N", "Avg@N", "Faster eager %", "geomean eager"});
  auto row = [&table](const std::string& level, const json& a, const json& b) {
    auto get = [](const json& l, auto f) { return l.is_object() ? f(l) : json(); };
    auto pass1 = [](const json& l) { return l["pass_at_k_pct"]["1"]; };
    auto passn = [](const json& l) { return l["pass_at_k_pct"][std::to_string(std::max(l["n"].get<int>(), 1))]; };
    auto avg = [](const json& l) { return l["avg_at_n_pct"]; };
    auto faster = [](const json& l) { return l["faster_rate_pct"]["eager"]; };
    auto geo = [](const json& l) { return l["geomean_speedup"]["eager"]; };
    table.Add({level, Change(get(a, pass1), get(b, pass1), 1), Change(get(a, passn), get(b, passn), 1),
               Change(get(a, avg), get(b, avg), 1), Change(get(a, faster), get(b, faster), 1),
               Change(get(a, geo), get(b, geo), 2)});
  };
  for (const auto& l : c["levels"]) row(std::to_string(l["level"].get<int>()), l["a"], l["b"]);
  row("all", c["overall"]["a"], c["overall"]["b"]);
  std::printf("\n%s", table.Render().c_str());
  const json& p = c["problems"];
  std::printf("\n%d problem(s) in both runs (by level and name), %zu only in A, %zu only in B.\n",
              p["matched"].get<int>(), p["only_a"].size(), p["only_b"].size());
  const json& s = c["solved"];
  std::printf("solved by both: %d; by A only: %zu; by B only: %zu\n", s["both"].get<int>(), s["only_a"].size(),
              s["only_b"].size());
  for (const char* who : {"only_a", "only_b"}) {
    for (const auto& name : s[who]) {
      std::printf("  %s %s\n", who == std::string("only_a") ? "A only:" : "B only:", name.get<std::string>().c_str());
    }
  }
  const json& g = c["speedup_change_geomean"];
  std::printf("speedup change on problems both solve (best eager speedup, B / A): %s over %zu problem(s)\n",
              g.is_number() ? (Fixed(g.get<double>(), 3) + "x geomean").c_str() : "not measured", c["speedups"].size());
}

int Run(const CompareArgs& args) {
  const char* me = "anvil compare";
  auto a = RunDb::Open(args.a, /*create=*/false, /*read_only=*/true);
  if (!a.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, a.message().c_str());
    return kExitUsage;
  }
  auto b = RunDb::Open(args.b, /*create=*/false, /*read_only=*/true);
  if (!b.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, b.message().c_str());
    return kExitUsage;
  }
  CompareOptions options;
  options.turn = args.turn;
  options.faster_than = args.faster_than;
  auto c = CompareRuns(*a.value(), args.a, *b.value(), args.b, options);
  if (!c.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, c.message().c_str());
    return kExitUsage;
  }
  if (args.json) {
    std::printf("%s\n", c.value().dump(2, ' ', false, json::error_handler_t::replace).c_str());
  } else {
    PrintText(c.value());
  }
  if (!args.out.empty()) {
    if (Status written = WriteFileAtomic(args.out, ComparePage(c.value())); !written.ok()) {
      std::fprintf(stderr, "%s: cannot write %s: %s\n", me, args.out.c_str(), written.message().c_str());
      return kExitFailure;
    }
    if (!args.json) std::printf("wrote %s\n", args.out.c_str());
  }
  return kExitOk;
}

}  // namespace

void RegisterCompare(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand("compare", "Compare two runs: metrics per level, problems solved, speedups");
  cmd->add_option("run_a", args->a, "The first run database (A)")->required();
  cmd->add_option("run_b", args->b, "The second run database (B)")->required();
  cmd->add_option("-o,--out", args->out, "Also write the comparison as one HTML file");
  cmd->add_option("--turn", args->turn, "The turn each run is taken at: first, last or K")->capture_default_str();
  cmd->add_option("--faster-than", args->faster_than, "Faster Rate counts passing samples with speedup > this")
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "Print the comparison as JSON");
  cmd->callback([args, &exit_code] { exit_code = Run(*args); });
}

}  // namespace anvil
