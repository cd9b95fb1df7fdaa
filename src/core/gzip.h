// gzip (RFC 1952) through zlib: what a browser's DecompressionStream("gzip")
// reads back.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace anvil {

// `bytes` gzip-compressed at `level` (0 .. 9).
Result<std::string> Gzip(std::string_view bytes, int level = 6);

// The bytes of one gzip member. Error: not gzip, or cut short.
Result<std::string> Gunzip(std::string_view gz);

}  // namespace anvil
