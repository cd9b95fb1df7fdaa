#include "compile/host_pch.h"

#include <cstdlib>
#include <future>
#include <regex>

#include "compile/compiler_run.h"
#include "core/file_lock.h"
#include "core/files.h"
#include "core/sha256.h"

namespace anvil {

namespace fs = std::filesystem;

namespace {

// `# N "<file>"...` at the start of `line`: N and the file, or nullopt.
std::optional<std::pair<long, std::string_view>> LineMarker(std::string_view line) {
  if (line.size() < 5 || line[0] != '#' || line[1] != ' ') return std::nullopt;
  std::size_t i = 2;
  long n = 0;
  bool digits = false;
  while (i < line.size() && line[i] >= '0' && line[i] <= '9') {
    n = n * 10 + (line[i++] - '0');
    digits = true;
  }
  if (!digits || i + 1 >= line.size() || line[i] != ' ' || line[i + 1] != '"') return std::nullopt;
  const std::size_t close = line.find('"', i + 2);
  if (close == std::string_view::npos) return std::nullopt;
  return std::make_pair(n, line.substr(i + 2, close - i - 2));
}

// Every `from` in `text` replaced by `to`.
std::string ReplaceAll(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(text.size());
  std::size_t at = 0;
  for (std::size_t hit; !from.empty() && (hit = text.find(from, at)) != std::string_view::npos;
       at = hit + from.size()) {
    out.append(text.substr(at, hit - at));
    out.append(to);
  }
  out.append(text.substr(at));
  return out;
}

// The quoted `.cudafe1.cpp` input and the quoted `-o` output of the host compile line.
struct FinalFiles {
  std::string input;
  std::string output;
};
std::optional<FinalFiles> FilesOf(const std::string& final) {
  static const std::regex kInput("\"([^\"]+\\.cudafe1\\.cpp)\"");
  static const std::regex kOutput(" -o \"([^\"]+)\"");
  std::smatch in, out;
  if (!std::regex_search(final, in, kInput) || !std::regex_search(final, out, kOutput)) return std::nullopt;
  return FinalFiles{in[1].str(), out[1].str()};
}

}  // namespace

std::optional<CudafeSplit> SplitCudafeOutput(std::string_view text, int first_own_line) {
  const std::size_t first_end = text.find('\n');
  auto first = LineMarker(text.substr(0, first_end));
  if (!first || first_end == std::string_view::npos) return std::nullopt;
  const std::string_view main_file = first->second;
  for (std::size_t at = first_end + 1; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    auto marker = LineMarker(text.substr(at, end - at));
    if (marker && marker->second == main_file && marker->first >= first_own_line) {
      return CudafeSplit{text.substr(0, at), text.substr(at), std::string(main_file)};
    }
    at = end + 1;
  }
  return std::nullopt;
}

std::string HostPchKey(const std::string& final, const CudafeSplit& split, const std::string& compiler_identity) {
  std::string command = final;
  if (auto files = FilesOf(final)) {
    command = ReplaceAll(ReplaceAll(command, "\"" + files->input + "\"", "IN"), "\"" + files->output + "\"", "OUT");
  }
  static const std::regex kName(" -DTORCH_EXTENSION_NAME=[^ ]*");
  command = std::regex_replace(command, kName, "");
  Sha256 hash;
  hash.Update("nvcc-host-pch-v1\n" + compiler_identity + "\n" + command + "\n");
  hash.Update(ReplaceAll(split.prefix, "\"" + split.main_file + "\"", "\"cuda.cu\""));
  return hash.HexDigest();
}

HostCompile RunHostCompile(const std::string& final, int first_own_line, const ArtifactCache& cache,
                           const RunLine& run_line) {
  HostCompile out;
  auto plain = [&] {
    out.run = run_line(final, {});
    return std::move(out);
  };
  if (const char* off = std::getenv("ANVIL_HOST_PCH"); off != nullptr && std::string(off) == "0") return plain();
  auto files = FilesOf(final);
  if (!files) return plain();
  auto text = ReadFile(files->input);
  if (!text.ok()) return plain();
  auto split = SplitCudafeOutput(text.value(), first_own_line);
  if (!split) return plain();
  const std::string program = final.substr(0, final.find(' '));
  const std::string key = HostPchKey(final, *split, CompilerIdentity(program));

  if (auto dir = cache.Lookup(key)) {
    // Same file name, so the object is the same (static initializers are
    // named after it); the registration code it includes is found beside it.
    const std::string own = "#include \"" + (*dir / kHostPchHeader).string() + "\"\n" + std::string(split->rest);
    if (!WriteFileAtomic(files->input, own).ok()) return plain();
    out.run = run_line(ReplaceAll(final, " -c ", " -Winvalid-pch -c "), {});
    out.use = "cached";
    if (out.run.ok() && out.run.value().Succeeded()) {
      out.log += "[anvil] nvcc's host compile used the precompiled torch part in " + dir->string() + "\n";
      return out;
    }
    // Whatever went wrong, nvcc's own file decides.
    out.log +=
        "[anvil] the host compile with the precompiled torch part failed; compiling cudafe++'s output as it is\n";
    out.use = "";
    if (!WriteFileAtomic(files->input, text.value()).ok()) return out;
    out.run = run_line(final, {});
    return out;
  }

  // None yet. A flag set seen for the first time only leaves a mark: a PCH
  // (~270 MB) is made for the flag sets that come back, by one builder beside
  // its plain compile; the others do not wait for it.
  const std::string seen = Sha256Hex("nvcc-host-pch-seen\n" + key);
  if (!cache.Lookup(seen)) {
    if (auto mark = cache.Scratch(); mark.ok()) (void)cache.Publish(seen, mark.value());
    return plain();
  }
  FileLock lock(cache.LockPath(key), /*wait=*/false);
  if (!lock.held()) return plain();
  auto scratch = cache.Scratch();
  if (!scratch.ok()) return plain();
  const fs::path header = scratch.value() / kHostPchHeader;
  if (!WriteFileAtomic(header, std::string(split->prefix)).ok()) {
    (void)RemoveTree(scratch.value());
    return plain();
  }
  std::string build = ReplaceAll(final, "\"" + files->input + "\"", "-x c++-header \"" + header.string() + "\"");
  build = ReplaceAll(build, "\"" + files->output + "\"", "\"" + header.string() + ".gch\"");
  auto pch = std::async(std::launch::async, [&] { return run_line(build, scratch.value()); });
  out.run = run_line(final, {});
  auto built = pch.get();
  if (built.ok() && built.value().Succeeded()) {
    if (cache.Publish(key, scratch.value()).ok()) {
      out.use = "built";
      out.pch_seconds = built.value().wall_seconds;
      out.log += "[anvil] precompiled the torch part of nvcc's host compile in " +
                 std::to_string(out.pch_seconds).substr(0, 5) + " s (reused by later builds with these flags)\n";
    }
    return out;
  }
  out.log += "[anvil] could not precompile the torch part of nvcc's host compile: " +
             (built.ok() ? built.value().Describe() + " " + built.value().err.substr(0, 1000) : built.message()) + "\n";
  (void)RemoveTree(scratch.value());
  return out;
}

}  // namespace anvil
