// What a model's answer holds: a candidate to judge, or one of the model's
// own failures — no code, an answer cut at the token limit, a refusal —
// which are outcomes without a verdict (reward -1, counted in every metric).
// Pure functions; thread-safe.
#pragma once

#include <string>

#include "gen/chat.h"

namespace anvil {

enum class AnswerKind { kCode, kNoCode, kTruncated, kRefused };

// "code", "no_code", "truncated", "refused".
const char* AnswerKindName(AnswerKind kind);

struct ExtractedAnswer {
  AnswerKind kind = AnswerKind::kNoCode;
  std::string code;       // The chosen block (also kept for a truncated answer).
  std::string format;     // "kernelbench" or "native" (kCode only).
  std::string extension;  // ".py", ".cpp" or ".cu" (kCode only).
};

// A candidate file's extension: ".py" for kernelbench, else ".cu" on cuda and
// ".cpp" elsewhere.
std::string CandidateExtension(const std::string& format, const std::string& backend);

// From one choice of an answer, for a run that asked for `format`
// ("kernelbench" or "native") on `backend`:
// - refused: message.refusal is set, or finish_reason is content_filter;
// - truncated: finish_reason is length;
// - else the code is a fenced block (``` ... ```; a last one left open runs
//   to the end): the last one tagged `answer`, else the last that holds the
//   asked format's entry point (class ModelNew / anvil_forward), else the
//   last one; none, or an empty one, is no_code.
// The format is the one the code shows (ModelNew: kernelbench; anvil_forward:
// native), else the asked one; a native source is .cu on cuda, else .cpp.
ExtractedAnswer ExtractAnswer(const ChatChoice& choice, const std::string& format, const std::string& backend);

}  // namespace anvil
