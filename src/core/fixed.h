// A number as text with a fixed count of decimals ("%.*f"), for tables,
// reports and feedback. Pure; thread-safe.
#pragma once

#include <string>

namespace anvil {

// `v` with `digits` decimals: Fixed(1.256, 2) == "1.26".
std::string Fixed(double v, int digits);

}  // namespace anvil
