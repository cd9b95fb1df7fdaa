// Compiler diagnostics from g++/clang, nvcc (front end, ptxas, nvlink) and the
// linker, parsed out of raw build logs and mapped back onto the candidate's own
// file so a model sees `relu.py:14:9: error: ...` instead of a generated path.
// All functions are pure (no I/O, no shared state) and thread-safe. JSON
// conversion is left to the engine; nothing here depends on a JSON library.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace anvil {

struct Diagnostic {
  std::string file;      // As the compiler printed it; "" for linker/driver errors.
  int line = 0;          // 1-based; 0 when the compiler gave none.
  int column = 0;        // 1-based; 0 when the compiler gave none.
  std::string severity;  // "error" | "warning" | "note" | "fatal".
  std::string message;
  // The lines the compiler printed right after the diagnostic (source excerpt,
  // caret, fix-its), verbatim.
  std::vector<std::string> context;
  // Set by MapAndDedupe when file/line were rewritten to the candidate's file.
  bool in_candidate = false;
};

// Every diagnostic in `log`, in order. Lines that are not diagnostics
// ("In file included from", "In function", "required from here", summaries,
// ninja progress, remarks, ptxas info) are skipped. Never fails.
std::vector<Diagnostic> ParseDiagnostics(std::string_view log);

// One stretch of the candidate's text copied verbatim into a generated file.
struct SourceMap {
  std::string generated_file;    // Basename as the compiler printed it, e.g. "main.cpp".
  int first_line = 1;            // Where the text starts in the generated file, 1-based.
  int line_count = 0;            // Lines of candidate text.
  std::string candidate_file;    // Reported instead, e.g. "relu.py".
  int candidate_first_line = 1;  // Where the text starts in the candidate's file, 1-based.
};

struct DiagnosticOptions {
  std::size_t max_diagnostics = 20;  // Cap on the result, notes included.
  bool include_notes = false;        // Keep notes (except those in system headers).
};

// Rewrites diagnostics that fall inside a mapped region to the candidate's
// file and line (column kept), drops notes unless options.include_notes (and
// always those in system headers), removes exact duplicates of
// (file, line, column, severity, message), moves errors (and fatals) first
// keeping order, with each note staying behind the diagnostic it follows, and
// keeps at most options.max_diagnostics.
std::vector<Diagnostic> MapAndDedupe(std::vector<Diagnostic> diags, const std::vector<SourceMap>& maps,
                                     const DiagnosticOptions& options);

// Human-readable text, one `file:line:col: severity: message` line per
// diagnostic followed by an excerpt: for diagnostics in the candidate, the
// candidate's own line from `candidate_text` plus a caret at the column;
// otherwise the compiler's context lines.
std::string FormatDiagnostics(const std::vector<Diagnostic>& diags, std::string_view candidate_text_for_excerpts);

}  // namespace anvil
