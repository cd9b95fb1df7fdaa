#include "service/auth.h"

#include <sys/stat.h>

#include <cctype>

#include "core/files.h"
#include "core/sha256.h"

namespace anvil {

Result<std::string> LoadToken(const std::filesystem::path& file) {
  struct stat st {};
  if (stat(file.c_str(), &st) != 0) return Status::Error("cannot read the token file " + file.string());
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    return Status::Error("the token file " + file.string() + " can be read by others: chmod 600 it");
  }
  auto text = ReadFile(file);
  if (!text.ok()) return Status::Error("cannot read the token file " + file.string() + ": " + text.message());
  std::string token = text.value();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  for (char c : token) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      return Status::Error("the token file " + file.string() + " holds whitespace inside its token");
    }
  }
  if (token.size() < 16) {
    return Status::Error("the token in " + file.string() +
                         " is under 16 characters: make one with `openssl rand -hex 32`");
  }
  return token;
}

bool SameToken(const std::string& a, const std::string& b) {
  // Digests of equal length, compared without an early exit: neither a
  // token's length nor where it differs shows in the time taken.
  const std::string x = Sha256Hex(a), y = Sha256Hex(b);
  unsigned char diff = 0;
  for (std::size_t i = 0; i < x.size(); ++i) diff |= static_cast<unsigned char>(x[i] ^ y[i]);
  return diff == 0;
}

std::string BearerToken(const std::string& authorization) {
  const std::string scheme = "bearer ";
  if (authorization.size() <= scheme.size()) return "";
  for (std::size_t i = 0; i < scheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != scheme[i]) return "";
  }
  std::size_t at = scheme.size();
  while (at < authorization.size() && authorization[at] == ' ') ++at;
  return authorization.substr(at);
}

bool IsLoopbackHostHeader(const std::string& host_header) {
  std::string host = host_header;
  if (!host.empty() && host.front() == '[') {
    const std::size_t close = host.find(']');
    if (close == std::string::npos) return false;
    const std::string rest = host.substr(close + 1);
    if (!rest.empty() && (rest[0] != ':' || rest.size() == 1)) return false;
    return host.substr(1, close - 1) == "::1";
  }
  if (const std::size_t colon = host.find(':'); colon != std::string::npos) {
    const std::string port = host.substr(colon + 1);
    if (port.empty()) return false;
    for (char c : port) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    }
    host = host.substr(0, colon);
  }
  for (char& c : host) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return host == "localhost" || host == "127.0.0.1";
}

}  // namespace anvil
