#include "core/fixed.h"

#include <cstdio>

namespace anvil {

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace anvil
