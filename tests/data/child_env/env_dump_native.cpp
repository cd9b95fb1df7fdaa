// anvil-expect: runtime_error
// anvil-about: puts its environment (environ and /proc/self/environ: every name, and each entry that holds the
// marker `anvil-env-probe`) into anvil_last_error, which the verdict's feedback carries; anvil's own secrets (a
// model API key) must not be among them (tests/cli/test_child_environment.py)
#include <cstdio>
#include <cstring>
#include <string>

#include "anvil/native.h"

extern char** environ;

namespace {

const char kMarker[] = "anvil-env-probe";
std::string g_message;

// Appends each NUL-separated entry's name to `names` and the marked entries whole to `marked`.
void Collect(const char* entry, std::string* names, std::string* marked) {
  const char* eq = std::strchr(entry, '=');
  names->append(entry, eq != nullptr ? static_cast<std::size_t>(eq - entry) : std::strlen(entry));
  names->push_back(',');
  if (std::strstr(entry, kMarker) != nullptr) marked->append(entry).push_back(' ');
}

}  // namespace

ANVIL_EXPORT const char* anvil_last_error(void) { return g_message.c_str(); }

ANVIL_EXPORT int anvil_forward(const anvil_tensor* /*in*/, int /*n_in*/, anvil_tensor* /*out*/, int /*n_out*/,
                               void* /*stream*/) {
  std::string names, proc_names, marked;
  for (char** e = environ; *e != nullptr; ++e) Collect(*e, &names, &marked);
  if (FILE* f = std::fopen("/proc/self/environ", "rb"); f != nullptr) {
    std::string raw;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) raw.append(buf, n);
    std::fclose(f);
    for (std::size_t at = 0; at < raw.size(); at = raw.find('\0', at) + 1) {
      if (raw[at] != '\0') Collect(raw.c_str() + at, &proc_names, &marked);
      if (raw.find('\0', at) == std::string::npos) break;
    }
  } else {
    proc_names = "unreadable";
  }
  g_message = "names: " + names + " | proc: " + proc_names + " | marked: " + marked;
  return 1;
}
