#include "integrity/source_scan.h"

#include <cxxabi.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "integrity/source_text.h"
#include "integrity/source_vocabulary.h"

namespace anvil {
namespace {

constexpr char kCheat[] = "cheat";
constexpr char kEvidence[] = "evidence";
constexpr size_t kMaxExcerpt = 240;
constexpr int kMaxTemplateTokens = 64;
constexpr size_t kMaxReceiverTokens = 256;

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

class Scanner {
 public:
  Scanner(std::string_view text, std::string_view source) : text_(text), source_(source), lines_(SplitLines(text)) {}

  std::vector<RuleHit> Run() {
    clean_ = StripCommentsAndLiterals(text_, &strings_);
    const std::string& clean = clean_;
    ScanDirectives(clean);
    ScanStrings(strings_);
    tokens_ = Tokenize(clean);
    CollectNames();
    for (size_t i = 0; i < tokens_.size(); ++i) {
      if (tokens_[i].ident) ScanIdent(i);
    }
    std::stable_sort(hits_.begin(), hits_.end(), [](const RuleHit& a, const RuleHit& b) {
      return a.line != b.line ? a.line < b.line : a.column < b.column;
    });
    return std::move(hits_);
  }

 private:
  std::string_view Text(size_t i) const { return i < tokens_.size() ? tokens_[i].text : std::string_view(); }

  void Hit(std::string_view rule, std::string_view severity, int line, int column, std::string message) {
    if (!seen_.emplace(std::string(rule), line).second) return;
    std::string_view excerpt = line >= 1 && line <= static_cast<int>(lines_.size()) ? lines_[line - 1] : "";
    while (!excerpt.empty() && std::isspace(static_cast<unsigned char>(excerpt.front()))) excerpt.remove_prefix(1);
    while (!excerpt.empty() && std::isspace(static_cast<unsigned char>(excerpt.back()))) excerpt.remove_suffix(1);
    hits_.push_back({std::string(rule), std::string(severity), line, column,
                     std::string(excerpt.substr(0, kMaxExcerpt)), std::move(message), std::string(source_)});
  }
  void Hit(std::string_view rule, std::string_view severity, size_t i, std::string message) {
    Hit(rule, severity, tokens_[i].line, tokens_[i].column, std::move(message));
  }

  // #include paths and `##` inside #define (continuation lines included).
  void ScanDirectives(std::string_view clean) {
    bool in_define = false;
    int line = 0;
    for (std::string_view l : SplitLines(clean)) {
      ++line;
      const size_t first = l.find_first_not_of(" \t");
      if (first != std::string_view::npos && l[first] == '#') {
        const size_t word = l.find_first_not_of(" \t", first + 1);
        const std::string_view name = word == std::string_view::npos ? "" : l.substr(word);
        in_define = StartsWith(name, "define");
        if (StartsWith(name, "include")) CheckInclude(name.substr(7), line, static_cast<int>(word) + 1);
        if (StartsWith(name, "embed")) {
          Hit("cpp.file_access", kCheat, line, static_cast<int>(word) + 1, "reads a file into the build (#embed)");
        }
      }
      const size_t paste = l.find("##");
      if (in_define && paste != std::string_view::npos) {
        Hit("cpp.token_paste", kEvidence, line, static_cast<int>(paste) + 1, "token pasting (##) in a #define");
      }
      const size_t last = l.find_last_not_of(" \t\r");
      in_define = in_define && last != std::string_view::npos && l[last] == '\\';
    }
  }

