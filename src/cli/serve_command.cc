// `anvil serve`: the reward service (docs/service.md). Judges candidates sent
// over HTTP on this machine's devices until SIGINT or SIGTERM, then stops
// taking requests, answers those in flight and exits 0. Exit 2 for bad usage
// (a flag, a port in use), 1 when the service cannot start.
#include <pthread.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "backend/torch_info.h"
#include "cli/commands.h"
#include "cli/eval_flags.h"
#include "core/sandbox_switches.h"
#include "core/zygote.h"
#include "integrity/candidate_sandbox.h"
#include "service/auth.h"
#include "service/evaluation_service.h"
#include "service/http_api.h"

namespace anvil {
namespace {

struct ServeArgs : EvalFlags {
  std::string host = "127.0.0.1";
  int port = 8000;
  int max_connections = 1024;
  int max_sync = 512;
  int max_jobs = 4096;
  bool no_verdict_cache = false;
  double request_timeout = 10;
  std::string work_dir;
  std::string db;
  std::string token_file, admin_token_file;
};

// Why this machine refuses task text, or "": a task runs outside the
// candidate sandbox, so a request that brings one must not find a sandbox
// without its network namespace and seccomp for the candidates beside it.
std::string TaskTextRefused(const ServiceOptions& options) {
  auto torch = LoadTorchInfo(options.eval.cache_dir);
  if (!torch.ok()) return "torch could not be probed (" + torch.message() + ")";
  const Backend& device = options.devices.front();
  const std::string switches =
      SandboxSwitchesFor(torch.value(), device.TorchDevice(), device.DeviceModel(), options.eval.cache_dir);
  SandboxPolicy policy;
  auto on = ApplySandboxSwitches(switches, policy);
  if (!on.ok() || !on.value() || !policy.network_namespace || !policy.forbid_syscalls) {
    return "the candidate sandbox runs here without its network namespace or seccomp (switches '" + switches + "')";
  }
  return "";
}

int Run(const ServeArgs& a) {
  const char* me = "anvil serve";
  if (!IsLoopbackHost(a.host) && (a.token_file.empty() || a.admin_token_file.empty())) {
    std::fprintf(stderr,
                 "%s: --host %s serves beyond this machine: give --token-file (clients) and --admin-token-file "
                 "(who may send task text, which runs as trusted code), each a file only its owner reads\n",
                 me, a.host.c_str());
    return kExitUsage;
  }
  std::string client_token, admin_token;
  for (auto [file, token] : {std::pair{&a.token_file, &client_token}, std::pair{&a.admin_token_file, &admin_token}}) {
    if (file->empty()) continue;
    auto loaded = LoadToken(*file);
    if (!loaded.ok()) {
      std::fprintf(stderr, "%s: %s\n", me, loaded.message().c_str());
      return kExitUsage;
    }
    *token = loaded.value();
  }
  if (!client_token.empty() && SameToken(client_token, admin_token)) {
    std::fprintf(stderr, "%s: the client and admin tokens are the same: give each its own\n", me);
    return kExitUsage;
  }
  auto backend = Backend::FromName(a.backend);
  if (!backend.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, backend.message().c_str());
    return kExitUsage;
  }
  if (!backend.value().HasDevice()) {
    std::fprintf(stderr, "%s: no %s device on this machine: a reward needs a run, so there is nothing to serve\n", me,
                 backend.value().name().c_str());
    return kExitUsage;
  }
  auto eval = ToEvalOptions(a);
  if (!eval.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, eval.message().c_str());
    return kExitUsage;
  }
  auto devices = DevicesFor(backend.value(), a.gpus);
  if (!devices.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, devices.message().c_str());
    return kExitUsage;
  }
  ServiceOptions options;
  options.eval = eval.value();
  options.devices = devices.value();
  options.batch = ToBatchOptions(a, backend.value());
  options.work_dir = a.work_dir.empty() ? options.eval.cache_dir / "serve" : std::filesystem::path(a.work_dir);
  options.max_jobs = static_cast<std::size_t>(a.max_jobs);
  options.db = a.db;
  options.verdict_cache = !a.no_verdict_cache;

  // SIGINT and SIGTERM go to one thread that stops the listener; every other
  // thread (the service's, the HTTP pool's) starts with them blocked. Children
  // get a clear mask (core/subprocess).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  ServiceMetrics metrics;
  const bool quiet = a.quiet;
  auto service =
      EvaluationService::Start(options, [&metrics, quiet](const std::string& job_id, const Verdict& v, bool cached) {
        metrics.CountVerdict(v, cached);
        if (quiet) return;
        if (cached) {
          std::fprintf(stderr, "anvil serve: %s %s (cached)\n", job_id.c_str(), StatusName(v.status));
        } else {
          std::fprintf(stderr, "anvil serve: %s %s %.2f s\n", job_id.c_str(), StatusName(v.status), v.seconds);
        }
      });
  if (!service.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, service.message().c_str());
    return kExitFailure;
  }
  if (service.value()->resumed() > 0) {
    std::fprintf(stderr, "%s: %zu job(s) accepted before a restart had no verdict: judging them again\n", me,
                 service.value()->resumed());
  }
  ApiOptions api_options;
  api_options.client_token = client_token;
  api_options.admin_token = admin_token;
  api_options.task_text_refused = TaskTextRefused(options);
  if (!api_options.task_text_refused.empty()) {
    std::fprintf(stderr, "%s: task text (task_source) is refused: %s; register tasks with POST /v1/tasks\n", me,
                 api_options.task_text_refused.c_str());
  }
  api_options.host = a.host;
  api_options.port = a.port;
  api_options.max_connections = a.max_connections;
  api_options.max_sync = a.max_sync;
  api_options.request_timeout_s = a.request_timeout;
  HttpApi api(*service.value(), metrics, api_options);
  auto port = api.Bind();
  if (!port.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, port.message().c_str());
    return kExitUsage;
  }
  std::atomic<bool> got_signal{false}, stopped{false};
  std::thread signals([&api, &got_signal, &stopped, stop_signals] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    got_signal = true;
    if (stopped) return;  // Woken by Run itself.
    std::fprintf(stderr, "anvil serve: %s: answering the requests in flight, then stopping\n",
                 signal == SIGINT ? "SIGINT" : "SIGTERM");
    api.Stop();
  });
  std::fprintf(stderr, "%s: judging on %s (%zu device(s), %d side by side each; policy %s, %d trials)\n", me,
               backend.value().name().c_str(), options.devices.size(), std::max(a.jobs, 1),
               options.eval.policy.name.c_str(), options.eval.trials);
  // The Python workers' zygote (PyTorch imported once, ~2 s) starts now, not
  // in the first requests' time; /readyz says when it is up.
  api.WorkersStarting();
  std::printf("anvil serve: listening on http://%s:%d\n", a.host.c_str(), port.value());
  std::fflush(stdout);
  std::thread warm_up([&api] {
    (void)Zygote::Shared();
    api.WorkersReady();
  });
  api.Serve();
  warm_up.join();
  service.value()->Drain();
  // The signal thread has returned once the listener stopped on a signal;
  // wake it if the listener stopped on its own.
  stopped = true;
  if (!got_signal) pthread_kill(signals.native_handle(), SIGTERM);
  signals.join();
  std::fprintf(stderr, "%s: stopped\n", me);
  return kExitOk;
}

}  // namespace

