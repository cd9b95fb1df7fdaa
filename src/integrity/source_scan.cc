#include "integrity/source_scan.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "integrity/source_text.h"

namespace anvil {
namespace {

constexpr char kCheat[] = "cheat";
constexpr char kEvidence[] = "evidence";
constexpr size_t kMaxExcerpt = 240;
constexpr int kMaxTemplateTokens = 64;
constexpr size_t kMaxReceiverTokens = 256;

using NameSet = std::unordered_set<std::string_view>;

// The words of a space-separated list; the views point into `list`, a string literal.
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

struct Vocabulary {
  // at::/torch:: names that allocate, describe or view tensors (paper Appendix J plus metadata).
  NameSet aten_allowed = Words(
      "empty empty_like empty_strided zeros zeros_like ones ones_like full full_like from_blob arange rand randn "
      "randint rand_like randn_like randint_like tensor scalar_tensor dtype device layout requires_grad "
      "memory_format pinned_memory ceil_div globalContext parallel_for parallel_reduce irange toString "
      "typeMetaToScalarType elementSize infer_size manual_seed clone contiguous copy_ view reshape permute "
      "transpose squeeze unsqueeze expand flatten select slice as_strided alias broadcast_to narrow stride "
      "allclose equal item numel _local_scalar_dense in_parallel_region init_num_threads set_num_threads "
      "intraop_default_num_threads");
  // Namespaces under at::/torch:: that hold no compute (vendor-handle getters are caught before).
  NameSet aten_quiet_namespaces = Words("cuda detail autograd jit python library indexing hip mps xpu vec musa utils");
  // Compute names flagged without a call (`&at::mm`, `using at::mm;`) or on a receiver of unknown type.
  NameSet strong_compute = Words(
      "matmul mm bmm addmm addmv addbmm baddbmm mv relu relu_ softmax log_softmax sigmoid sigmoid_ tanh_ gelu "
      "silu index_select masked_fill masked_fill_ scatter_add scatter_add_ index_add_ cumsum cumprod logsumexp "
      "argmax argmin amax amin topk clamp clamp_ clamp_min clamp_max layer_norm softplus hardtanh leaky_relu elu "
      "lerp addcmul addcdiv rsqrt erf expm1 log1p nan_to_num einsum tril triu conv1d conv2d conv3d "
      "conv_transpose2d linear batch_norm group_norm instance_norm max_pool2d avg_pool2d adaptive_avg_pool2d "
      "dropout embedding scaled_dot_product_attention _scaled_mm cross_entropy");
  // Compute method names common elsewhere: flagged only when the receiver is a known tensor.
  NameSet generic_methods = Words(
      "sum mean max min add add_ sub sub_ mul mul_ div div_ pow sqrt exp exp_ log abs neg norm var std prod sort "
      "gather scatter where eq ne gt lt ge le all any dot round floor ceil sin cos tanh square reciprocal repeat "
      "flip roll");
  NameSet vendor_handles = Words(
      "getCurrentCUDABlasHandle getCurrentCUDABlasLtHandle getCurrentCUDASparseHandle getCurrentCUDASolverDnHandle "
      "cudnn miopen mkldnn blas");
  NameSet vendor_prefixes = Words(
      "cublas CUBLAS_ cudnn CUDNN_ cusparse CUSPARSE_ cufft CUFFT_ cusolver CUSOLVER_ cutensor CUTENSOR_ cblas_ "
      "Cblas mkl_ MKL_ dnnl_ mkldnn_ rocblas_ hipblas miopen mublas mudnn");
  NameSet vendor_namespaces = Words("cutlass thrust cub Eigen dnnl mkldnn oneapi cute");
  NameSet l2_persist = Words(
      "cudaStreamAttributeAccessPolicyWindow cudaAccessPropertyPersisting cudaLimitPersistingL2CacheSize "
      "cudaLaunchAttributeAccessPolicyWindow cudaKernelNodeAttributeAccessPolicyWindow "
      "cudaCtxResetPersistingL2Cache CU_LIMIT_PERSISTING_L2_CACHE_SIZE CU_ACCESS_PROPERTY_PERSISTING "
      "CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW accessPolicyWindow");
  NameSet stream_create_prefixes =
      Words("cudaStreamCreate cuStreamCreate hipStreamCreate musaStreamCreate getStreamFromPool");
  NameSet process_calls = Words(
      "system popen fork vfork execl execlp execle execv execvp execvpe execve fexecve kill killpg clone "
      "posix_spawn posix_spawnp");
  NameSet tamper_calls = Words(
      "mprotect pkey_mprotect ptrace dlopen dlmopen dlsym dlvsym dladdr dladdr1 dlinfo dl_iterate_phdr "
      "process_vm_writev process_vm_readv");
  // The dynamic loader's and the process's own tables: walking them finds any
  // function or the harness's memory without naming it (catalog D4).
  NameSet loader_tables = Words(
      "_r_debug r_debug link_map __libc_stack_end _dl_find_object Elf64_Sym Elf32_Sym "
      "Elf64_Dyn Elf32_Dyn Elf64_Phdr Elf32_Phdr Elf64_Ehdr Elf32_Ehdr ElfW");
  // The Python C API's and pybind11's ways to run Python from native code: an
  // embedded worker or torch called through Python (catalog A1, D5).
  NameSet python_run_prefixes = Words("PyRun_ PyImport_ Py_CompileString PyEval_EvalCode PyMarshal_ Py_Initialize");
  NameSet pybind_run = Words("import eval exec eval_file");
  NameSet file_calls = Words(
      "fopen freopen open openat creat unlink rename mkfifo mkdir rmdir symlink chmod chown setenv putenv unsetenv");
  NameSet file_types = Words("ofstream ifstream fstream filebuf filesystem");
  // Fragments of lower-cased #include paths.
  NameSet include_vendor =
      Words("blas cudnn cusparse cufft cusolver cutensor cutlass thrust/ mkl dnnl eigen miopen mudnn");
  NameSet include_primitives = Words("cute/ cub/");
  NameSet include_aten = Words("aten/native/ aten/ops/");
  NameSet include_loader = Words("<link.h> <elf.h> <sys/auxv.h>");
  // Fragments of lower-cased string literals: memory files, anvil's cache.
  NameSet string_paths = Words("/proc/ /dev/mem .cache/anvil");
  // Assembler directives that emit raw bytes or pull in files: a system call
  // or machine code written as its bytes, or a cached file read in at build
  // time (`.incbin`). PTX's directives are different words.
  NameSet asm_data = Words(
      ".byte .2byte .4byte .8byte .word .hword .short .long .quad .octa .int .inst .incbin .fill .ascii .asciz "
      ".string .section .pushsection .text .data");
};

const Vocabulary& Vocab() {
  static const Vocabulary vocabulary;
  return vocabulary;
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

class Scanner {
 public:
  Scanner(std::string_view text, std::string_view source) : text_(text), source_(source), lines_(SplitLines(text)) {}

  std::vector<RuleHit> Run() {
    std::vector<std::pair<size_t, size_t>> strings;
    clean_ = StripCommentsAndLiterals(text_, &strings);
    const std::string& clean = clean_;
    ScanDirectives(clean);
    ScanStrings(strings);
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
  void ScanStrings(const std::vector<std::pair<size_t, size_t>>& strings) {
    for (const auto& [begin, end] : strings) {
      std::string s(text_.substr(begin, end - begin));
      std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return std::tolower(ch); });
      for (std::string_view fragment : v_.string_paths) {
        if (s.find(fragment) == std::string::npos) continue;
        const std::string_view before = text_.substr(0, begin);
        const int line = static_cast<int>(std::count(before.begin(), before.end(), '\n')) + 1;
        const size_t line_begin = before.rfind('\n');
        const int column = static_cast<int>(begin - (line_begin == std::string_view::npos ? 0 : line_begin + 1)) + 1;
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
  void CollectNames() {
    for (size_t i = 0; i + 3 < tokens_.size(); ++i) {
      const std::string_view t = Text(i);
      if (tokens_[i].ident && Text(i + 1) == "(" && DefinesFunction(i)) defined_.insert(t);
      if (t == "namespace" && tokens_[i + 1].ident && Text(i + 2) == "=" && IsAtenRoot(Text(i + 3))) {
        aten_roots_.insert(Text(i + 1));
      } else if (t == "using" && Text(i + 1) == "namespace" && IsAtenRoot(Text(i + 2))) {
        using_aten_namespace_ = true;
      } else if (t == "using" && IsAtenRoot(Text(i + 1)) && Text(i + 2) == "::") {
        size_t j = i + 1;
        while (Text(j + 1) == "::" && j + 2 < tokens_.size() && tokens_[j + 2].ident) j += 2;
        if (!std::isupper(static_cast<unsigned char>(Text(j)[0])) && !v_.aten_allowed.count(Text(j))) {
          using_names_.insert(Text(j));
        }
      } else if (t == "Tensor") {
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

  // Index of the first token after a template argument list starting at `i` (or `i` itself).
  // Whether the identifier at i, followed by "(", names a function the
  // source defines here: a return type before it, a body after its
  // parameters (`float relu(float v) const {`).
  bool DefinesFunction(size_t i) const {
    if (i == 0) return false;
    const std::string_view before = Text(i - 1);
    const bool typed = (tokens_[i - 1].ident && before != "return" && before != "else" && before != "new" &&
                        before != "case" && before != "throw" && before != "co_return") ||
                       before == "*" || before == "&" || before == ">";
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

  void ScanIdent(size_t i) {
    const std::string_view t = Text(i);
    if (t == "asm" || t == "__asm__" || t == "__asm") {
      if (const std::string problem = AsmProblem(i); !problem.empty()) {
        Hit("cpp.native_tamper", kCheat, i, problem + " (" + std::string(t) + ")");
        return;
      }
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
    const bool call = Text(SkipTemplate(i + 1)) == "(";
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
    if (t == "pthread_create" || ((t == "std" || t == "boost") && Text(i + 1) == "::" &&
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
    const bool named = free_call || as_value;
    if (named && v_.process_calls.count(t)) return hit("cpp.process", kCheat, "controls processes");
    if (named && v_.tamper_calls.count(t)) return hit("cpp.native_tamper", kCheat, "loads code or patches memory");
    if (named && v_.file_calls.count(t)) return hit("cpp.file_access", kCheat, "accesses files or the environment");
    if (free_call && t == "getenv") return hit("cpp.file_access", kEvidence, "reads the environment");
    if (qualified && v_.file_types.count(t) && i >= 2 && Text(i - 2) == "std") {
      return hit("cpp.file_access", kCheat, "accesses files");
    }
    if (IsAtenRoot(t) && Text(i + 1) == "::" && (!qualified || i < 2 || !tokens_[i - 2].ident)) return ScanAtenName(i);
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
    if (v_.aten_quiet_namespaces.count(parts[1])) return;
    const bool type_like = std::isupper(static_cast<unsigned char>(last[0])) ||
                           (last.size() > 1 && last[0] == 'k' && std::isupper(static_cast<unsigned char>(last[1])));
    if (type_like || v_.aten_allowed.count(last) || StartsWith(last, "check") || StartsWith(last, "is") ||
        StartsWith(last, "get") || StartsWith(last, "_assert") || StartsWith(last, "assert")) {
      return;
    }
    if (Text(SkipTemplate(j + 1)) == "(") {
      return Hit("cpp.aten_compute", kCheat, i, "calls ATen compute (" + name + ")");
    }
    if (v_.strong_compute.count(last)) Hit("cpp.aten_compute", kCheat, i, "refers to ATen compute (" + name + ")");
  }

  void ScanMethod(size_t i) {
    const std::string_view t = Text(i);
    if (v_.strong_compute.count(t) && !defined_.count(t)) {
      return Hit("cpp.aten_compute", kCheat, i, "calls tensor method ." + std::string(t) + "()");
    }
    if (!v_.generic_methods.count(t)) return;
    const std::string_view root = ReceiverRoot(i - 1);
    if (tensor_vars_.count(root) || IsAtenRoot(root)) {
      Hit("cpp.aten_compute", kCheat, i, "calls tensor method ." + std::string(t) + "() on " + std::string(root));
    }
  }

  const Vocabulary& v_ = Vocab();
  std::string_view text_;
  std::string clean_;  // text_ without comments and literals, at the same offsets (tokens_ point into it).
  std::string_view source_;
  std::vector<std::string_view> lines_;
  std::vector<Token> tokens_;
  std::vector<RuleHit> hits_;
  std::set<std::pair<std::string, int>> seen_;
  NameSet aten_roots_;
  NameSet using_names_;
  NameSet defined_;  // Functions and methods the source defines itself: its own relu() is not ATen's.
  NameSet tensor_vars_;
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