  // Paths in string literals (blanked for the token scan): a memory file of
  // this or another process, anvil's cache (catalog D4, D6).
  // Adjacent literals are one string ("/pro" "c/self/maps").
  void ScanStrings(const std::vector<std::pair<size_t, size_t>>& strings) {
    for (size_t k = 0; k < strings.size();) {
      const size_t begin = strings[k].first;
      std::string s(text_.substr(begin, strings[k].second - begin));
      for (++k; k < strings.size(); ++k) {
        const std::string_view between = clean_.substr(strings[k - 1].second, strings[k].first - strings[k - 1].second);
        if (between.find_first_not_of(" \t\r\n\"") != std::string_view::npos) break;
        s += text_.substr(strings[k].first, strings[k].second - strings[k].first);
      }
      s.erase(std::remove(s.begin(), s.end(), '"'), s.end());
      const std::string_view before = text_.substr(0, begin);
      const int line = static_cast<int>(std::count(before.begin(), before.end(), '\n')) + 1;
      const size_t line_begin = before.rfind('\n');
      const int column = static_cast<int>(begin - (line_begin == std::string_view::npos ? 0 : line_begin + 1)) + 1;
      for (std::string_view fragment : v_.string_python) {
        if (s.find(fragment) != std::string::npos) {
          Hit("cpp.python_api", kCheat, line, column, "names Python's " + std::string(fragment) + " in a string");
          break;
        }
      }
      std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return std::tolower(ch); });
      for (std::string_view fragment : v_.string_paths) {
        if (s.find(fragment) == std::string::npos) continue;
        Hit("cpp.file_access", kCheat, line, column, "names " + std::string(fragment) + " in a string");
        break;
      }
    }
  }

  void CheckInclude(std::string_view rest, int line, int column) {
    std::string path(rest.substr(std::min(rest.find_first_not_of(" \t"), rest.size())));
    const std::string message = "includes " + path;
    std::transform(path.begin(), path.end(), path.begin(), [](unsigned char ch) { return std::tolower(ch); });
    auto any_in = [&](const NameSet& fragments) {
      return std::any_of(fragments.begin(), fragments.end(),
                         [&](std::string_view f) { return path.find(f) != std::string::npos; });
    };
    if (any_in(v_.include_primitives)) return Hit("cpp.vendor_library", kEvidence, line, column, message);
    if (any_in(v_.include_vendor)) return Hit("cpp.vendor_library", kCheat, line, column, message);
    if (any_in(v_.include_aten)) Hit("cpp.aten_compute", kEvidence, line, column, message);
    if (any_in(v_.include_loader)) Hit("cpp.native_tamper", kCheat, line, column, message + " (the loader's tables)");
    if (any_in(v_.string_paths)) Hit("cpp.file_access", kCheat, line, column, message);
  }

  // Namespace aliases of at/torch, `using` declarations, and variables declared as tensors.
  // Whether `at::<name>` (a namespace under ATen's roots) holds no compute: at::vec, at::cuda, torch::indexing.
  bool QuietNamespace(std::string_view name) const {
    return v_.aten_quiet_namespaces.count(name) > 0 || name == "indexing";
  }

  void CollectNames() {
    CollectTypes();
    for (size_t i = 0; i + 3 < tokens_.size(); ++i) {
      const std::string_view t = Text(i);
      if (tokens_[i].ident && Text(i + 1) == "(" && DefinesFunction(i)) defined_.insert(t);
      // The candidate's own lambdas and function objects: `auto gelu = [](float v) { ... };`.
      if (t == "auto" && tokens_[i + 1].ident && Text(i + 2) == "=" && Text(i + 3) == "[") defined_.insert(Text(i + 1));
      // `namespace q = ::at::cpu;`, `using namespace ::at;`: the global scope spelled out.
      const size_t alias = Text(i + 3) == "::" ? i + 4 : i + 3;
      const size_t used = Text(i + 2) == "::" ? i + 3 : i + 2;
      if (t == "namespace" && tokens_[i + 1].ident && Text(i + 2) == "=" && IsAtenRoot(Text(alias))) {
        // `namespace vec = at::vec;` (ATen's own idiom) names no compute.
        if (!(Text(alias + 1) == "::" && QuietNamespace(Text(alias + 2)))) aten_roots_.insert(Text(i + 1));
      } else if (t == "using" && Text(i + 1) == "namespace" && IsAtenRoot(Text(used))) {
        if (!(Text(used + 1) == "::" && QuietNamespace(Text(used + 2)))) using_aten_namespace_ = true;
      } else if (t == "using" && IsAtenRoot(Text(i + 1)) && Text(i + 2) == "::") {
        size_t j = i + 1;
        while (Text(j + 1) == "::" && j + 2 < tokens_.size() && tokens_[j + 2].ident) j += 2;
        if (!std::isupper(static_cast<unsigned char>(Text(j)[0])) && !v_.aten_allowed.count(Text(j))) {
          using_names_.insert(Text(j));
        }
      } else if (t == "Tensor" && (!own_tensor_type_ || (i >= 2 && Text(i - 1) == "::" && IsAtenRoot(Text(i - 2))))) {
        size_t j = i + 1;
        while (Text(j) == "const" || Text(j) == "&" || Text(j) == "*" || Text(j) == "&&") ++j;
        if (j < tokens_.size() && tokens_[j].ident && Text(j + 1) != "(" && Text(j + 1) != "::") {
          tensor_vars_.insert(Text(j));
        }
      } else if (t == "auto" && tokens_[i + 1].ident && Text(i + 2) == "=" &&
                 (IsAtenRoot(Text(i + 3)) || tensor_vars_.count(Text(i + 3))) &&
                 !(Text(i + 4) == "::" && v_.aten_quiet_namespaces.count(Text(i + 5)))) {  // at::vec::, at::cuda::
        tensor_vars_.insert(Text(i + 1));
      }
    }
  }

