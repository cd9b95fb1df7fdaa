#include "integrity/source_vocabulary.h"

#include <algorithm>

namespace anvil {

NameSet Words(std::string_view list) {
  NameSet words;
  size_t begin = 0;
  while ((begin = list.find_first_not_of(' ', begin)) != std::string_view::npos) {
    const size_t end = std::min(list.find(' ', begin), list.size());
    words.insert(list.substr(begin, end - begin));
    begin = end;
  }
  return words;
}

const Vocabulary& Vocab() {
  static const Vocabulary vocabulary;
  return vocabulary;
}

}  // namespace anvil
