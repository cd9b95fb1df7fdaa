// SHA-256 (FIPS 180-4), written here so cache keys and integrity records do
// not depend on an external crypto library. Sha256 is a plain value: one object
// must not be used from two threads at once; separate objects are independent.
// Sha256Hex is a pure function and thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace anvil {

// Incremental hasher. Update() any number of times, then HexDigest() once;
// after HexDigest() the object is reset and may hash a new message.
class Sha256 {
 public:
  static constexpr std::size_t kBlockBytes = 64;
  static constexpr std::size_t kDigestBytes = 32;

  Sha256();

  void Update(std::string_view data);
  // The 64-character lowercase hex digest of everything passed to Update().
  std::string HexDigest();

 private:
  void Reset();
  void Compress(const unsigned char* block);

  std::array<uint32_t, 8> state_;
  std::array<unsigned char, kBlockBytes> buffer_;
  std::size_t buffered_ = 0;  // Bytes waiting in buffer_.
  uint64_t total_bytes_ = 0;  // Message length so far.
};

// Lowercase hex SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);

}  // namespace anvil