  bool IsAtenRoot(std::string_view t) const { return t == "at" || t == "torch" || aten_roots_.count(t); }

  // The types the source names that are not tensors (its own structs and aliases, C++'s arithmetic types,
  // ATen's SIMD vectors), and the variables declared with them (`Vec v = Vec::loadu(p);`, `Stats stats;`, a
  // parameter `(Vec x)`): their methods (`.erf()`, `.add(v)`) are not tensor compute.
  void CollectTypes() {
    for (std::string_view t :
         {"float",      "double",  "int",           "long",     "short",    "char", "bool",   "unsigned",
          "int64_t",    "int32_t", "uint32_t",      "uint64_t", "size_t",   "half", "float2", "float4",
          "Vectorized", "__half",  "__nv_bfloat16", "half2",    "BFloat16", "Half"}) {
      own_types_.insert(t);
    }
    for (size_t i = 0; i + 2 < tokens_.size(); ++i) {
      const std::string_view t = Text(i);
      if ((t == "struct" || t == "class") && tokens_[i + 1].ident) {
        own_types_.insert(Text(i + 1));
        if (Text(i + 1) == "Tensor") own_tensor_type_ = true;
      } else if (t == "using" && tokens_[i + 1].ident && Text(i + 2) == "=") {
        own_types_.insert(Text(i + 1));
      } else if (t == "typedef") {
        size_t j = i + 1;
        while (j < tokens_.size() && Text(j) != ";") ++j;
        if (j > i + 1 && tokens_[j - 1].ident) own_types_.insert(Text(j - 1));
      }
    }
    for (size_t i = 0; i + 1 < tokens_.size(); ++i) {
      if (!tokens_[i].ident || !own_types_.count(Text(i)) || Text(i + 1) == "::") continue;
      // The declarators of one declaration: `const Vec half(0.5f), one(1.0f);`.
      size_t j = SkipTemplate(i + 1);
      for (int depth = 0; j < tokens_.size(); ++j) {
        const std::string_view w = Text(j);
        if (w == "(" || w == "[" || w == "{") ++depth;
        if (w == ")" || w == "]" || w == "}") {
          if (--depth < 0) break;
        }
        if (depth == 0 && (w == ";" || w == "=")) break;
        if (depth == 0 && tokens_[j].ident &&
            (Text(j - 1) == "," || j == SkipTemplate(i + 1) || Text(j - 1) == "&" || Text(j - 1) == "*" ||
             Text(j - 1) == "const")) {
          other_vars_.insert(w);
        }
      }
    }
  }

