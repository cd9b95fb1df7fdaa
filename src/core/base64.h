// Base64 (RFC 4648, the standard alphabet, padded): for hashes in a
// Content-Security-Policy and data embedded in a page.
#pragma once

#include <string>
#include <string_view>

namespace anvil {

std::string Base64(std::string_view bytes);

// The bytes of a hex string (two digits a byte); "" if it is not hex of even length.
std::string HexBytes(std::string_view hex);

}  // namespace anvil
