// Sizes in bytes as people type and read them (`anvil cache prune --max-size
// 50G`, the sizes `anvil cache list` prints). K, M, G and T are powers of 1024,
// as in `du -h`. Stateless.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace anvil {

// "4096", "500M", "1.5G", "2T", "50GB", "50GiB" (any case; blanks around are
// ignored). Error naming the text when it is not a size or does not fit.
Result<std::uintmax_t> ParseByteSize(std::string_view text);

// "512 B", "1.5 KiB", "720.3 MiB", "2.2 GiB".
std::string FormatBytes(std::uintmax_t bytes);

}  // namespace anvil
