#include "gen/extract_code.h"

#include <cctype>
#include <vector>

namespace anvil {
namespace {

struct Block {
  std::string tag;  // The fence's info string's first word, lower-case.
  std::string body;
};

// Lines that start (after spaces) with ``` open or close a block.
std::vector<Block> FencedBlocks(const std::string& text) {
  std::vector<Block> blocks;
  bool inside = false;
  std::size_t at = 0;
  while (at <= text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (at == text.size() && at > 0) break;  // Past the last line's newline: no line there.
    const std::string line = text.substr(at, end - at);
    const std::size_t first = line.find_first_not_of(" \t");
    const bool fence = first != std::string::npos && line.compare(first, 3, "```") == 0;
    if (fence && !inside) {
      std::string tag = line.substr(first + 3);
      tag = tag.substr(0, tag.find_first_of(" \t\r{"));
      for (char& c : tag) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      blocks.push_back({tag, ""});
      inside = true;
    } else if (fence && inside && line.find_first_not_of(" \t\r`", first) == std::string::npos) {
      inside = false;
    } else if (inside) {
      blocks.back().body += line + "\n";
    }
    if (end == text.size()) break;
    at = end + 1;
  }
  return blocks;
}

bool Blank(const std::string& s) { return s.find_first_not_of(" \t\r\n") == std::string::npos; }

const char* EntryPoint(const std::string& format) { return format == "native" ? "anvil_forward" : "class ModelNew"; }

}  // namespace

const char* AnswerKindName(AnswerKind kind) {
  switch (kind) {
    case AnswerKind::kCode:
      return "code";
    case AnswerKind::kNoCode:
      return "no_code";
    case AnswerKind::kTruncated:
      return "truncated";
    case AnswerKind::kRefused:
      return "refused";
  }
  return "no_code";
}

std::string CandidateExtension(const std::string& format, const std::string& backend) {
  return format == "kernelbench" ? ".py" : backend == "cuda" ? ".cu" : ".cpp";
}

ExtractedAnswer ExtractAnswer(const ChatChoice& choice, const std::string& format, const std::string& backend) {
  ExtractedAnswer a;
  const std::vector<Block> blocks = FencedBlocks(choice.content);
  const Block* chosen = nullptr;
  for (const Block& b : blocks) {
    if (b.tag == "answer") chosen = &b;
  }
  for (auto it = blocks.rbegin(); chosen == nullptr && it != blocks.rend(); ++it) {
    if (it->body.find(EntryPoint(format)) != std::string::npos) chosen = &*it;
  }
  if (chosen == nullptr && !blocks.empty()) chosen = &blocks.back();
  if (chosen != nullptr) a.code = chosen->body;
  if (!choice.refusal.empty() || choice.finish_reason == "content_filter") {
    a.kind = AnswerKind::kRefused;
  } else if (choice.finish_reason == "length") {
    a.kind = AnswerKind::kTruncated;
  } else if (chosen == nullptr || Blank(chosen->body)) {
    a.kind = AnswerKind::kNoCode;
  } else {
    a.kind = AnswerKind::kCode;
    const bool python = a.code.find("class ModelNew") != std::string::npos;
    const bool native = a.code.find("anvil_forward") != std::string::npos && !python;
    a.format = python ? "kernelbench" : native ? "native" : format;
    a.extension = CandidateExtension(a.format, backend);
  }
  return a;
}

}  // namespace anvil