  // Whether the receiver whose access is at token `dot` is a value of the source's own non-tensor types: a
  // variable declared with one (and never as a tensor), a type's static call (`Vec::loadu(p).exp()`), or a
  // parenthesized expression of such values and numbers (`(v * inv_sqrt2).erf()`).
  bool OwnValue(size_t dot) const {
    auto own_var = [&](std::string_view name) { return other_vars_.count(name) && !tensor_vars_.count(name); };
    if (dot == 0) return false;
    if (Text(dot - 1) != ")") {
      const std::string_view root = ReceiverRoot(dot);
      return own_var(root) || own_types_.count(root);
    }
    // The group's opening parenthesis, and whether every name inside is an own value, type or number.
    size_t j = dot - 1;
    bool all_own = true;
    for (int depth = 0;; --j) {
      if (Text(j) == ")") ++depth;
      if (Text(j) == "(" && --depth == 0) break;
      if (tokens_[j].ident && !own_var(Text(j)) && !own_types_.count(Text(j))) all_own = false;
      if (j == 0) return false;
    }
    if (j == 0 || !tokens_[j - 1].ident) return all_own;  // (v * k).erf()
    // A call's result: the source's own function, or a type's constructor or static method (Vec::loadu(p).exp()).
    const std::string_view callee = Text(j - 1);
    return defined_.count(callee) || own_types_.count(callee) ||
           (j >= 3 && Text(j - 2) == "::" && own_types_.count(Text(j - 3)));
  }

  // Index of the first token after a template argument list starting at `i` (or `i` itself).
  // Whether the identifier at i, followed by "(", names a function the
  // source defines here: a return type before it, a body after its
  // parameters (`float relu(float v) const {`).
  bool DefinesFunction(size_t i) const {
    if (i == 0) return false;
    const std::string_view before = Text(i - 1);
    const bool typed =
        (tokens_[i - 1].ident && before != "return" && before != "else" && before != "new" && before != "case" &&
         before != "throw" && before != "co_return") ||
        before == "*" || before == "&" || before == ">" ||
        // Out of its class: `float SeluParams::elu(float v) const {`.
        (before == "::" && i >= 2 && tokens_[i - 2].ident && !IsAtenRoot(Text(i - 2)) && Text(i - 2) != "std");
    if (!typed) return false;
    size_t j = i + 1;
    for (int depth = 0; j < tokens_.size(); ++j) {
      if (Text(j) == "(") ++depth;
      if (Text(j) == ")" && --depth == 0) break;
    }
    for (++j; j < tokens_.size(); ++j) {
      const std::string_view w = Text(j);
      if (w != "const" && w != "noexcept" && w != "override" && w != "final" && w != "mutable") break;
    }
    if (Text(j) == "->") {  // A trailing return type: `auto elu(float v) const -> float {`.
      for (++j; j < tokens_.size() && Text(j) != "{" && Text(j) != ";" && Text(j) != "="; ++j) {
      }
    }
    return j < tokens_.size() && Text(j) == "{";
  }

  size_t SkipTemplate(size_t i) const {
    if (Text(i) != "<") return i;
    int depth = 0;
    for (size_t j = i; j < tokens_.size() && j < i + kMaxTemplateTokens; ++j) {
      if (Text(j) == "<") ++depth;
      if (Text(j) == ">" && --depth == 0) return j + 1;
      if (Text(j) == ";" || Text(j) == "{") break;
    }
    return i;
  }

  // The first identifier of the postfix expression whose member is accessed at token `dot`.
  std::string_view ReceiverRoot(size_t dot) const {
    size_t j = dot;
    const size_t floor = dot > kMaxReceiverTokens ? dot - kMaxReceiverTokens : 0;
    while (j > floor) {
      --j;
      const std::string_view t = Text(j);
      if (t == ")" || t == "]") {
        const std::string_view open = t == ")" ? "(" : "[";
        int depth = 0;
        for (;; --j) {
          if (Text(j) == t) ++depth;
          if (Text(j) == open && --depth == 0) break;
          if (j <= floor) return "";
        }
        continue;
      }
      if (!tokens_[j].ident) return "";
      if (j >= 1 && (Text(j - 1) == "." || Text(j - 1) == "->" || Text(j - 1) == "::")) {
        --j;
        continue;
      }
      return t;
    }
    return "";
  }

