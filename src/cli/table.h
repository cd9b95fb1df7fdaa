// Plain-text tables for the terminal: columns sized to their widest cell.
#pragma once

#include <string>
#include <vector>

namespace anvil {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : rows_{std::move(header)} {}
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string Render() const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace anvil
