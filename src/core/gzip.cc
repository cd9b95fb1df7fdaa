#include "core/gzip.h"

#include <zlib.h>

#include <cstring>

namespace anvil {
namespace {

constexpr int kGzipWindow = 15 + 16;  // zlib's window bits, plus 16: a gzip header and trailer.

}  // namespace

Result<std::string> Gzip(std::string_view bytes, int level) {
  z_stream z;
  std::memset(&z, 0, sizeof z);
  if (deflateInit2(&z, level, Z_DEFLATED, kGzipWindow, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Status::Error("zlib: cannot start compressing");
  }
  std::string out(deflateBound(&z, bytes.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return Status::Error("zlib: compressing failed (" + std::to_string(rc) + ")");
  return out;
}

Result<std::string> Gunzip(std::string_view gz) {
  z_stream z;
  std::memset(&z, 0, sizeof z);
  if (inflateInit2(&z, kGzipWindow) != Z_OK) return Status::Error("zlib: cannot start decompressing");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  std::string out;
  char buf[1 << 16];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
    if (rc == Z_BUF_ERROR && z.avail_in == 0) break;  // Input ended before the stream did.
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END) return Status::Error("not gzip, or cut short");
  return out;
}

}  // namespace anvil