  // Inline assembly that enters the kernel (x86 `syscall`, `sysenter`,
  // `int $0x80`; Arm `svc`): a system call no source or symbol scan names; or
  // that emits raw bytes or a file (`.byte 0x0f,0x05`, `.incbin`). What it
  // does, or "" when neither.
  std::string AsmProblem(size_t i) const {
    size_t open = clean_.find('(', static_cast<size_t>(tokens_[i].text.data() - clean_.data()));
    if (open == std::string::npos) return "";
    size_t close = open;
    for (int depth = 0; close < clean_.size(); ++close) {
      if (clean_[close] == '(') ++depth;
      if (clean_[close] == ')' && --depth == 0) break;
    }
    // The statement as written, its comments left out (its strings are the point).
    std::string body;
    const std::string_view raw = text_.substr(open, close - open);
    for (size_t k = 0; k < raw.size(); ++k) {
      if (raw.compare(k, 2, "//") == 0) {
        k = raw.find('\n', k);
        if (k == std::string_view::npos) break;
      } else if (raw.compare(k, 2, "/*") == 0) {
        k = raw.find("*/", k + 2);
        if (k == std::string_view::npos) break;
        ++k;
      } else {
        body += static_cast<char>(std::tolower(static_cast<unsigned char>(raw[k])));
      }
    }
    for (const char* entry : {"syscall", "sysenter", "int $0x80", "int 0x80", "svc #0", "svc 0"}) {
      if (body.find(entry) != std::string::npos) return "makes a system call in inline assembly";
    }
    for (std::string_view directive : v_.asm_data) {
      for (size_t at = body.find(directive); at != std::string::npos; at = body.find(directive, at + 1)) {
        const size_t end = at + directive.size();
        const bool word_start = at == 0 || !IsIdentChar(body[at - 1]);
        const bool word_end = end >= body.size() || (!IsIdentChar(body[end]) && body[end] != '.');
        if (word_start && word_end) {
          return "emits raw bytes or a file in inline assembly (" + std::string(directive) + ")";
        }
      }
    }
    return "";
  }

  // The text of the string literals inside the parentheses after token i (`asm("pthread_create")`).
  std::string AsmString(size_t i) const {
    const size_t open = clean_.find('(', static_cast<size_t>(tokens_[i].text.data() - clean_.data()));
    if (open == std::string::npos) return "";
    size_t close = open;
    for (int depth = 0; close < clean_.size(); ++close) {
      if (clean_[close] == '(') ++depth;
      if (clean_[close] == ')' && --depth == 0) break;
    }
    std::string s;
    for (const auto& [begin, end] : strings_) {
      if (begin <= open || end > close || end - begin < 2) continue;
      s += text_.substr(begin + 1, end - begin - 2);  // Without its quotes.
    }
    return s;
  }

