#include "cli/table.h"

#include <algorithm>

namespace anvil {

std::string TextTable::Render() const {
  std::vector<std::size_t> width;
  for (const auto& row : rows_) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    std::string line;
    for (std::size_t i = 0; i < rows_[r].size(); ++i) {
      line += rows_[r][i];
      if (i + 1 < rows_[r].size()) line += std::string(width[i] - rows_[r][i].size() + 2, ' ');
    }
    out += line + "\n";
    if (r == 0) {
      std::size_t total = 0;
      for (std::size_t w : width) total += w + 2;
      out += std::string(total > 2 ? total - 2 : total, '-') + "\n";
    }
  }
  return out;
}

}  // namespace anvil