void RegisterServe(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* cmd = app.add_subcommand("serve", "The reward service: judge candidates sent over HTTP (docs/service.md)");
  AddEvalFlags(cmd, *args);
  cmd->add_option("--host", args->host, "Address to listen on; beyond loopback, both token files are needed")
      ->capture_default_str();
  cmd->add_option("--token-file", args->token_file, "A file holding the clients' bearer token (chmod 600)");
  cmd->add_option("--admin-token-file", args->admin_token_file,
                  "A file holding the admin token: registers tasks, sends task text beyond loopback (chmod 600)");
  cmd->add_option("--port", args->port, "Port to listen on; 0: any free port (printed)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--request-timeout", args->request_timeout,
                  "Seconds a request may take to arrive whole (a slower client gets 408)")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  cmd->add_option("--max-connections", args->max_connections, "HTTP connections open at once; more get 503")
      ->check(CLI::Range(4, 100000))
      ->capture_default_str();
  cmd->add_option("--max-sync", args->max_sync, "/v1/evaluate calls waiting for verdicts at once; more get 429")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--max-jobs", args->max_jobs, "Jobs accepted and not yet judged; more get 429")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str();
  cmd->add_flag("--no-verdict-cache", args->no_verdict_cache,
                "Judge every request, repeats too (default: repeats are answered from the verdict cache)");
  cmd->add_option("--db", args->db, "The job store, SQLite (default WORK_DIR/jobs.db); one server at a time");
  cmd->add_option("--work-dir", args->work_dir,
                  "Where tasks and candidates sent as text are kept (default "
                  "CACHE/serve)");
  cmd->callback([args, &exit_code] { exit_code = Run(*args); });
}

}  // namespace anvil