  // An asm label (`int start(...) asm("pthread_create");`): the declaration names the symbol in the string, so
  // the rules judge that name as if it were written out (demangled when mangled).
  void ScanAsmLabel(size_t i) {
    if (i == 0 || (Text(i - 1) != ")" && !tokens_[i - 1].ident && Text(i - 1) != "]")) return;
    std::string label = AsmString(i);
    while (!label.empty() && IsSpace(label.back())) label.pop_back();
    if (label.empty() || !std::all_of(label.begin(), label.end(),
                                      [](char c) { return IsIdentChar(c) || c == '.' || c == '$' || c == '@'; })) {
      return;
    }
    std::string name = label.substr(0, label.find('@'));
    if (StartsWith(name, "_Z")) {
      int status = 0;
      char* demangled = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
      if (status == 0 && demangled != nullptr) name = demangled;
      std::free(demangled);
      name = name.substr(0, name.find('('));
    }
    const std::string said = " (asm label \"" + label + "\")";
    const std::string_view bare =
        std::string_view(name).substr(name.rfind("::") == std::string::npos ? 0 : name.rfind("::") + 2);
    auto starts_any = [&](const NameSet& prefixes) {
      return std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view p) { return StartsWith(name, p); });
    };
    if (v_.process_calls.count(name)) return Hit("cpp.process", kCheat, i, "controls processes" + said);
    if (v_.tamper_calls.count(name) || v_.loader_tables.count(name)) {
      return Hit("cpp.native_tamper", kCheat, i, "loads code, patches memory or walks the loader" + said);
    }
    if (v_.file_calls.count(name)) return Hit("cpp.file_access", kCheat, i, "accesses files or the environment" + said);
    if (v_.signal_calls.count(name)) return Hit("cpp.signal", kCheat, i, "installs a signal handler or timer" + said);
    if (name == "pthread_create" || name == "thrd_create" || name == "GOMP_parallel_start" ||
        StartsWith(name, "std::thread")) {
      return Hit("cpp.thread", kCheat, i, "starts a thread" + said);
    }
    if (starts_any(v_.python_run_prefixes)) return Hit("cpp.python_api", kCheat, i, "runs Python" + said);
    if (starts_any(v_.vendor_prefixes)) return Hit("cpp.vendor_library", kCheat, i, "uses a vendor library" + said);
    if ((StartsWith(name, "at::") || StartsWith(name, "torch::")) && IsAtenComputeName(bare)) {
      return Hit("cpp.aten_compute", kCheat, i, "calls ATen compute" + said);
    }
  }

  // `::at` at the start of an expression (after `return`, `=`, `(`): the global scope, not a member's.
  bool GlobalScoped(size_t i) const {
    return i >= 1 && Text(i - 1) == "::" &&
           (i < 2 || !tokens_[i - 2].ident || v_.expression_keywords.count(Text(i - 2)));
  }

  void ScanIdent(size_t i) {
    const std::string_view t = Text(i);
    if (t == "asm" || t == "__asm__" || t == "__asm") {
      if (const std::string problem = AsmProblem(i); !problem.empty()) {
        Hit("cpp.native_tamper", kCheat, i, problem + " (" + std::string(t) + ")");
        return;
      }
      return ScanAsmLabel(i);
    }
    if (v_.loader_tables.count(t)) {
      Hit("cpp.native_tamper", kCheat, i, "walks the dynamic loader's tables (" + std::string(t) + ")");
      return;
    }
    for (std::string_view p : v_.python_run_prefixes) {
      if (StartsWith(t, p)) {
        Hit("cpp.python_api", kCheat, i, "runs Python from native code (" + std::string(t) + ")");
        return;
      }
    }
    if (v_.pybind_run.count(t) && i >= 2 && Text(i - 1) == "::" &&
        (Text(i - 2) == "module" || Text(i - 2) == "module_" || Text(i - 2) == "py" || Text(i - 2) == "pybind11")) {
      Hit("cpp.python_api", kCheat, i,
          "runs Python from native code (" + std::string(Text(i - 2)) + "::" + std::string(t) + ")");
      return;
    }
    const std::string_view prev = i > 0 ? Text(i - 1) : "";
    const bool member = prev == "." || prev == "->";
    const bool qualified = prev == "::";
    // `(addmm)(b, x, w)`: the parentheses call it too (and turn off argument-dependent lookup).
    const bool call = Text(SkipTemplate(i + 1)) == "(" || (prev == "(" && Text(i + 1) == ")" && Text(i + 2) == "(");
    auto hit = [&](std::string_view rule, std::string_view severity, std::string_view what) {
      Hit(rule, severity, i, std::string(what) + " (" + std::string(t) + ")");
    };
    for (std::string_view p : v_.vendor_prefixes) {
      if (StartsWith(t, p)) return hit("cpp.vendor_library", kCheat, "uses a vendor library");
    }
    if (!qualified && v_.vendor_namespaces.count(t) && Text(i + 1) == "::") {
      const std::string_view next = Text(i + 2);
      const bool primitive =
          t == "cute" ||
          (t == "cub" && (StartsWith(next, "Block") || StartsWith(next, "Warp") || StartsWith(next, "Thread")));
      return Hit("cpp.vendor_library", primitive ? kEvidence : kCheat, i,
                 "uses a vendor library (" + std::string(t) + "::" + std::string(next) + ")");
    }
    if (v_.l2_persist.count(t)) return hit("cpp.l2_persist", kCheat, "pins data in L2");
    for (std::string_view p : v_.stream_create_prefixes) {
      if (StartsWith(t, p)) return hit("cpp.stream_create", kEvidence, "creates a stream");
    }
    const std::string_view next = Text(i + 2);
    const bool thread_query = Text(i + 3) == "::" && (Text(i + 4) == "hardware_concurrency" || Text(i + 4) == "id");
    if (t == "pthread_create" || t == "GOMP_parallel_start" ||
        ((t == "std" || t == "boost") && Text(i + 1) == "::" &&
         (next == "thread" || next == "jthread" || next == "async") && !thread_query)) {
      return hit("cpp.thread", kCheat, "starts a thread");
    }
    if (t == "cudaLaunchHostFunc" || t == "cudaStreamAddCallback") {
      return hit("cpp.thread", kEvidence, "runs a host callback");
    }
    const bool free_call = call && !member && (!qualified || i < 2 || !tokens_[i - 2].ident || Text(i - 2) == "std");
    // The function taken as a value (`auto f = &std::fopen;`): the call
    // through the pointer is not a call by that name.
    const bool std_qualified = qualified && i >= 2 && Text(i - 2) == "std";
    const std::string_view before = std_qualified ? (i >= 3 ? Text(i - 3) : "") : prev;
    const std::string_view after = Text(i + 1);
    const bool as_value = !call && !member && (!qualified || std_qualified) &&
                          (before == "&" || before == "=" || before == "(" || before == ",") &&
                          (after == ";" || after == "," || after == ")") &&
                          (before == "&" || std_qualified || (t != "open" && t != "rename"));
    const bool named = (free_call || as_value) && !defined_.count(t);  // Its own clone() is not libc's.
    if (named && v_.process_calls.count(t)) return hit("cpp.process", kCheat, "controls processes");
    if (named && v_.tamper_calls.count(t)) return hit("cpp.native_tamper", kCheat, "loads code or patches memory");
    if (named && v_.file_calls.count(t)) return hit("cpp.file_access", kCheat, "accesses files or the environment");
    if (named && v_.signal_calls.count(t) && !defined_.count(t)) {
      return hit("cpp.signal", kCheat, "installs a signal handler or timer: code that runs after the call returned");
    }
    if (free_call && t == "getenv") return hit("cpp.file_access", kEvidence, "reads the environment");
    if (qualified && v_.file_types.count(t) && i >= 2 && Text(i - 2) == "std") {
      return hit("cpp.file_access", kCheat, "accesses files");
    }
    if (IsAtenRoot(t) && Text(i + 1) == "::" && (!qualified || GlobalScoped(i))) return ScanAtenName(i);
    if (member && call) return ScanMethod(i);
    if (call && !qualified && !defined_.count(t) &&
        ((using_aten_namespace_ && v_.strong_compute.count(t)) || using_names_.count(t))) {
      hit("cpp.aten_compute", kCheat, "calls ATen compute through a using-declaration");
    }
  }

  // `at::x::y(` or `torch::y` starting at token i.
  void ScanAtenName(size_t i) {
    std::vector<std::string_view> parts = {Text(i)};
    size_t j = i;
    while (Text(j + 1) == "::" && j + 2 < tokens_.size() && tokens_[j + 2].ident) {
      j += 2;
      parts.push_back(Text(j));
    }
    std::string name;
    for (std::string_view p : parts) name += (name.empty() ? "" : "::") + std::string(p);
    const std::string_view last = parts.back();
    for (std::string_view p : parts) {
      if (v_.vendor_handles.count(p)) return Hit("cpp.vendor_library", kCheat, i, "uses a vendor library: " + name);
    }
    if (last == "getStreamFromPool") return Hit("cpp.stream_create", kEvidence, i, "takes a new stream: " + name);
    if (last == "launch") return Hit("cpp.thread", kCheat, i, "runs work on a thread pool (" + name + ")");
    if (parts.size() < 2) return;
    if (parts[1] == "nn") return Hit("cpp.aten_compute", kCheat, i, "uses torch::nn (" + name + ")");
    // ATen's kernels past the dispatcher (at::cpu::mm), called or taken as a value: no trace sees them run.
    if (parts.size() > 2 && v_.aten_kernel_namespaces.count(parts[1]) && !v_.aten_allowed.count(last)) {
      return Hit("cpp.aten_compute", kCheat, i, "uses an ATen kernel past the dispatcher (" + name + ")");
    }
    if (v_.aten_quiet_namespaces.count(parts[1])) {
      if (parts.size() > 2 && IsAtenComputeName(last)) {
        Hit("cpp.aten_compute", kCheat, i, "uses ATen compute (" + name + ")");  // at::cuda::mm
      }
      return;
    }
    const bool type_like = std::isupper(static_cast<unsigned char>(last[0])) ||
                           (last.size() > 1 && last[0] == 'k' && std::isupper(static_cast<unsigned char>(last[1])));
    if (type_like || v_.aten_allowed.count(last) || StartsWith(last, "check") || StartsWith(last, "is") ||
        StartsWith(last, "get") || StartsWith(last, "_assert") || StartsWith(last, "assert")) {
      return;
    }
    if (Text(SkipTemplate(j + 1)) == "(") {
      return Hit("cpp.aten_compute", kCheat, i, "calls ATen compute (" + name + ")");
    }
    if (IsAtenComputeName(last)) Hit("cpp.aten_compute", kCheat, i, "refers to ATen compute (" + name + ")");
  }

  void ScanMethod(size_t i) {
    const std::string_view t = Text(i);
    if (v_.strong_compute.count(t) && !defined_.count(t) && !OwnValue(i - 1)) {
      return Hit("cpp.aten_compute", kCheat, i, "calls tensor method ." + std::string(t) + "()");
    }
    if (!v_.generic_methods.count(t)) return;
    const std::string_view root = ReceiverRoot(i - 1);
    // A name declared both as a tensor and as a value of another type (in different functions) is not judged.
    if ((tensor_vars_.count(root) && !other_vars_.count(root)) || IsAtenRoot(root)) {
      Hit("cpp.aten_compute", kCheat, i, "calls tensor method ." + std::string(t) + "() on " + std::string(root));
    }
  }

  const Vocabulary& v_ = Vocab();
  std::string_view text_;
  std::string clean_;  // text_ without comments and literals, at the same offsets (tokens_ point into it).
  std::vector<std::pair<size_t, size_t>> strings_;  // Each string literal's [begin, end) in text_, quotes included.
  std::string_view source_;
  std::vector<std::string_view> lines_;
  std::vector<Token> tokens_;
  std::vector<RuleHit> hits_;
  std::set<std::pair<std::string, int>> seen_;
  NameSet aten_roots_;
  NameSet using_names_;
  NameSet defined_;  // Functions and methods the source defines itself: its own relu() is not ATen's.
  NameSet tensor_vars_;
  NameSet own_types_;             // Non-tensor types the source names (CollectTypes).
  NameSet other_vars_;            // Variables declared with them.
  bool own_tensor_type_ = false;  // The source defines a struct or class Tensor of its own (a native candidate).
  bool using_aten_namespace_ = false;
};

}  // namespace

bool IsAtenComputeName(std::string_view name) {
  const Vocabulary& v = Vocab();
  return v.strong_compute.count(name) > 0 || v.generic_methods.count(name) > 0;
}

std::vector<RuleHit> ScanNativeSource(std::string_view text, std::string_view source_name) {
  return Scanner(text, source_name).Run();
}

}  // namespace anvil
