// Prompts as versioned data files (prompts/<id>/prompt.json and the files it
// names, written by us): a system message, a user template with {{name}}
// fields, a worked example and an instruction per backend and candidate
// format. Rendering fills each field of the template once, so code that holds
// braces or "{{" is never expanded again. Plain values; thread-safe.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "gen/chat.h"

namespace anvil {

inline constexpr const char* kDefaultPromptId = "kernelbench-one-shot";

struct PromptVariant {
  std::string example;      // The worked example's answer (file text).
  std::string language;     // Its fence language: python, cpp, cuda.
  std::string instruction;  // The instruction's text (a template itself).
};

struct PromptTemplate {
  std::string id;
  int version = 1;
  std::string system;                             // Template.
  std::string user;                               // Template.
  std::string example_reference;                  // The worked example's reference (file text).
  std::map<std::string, PromptVariant> variants;  // By "backend/format": "cpu/kernelbench", "cuda/native", ...
  std::map<std::string, std::string> devices;     // By backend: how the prompt names its device.
  // The prompt shows the task's spec (fields tensor_metadata and op_trace,
  // tasks/meta_spec.h): manifest "needs": ["spec"].
  bool needs_spec = false;
};

// prompts/ under anvil's source tree (core/environment.h SourceDir).
std::filesystem::path PromptsDir();

// Loads prompts_dir/<id>/prompt.json and its files. Errors name the file and
// what is wrong (unknown id: the ids there are listed).
Result<PromptTemplate> LoadPrompt(const std::string& id, const std::filesystem::path& prompts_dir = PromptsDir());

// Fills `text`'s {{name}} fields from `fields`. An unknown field is an error
// (a typo in a prompt file must not reach a model).
Result<std::string> FillTemplate(const std::string& text, const std::map<std::string, std::string>& fields);

// The first turn's messages for a task whose reference source is
// `reference`: the system message and the user message; `extra` adds fields
// (the spec's). Error when the prompt has no variant for (backend, format).
Result<std::vector<ChatMessage>> FirstTurnMessages(const PromptTemplate& prompt, const std::string& reference,
                                                   const std::string& backend, const std::string& format,
                                                   const std::map<std::string, std::string>& extra = {});

}  // namespace anvil
