#include "compile/diagnostics.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace anvil {
namespace {

// Logs captured from real tool runs (g++ 12.2, clang 14, nvcc 13.0) on small
// broken files. kTorchBuildLog wraps real nvcc/g++ output in the ninja lines a
// torch load_inline build prints (paths are where the files were compiled).
constexpr std::string_view kGccLog = R"LOG(In file included from main.cpp:2:
helper.h: In function ‘int helper()’:
helper.h:1:30: error: ‘undefined_thing’ was not declared in this scope
    1 | inline int helper() { return undefined_thing; }
      |                              ^~~~~~~~~~~~~~~
main.cpp: In function ‘int relu(int)’:
main.cpp:5:10: error: ‘foo’ was not declared in this scope
    5 |   return foo(x);
      |          ^~~
main.cpp: In function ‘int main()’:
main.cpp:10:14: error: no matching function for call to ‘push_back(const char [2])’
   10 |   v.push_back("s");
      |   ~~~~~~~~~~~^~~~~
In file included from /usr/include/c++/12/vector:64,
                 from main.cpp:1:
/usr/include/c++/12/bits/stl_vector.h:1276:7: note: candidate: ‘void std::vector<_Tp, _Alloc>::push_back(const value_type&) [with _Tp = int; _Alloc = std::allocator<int>; value_type = int]’ (near match)
 1276 |       push_back(const value_type& __x)
      |       ^~~~~~~~~
/usr/include/c++/12/bits/stl_vector.h:1276:7: note:   conversion of argument 1 would be ill-formed:
main.cpp:10:15: error: invalid conversion from ‘const char*’ to ‘std::vector<int>::value_type’ {aka ‘int’} [-fpermissive]
   10 |   v.push_back("s");
      |               ^~~
      |               |
      |               const char*
/usr/include/c++/12/bits/stl_vector.h:1293:7: note: candidate: ‘void std::vector<_Tp, _Alloc>::push_back(value_type&&) [with _Tp = int; _Alloc = std::allocator<int>; value_type = int]’ (near match)
 1293 |       push_back(value_type&& __x)
      |       ^~~~~~~~~
/usr/include/c++/12/bits/stl_vector.h:1293:7: note:   conversion of argument 1 would be ill-formed:
main.cpp:10:15: error: invalid conversion from ‘const char*’ to ‘std::vector<int>::value_type’ {aka ‘int’} [-fpermissive]
   10 |   v.push_back("s");
      |               ^~~
      |               |
      |               const char*
main.cpp:12:20: error: ‘bar’ was not declared in this scope
   12 |   return relu(1) + bar;
      |                    ^~~
main.cpp:11:7: warning: unused variable ‘unused’ [-Wunused-variable]
   11 |   int unused;
      |       ^~~~~~
)LOG";

constexpr std::string_view kGccNoColumnLog = R"LOG(In file included from main.cpp:2:
helper.h: In function ‘int helper()’:
helper.h:1: error: ‘undefined_thing’ was not declared in this scope
    1 | inline int helper() { return undefined_thing; }
      |                              ^~~~~~~~~~~~~~~
main.cpp: In function ‘int relu(int)’:
main.cpp:5: error: ‘foo’ was not declared in this scope
    5 |   return foo(x);
      |          ^~~
main.cpp: In function ‘int main()’:
main.cpp:10: error: no matching function for call to ‘push_back(const char [2])’
   10 |   v.push_back("s");
      |   ~~~~~~~~~~~^~~~~
In file included from /usr/include/c++/12/vector:64,
                 from main.cpp:1:
/usr/include/c++/12/bits/stl_vector.h:1276: note: candidate: ‘void std::vector<_Tp, _Alloc>::push_back(const value_type&) [with _Tp = int; _Alloc = std::allocator<int>; value_type = int]’ (near match)
 1276 |       push_back(const value_type& __x)
      |       ^~~~~~~~~
/usr/include/c++/12/bits/stl_vector.h:1276: note:   conversion of argument 1 would be ill-formed:
main.cpp:10: error: invalid conversion from ‘const char*’ to ‘std::vector<int>::value_type’ {aka ‘int’} [-fpermissive]
   10 |   v.push_back("s");
      |               ^~~
      |               |
      |               const char*
/usr/include/c++/12/bits/stl_vector.h:1293: note: candidate: ‘void std::vector<_Tp, _Alloc>::push_back(value_type&&) [with _Tp = int; _Alloc = std::allocator<int>; value_type = int]’ (near match)
 1293 |       push_back(value_type&& __x)
      |       ^~~~~~~~~
/usr/include/c++/12/bits/stl_vector.h:1293: note:   conversion of argument 1 would be ill-formed:
main.cpp:10: error: invalid conversion from ‘const char*’ to ‘std::vector<int>::value_type’ {aka ‘int’} [-fpermissive]
   10 |   v.push_back("s");
      |               ^~~
      |               |
      |               const char*
main.cpp:12: error: ‘bar’ was not declared in this scope
   12 |   return relu(1) + bar;
      |                    ^~~
)LOG";

constexpr std::string_view kGccFatalLog =
    R"LOG(missing.cpp:1:10: fatal error: nope.h: No such file or directory
    1 | #include "nope.h"
      |          ^~~~~~~~
compilation terminated.
)LOG";

constexpr std::string_view kGccTemplateLog =
    R"LOG(tmpl.cpp: In instantiation of ‘int twice(T) [with T = int]’:
tmpl.cpp:5:26:   required from here
tmpl.cpp:3:12: error: request for member ‘size’ in ‘t’, which is of non-class type ‘int’
    3 |   return t.size() * 2;
      |          ~~^~~~
)LOG";

constexpr std::string_view kClangLog = R"LOG(In file included from main.cpp:2:
./helper.h:1:30: error: use of undeclared identifier 'undefined_thing'
inline int helper() { return undefined_thing; }
                             ^
main.cpp:5:10: error: use of undeclared identifier 'foo'
  return foo(x);
         ^
main.cpp:10:5: error: no matching member function for call to 'push_back'
  v.push_back("s");
  ~~^~~~~~~~~
/usr/bin/../lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/bits/stl_vector.h:1276:7: note: candidate function not viable: no known conversion from 'const char[2]' to 'const std::vector<int>::value_type' (aka 'const int') for 1st argument
      push_back(const value_type& __x)
      ^
/usr/bin/../lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/bits/stl_vector.h:1293:7: note: candidate function not viable: no known conversion from 'const char[2]' to 'std::vector<int>::value_type' (aka 'int') for 1st argument
      push_back(value_type&& __x)
      ^
main.cpp:12:20: error: use of undeclared identifier 'bar'
  return relu(1) + bar;
                   ^
4 errors generated.
)LOG";

constexpr std::string_view kLinkLog = R"LOG(/usr/bin/ld: /tmp/ccxETPD4.o: in function `main':
link.cpp:(.text+0xa): undefined reference to `missing_fn(int)'
collect2: error: ld returned 1 exit status
)LOG";

constexpr std::string_view kMultiLinkLog = R"LOG(/usr/bin/ld: /tmp/ccUOXtWF.o: in function `main':
multi.cpp:(.text+0xf): undefined reference to `missing_fn(int)'
/usr/bin/ld: multi.cpp:(.text+0x16): undefined reference to `other_missing()'
collect2: error: ld returned 1 exit status
)LOG";

constexpr std::string_view kNvccLog = R"LOG(k.cu(5): error: identifier "undefined_val" is undefined
    if (i < n) y[i] = x[i] > 0 ? x[i] : undefined_val;
                                        ^

k.cu(8): error: too few arguments in function call
    relu_kernel<<<1, 1>>>(x, y);
                              ^

2 errors detected in the compilation of "k.cu".
)LOG";

constexpr std::string_view kNvccWarningLog =
    R"LOG(w2.cu(2): warning #177-D: variable "unused_var" was declared but never referenced
    int unused_var = 3;
        ^

Remark: The warnings can be suppressed with "-diag-suppress <warning-number>"

)LOG";

constexpr std::string_view kNvccHostDeviceLog =
    R"LOG(hd.cu(2): error: calling a __host__ function("host_only(int)") from a __global__ function("k") is not allowed

hd.cu(2): error: identifier "host_only" is undefined in device code

2 errors detected in the compilation of "hd.cu".
)LOG";

constexpr std::string_view kPtxasSharedLog =
    R"LOG(ptxas error   : Entry function '_Z3bigPf' uses too much shared data (0x400000 bytes, 0xc000 max)
)LOG";

constexpr std::string_view kPtxasExternLog =
    R"LOG(ptxas fatal   : Unresolved extern function '_Z1ff'
)LOG";

constexpr std::string_view kNvccFatalLog =
    R"LOG(nvcc fatal   : Unsupported gpu architecture 'sm_999'
)LOG";

constexpr std::string_view kTorchBuildLog =
    R"LOG([1/3] /usr/local/cuda/bin/nvcc -c /tmp/dg/logs/te/py311_cu130/relu/cuda.cu -o cuda.cuda.o
FAILED: cuda.cuda.o
/usr/local/cuda/bin/nvcc -c /tmp/dg/logs/te/py311_cu130/relu/cuda.cu -o cuda.cuda.o
/tmp/dg/logs/te/py311_cu130/relu/cuda.cu(6): error: identifier "undefined_val" is undefined
    if (i < n) y[i] = x[i] > 0 ? x[i] : undefined_val;
                                        ^

1 error detected in the compilation of "/tmp/dg/logs/te/py311_cu130/relu/cuda.cu".
[2/3] c++ -c /tmp/dg/logs/te/py311_cu130/relu/main.cpp -o main.o
FAILED: main.o
c++ -c /tmp/dg/logs/te/py311_cu130/relu/main.cpp -o main.o
/tmp/dg/logs/te/py311_cu130/relu/main.cpp: In function ‘int relu_host(int)’:
/tmp/dg/logs/te/py311_cu130/relu/main.cpp:5:5: error: ‘foo’ was not declared in this scope
    5 |     foo(y);
      |     ^~~
ninja: build stopped: subcommand failed.
)LOG";

constexpr std::string_view kGccColorLog =
    "\x1b"
    "[01m\x1b"
    "[Kcolor.cpp:\x1b"
    "[m\x1b"
    "[K In function \u2018\x1b"
    "[01m\x1b"
    "[Kint f()\x1b"
    "[m\x1b"
    "[K\u2019:\n\x1b"
    "[01m\x1b"
    "[Kcolor.cpp:1:18:\x1b"
    "[m\x1b"
    "[K \x1b"
    "[01;31m\x1b"
    "[Kerror: \x1b"
    "[m\x1b"
    "[K\u2018\x1b"
    "[01m\x1b"
    "[Knope\x1b"
    "[m\x1b"
    "[K\u2019 was not declared in this scope\n    1 | int f() { return \x1b"
    "[01;31m\x1b"
    "[Knope\x1b"
    "[m\x1b"
    "[K; }\n      |                  \x1b"
    "[01;31m\x1b"
    "[K^~~~\x1b"
    "[m\x1b"
    "[K\n";

// relu.py as the candidate; cuda.cu and main.cpp above embed its two strings.
constexpr std::string_view kReluPy = R"PY(import torch
from torch.utils.cpp_extension import load_inline

cuda_src = """
__global__ void relu_kernel(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0 ? x[i] : undefined_val;
}
"""

cpp_src = """
int relu_host(int x) {
  int y = x;
    foo(y);
  return y;
}
"""
)PY";

std::vector<SourceMap> ReluMaps() {
  return {
      {.generated_file = "cuda.cu",
       .first_line = 3,
       .line_count = 6,
       .candidate_file = "relu.py",
       .candidate_first_line = 4},
      {.generated_file = "main.cpp",
       .first_line = 2,
       .line_count = 7,
       .candidate_file = "relu.py",
       .candidate_first_line = 11},
  };
}

DiagnosticOptions AllOf(bool include_notes = false) {
  DiagnosticOptions options;
  options.max_diagnostics = 1000;
  options.include_notes = include_notes;
  return options;
}

Diagnostic Diag(std::string file, int line, std::string severity, std::string message) {
  Diagnostic d;
  d.file = std::move(file);
  d.line = line;
  d.severity = std::move(severity);
  d.message = std::move(message);
  return d;
}

TEST(ParseDiagnosticsTest, GccErrorsWarningsNotesAndContext) {
  const std::vector<Diagnostic> d = ParseDiagnostics(kGccLog);
  ASSERT_EQ(d.size(), 11u);
  EXPECT_EQ(d[0].file, "helper.h");
  EXPECT_EQ(d[0].line, 1);
  EXPECT_EQ(d[0].column, 30);
  EXPECT_EQ(d[0].severity, "error");
  EXPECT_EQ(d[0].message, "‘undefined_thing’ was not declared in this scope");
  ASSERT_EQ(d[0].context.size(), 2u);
  EXPECT_EQ(d[0].context[0], "    1 | inline int helper() { return undefined_thing; }");
  EXPECT_EQ(d[1].file, "main.cpp");
  EXPECT_EQ(d[1].line, 5);
  EXPECT_EQ(d[1].column, 10);
  EXPECT_EQ(d[1].message, "‘foo’ was not declared in this scope");
  // "In file included from ... / from main.cpp:1:" is neither a diagnostic nor context.
  EXPECT_EQ(d[2].context.size(), 2u);
  EXPECT_EQ(d[3].file, "/usr/include/c++/12/bits/stl_vector.h");
  EXPECT_EQ(d[3].severity, "note");
  EXPECT_EQ(d[4].message, "conversion of argument 1 would be ill-formed:");
  EXPECT_TRUE(d[4].context.empty());
  EXPECT_EQ(d[5].context.size(), 4u);
  EXPECT_EQ(d[9].message, "‘bar’ was not declared in this scope");
  EXPECT_EQ(d[10].severity, "warning");
  EXPECT_EQ(d[10].line, 11);
  EXPECT_EQ(d[10].message, "unused variable ‘unused’ [-Wunused-variable]");
}

TEST(ParseDiagnosticsTest, GccWithoutColumn) {
  const std::vector<Diagnostic> d = ParseDiagnostics(kGccNoColumnLog);
  ASSERT_GE(d.size(), 2u);
  EXPECT_EQ(d[0].file, "helper.h");
  EXPECT_EQ(d[0].line, 1);
  EXPECT_EQ(d[0].column, 0);
  EXPECT_EQ(d[0].severity, "error");
  EXPECT_EQ(d[1].line, 5);
  EXPECT_EQ(d[1].column, 0);
}

TEST(ParseDiagnosticsTest, GccFatalErrorStopsAtSummary) {
  const std::vector<Diagnostic> d = ParseDiagnostics(kGccFatalLog);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].severity, "fatal");
  EXPECT_EQ(d[0].file, "missing.cpp");
  EXPECT_EQ(d[0].message, "nope.h: No such file or directory");
  EXPECT_EQ(d[0].context.size(), 2u);  // Not "compilation terminated."
}

TEST(ParseDiagnosticsTest, GccTemplateRequiredFromIsNotADiagnostic) {
  const std::vector<Diagnostic> d = ParseDiagnostics(kGccTemplateLog);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].line, 3);
  EXPECT_EQ(d[0].column, 12);
}

TEST(ParseDiagnosticsTest, ColorCodesAreStripped) {
  const std::vector<Diagnostic> d = ParseDiagnostics(kGccColorLog);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].file, "color.cpp");
  EXPECT_EQ(d[0].line, 1);
  EXPECT_EQ(d[0].column, 18);
  EXPECT_EQ(d[0].message, "‘nope’ was not declared in this scope");
  ASSERT_EQ(d[0].context.size(), 2u);
  EXPECT_EQ(d[0].context[0], "    1 | int f() { return nope; }");
}

TEST(ParseDiagnosticsTest, ClangUnindentedSourceLinesAreContext) {
  const std::vector<Diagnostic> d = ParseDiagnostics(kClangLog);
  ASSERT_EQ(d.size(), 6u);
  EXPECT_EQ(d[0].file, "./helper.h");
  EXPECT_EQ(d[0].message, "use of undeclared identifier 'undefined_thing'");
  ASSERT_EQ(d[0].context.size(), 2u);
  EXPECT_EQ(d[0].context[0], "inline int helper() { return undefined_thing; }");
  EXPECT_EQ(d[3].severity, "note");
  EXPECT_EQ(d[5].message, "use of undeclared identifier 'bar'");
  EXPECT_EQ(d[5].context.size(), 2u);  // Not "4 errors generated."
}

TEST(ParseDiagnosticsTest, LinkerUndefinedReference) {
  const std::vector<Diagnostic> d = ParseDiagnostics(kLinkLog);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].file, "");
  EXPECT_EQ(d[0].severity, "error");
  EXPECT_NE(d[0].message.find("in function `main':"), std::string::npos);
  EXPECT_NE(d[0].message.find("undefined reference to `missing_fn(int)'"), std::string::npos);
  EXPECT_EQ(d[1].file, "");
  EXPECT_EQ(d[1].severity, "error");
  EXPECT_EQ(d[1].message, "ld returned 1 exit status");
}

TEST(ParseDiagnosticsTest, LinkerSeveralReferencesShareTheFunctionHeader) {
  const std::vector<Diagnostic> d = ParseDiagnostics(kMultiLinkLog);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_NE(d[0].message.find("`missing_fn(int)'"), std::string::npos);
  EXPECT_NE(d[1].message.find("in function `main':"), std::string::npos);
  EXPECT_NE(d[1].message.find("`other_missing()'"), std::string::npos);
  EXPECT_EQ(d[1].message.find("/usr/bin/ld"), std::string::npos);
}

TEST(ParseDiagnosticsTest, LinkerSingleLineForms) {
  const std::vector<Diagnostic> d = ParseDiagnostics(
      "/usr/bin/ld: relu.o: in function `run': undefined reference to `foo'\n"
      "/usr/bin/ld: cannot find -lnope: No such file or directory\n"
      "/usr/bin/ld: warning: relu.o: missing .note.GNU-stack section\n"
      "ld.lld: error: undefined symbol: bar\n");
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[0].message, "relu.o: in function `run': undefined reference to `foo'");
  EXPECT_EQ(d[0].severity, "error");
  EXPECT_EQ(d[1].message, "cannot find -lnope: No such file or directory");
  EXPECT_EQ(d[2].severity, "warning");
  EXPECT_EQ(d[2].message, "relu.o: missing .note.GNU-stack section");
  EXPECT_EQ(d[3].message, "undefined symbol: bar");
  for (const Diagnostic& x : d) EXPECT_EQ(x.file, "");
}

TEST(ParseDiagnosticsTest, NvccFrontEndErrors) {
  const std::vector<Diagnostic> d = ParseDiagnostics(kNvccLog);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].file, "k.cu");
  EXPECT_EQ(d[0].line, 5);
  EXPECT_EQ(d[0].column, 0);
  EXPECT_EQ(d[0].severity, "error");
  EXPECT_EQ(d[0].message, "identifier \"undefined_val\" is undefined");
  ASSERT_EQ(d[0].context.size(), 2u);
  EXPECT_EQ(d[0].context[0], "    if (i < n) y[i] = x[i] > 0 ? x[i] : undefined_val;");
  EXPECT_EQ(d[1].line, 8);
  EXPECT_EQ(d[1].message, "too few arguments in function call");
}

TEST(ParseDiagnosticsTest, NvccNumberedWarningAndRemark) {
  const std::vector<Diagnostic> d = ParseDiagnostics(kNvccWarningLog);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].severity, "warning");
  EXPECT_EQ(d[0].line, 2);
  EXPECT_EQ(d[0].message, "variable \"unused_var\" was declared but never referenced");
  EXPECT_EQ(d[0].context.size(), 2u);
}

TEST(ParseDiagnosticsTest, NvccErrorsWithoutExcerpt) {
  const std::vector<Diagnostic> d = ParseDiagnostics(kNvccHostDeviceLog);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_TRUE(d[0].context.empty());
  EXPECT_EQ(d[1].message, "identifier \"host_only\" is undefined in device code");
}

TEST(ParseDiagnosticsTest, PtxasAndNvccDriverMessages) {
  std::vector<Diagnostic> d = ParseDiagnostics(kPtxasSharedLog);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].file, "");
  EXPECT_EQ(d[0].severity, "error");
  EXPECT_EQ(d[0].message, "Entry function '_Z3bigPf' uses too much shared data (0x400000 bytes, 0xc000 max)");
  d = ParseDiagnostics(kPtxasExternLog);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].severity, "fatal");
  EXPECT_EQ(d[0].message, "Unresolved extern function '_Z1ff'");
  d = ParseDiagnostics(kNvccFatalLog);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].severity, "fatal");
  EXPECT_EQ(d[0].message, "Unsupported gpu architecture 'sm_999'");
  EXPECT_TRUE(ParseDiagnostics("ptxas info    : Used 8 registers\n").empty());
}

TEST(ParseDiagnosticsTest, NinjaWrappedTorchBuild) {
  const std::vector<Diagnostic> d = ParseDiagnostics(kTorchBuildLog);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].file, "/tmp/dg/logs/te/py311_cu130/relu/cuda.cu");
  EXPECT_EQ(d[0].line, 6);
  EXPECT_EQ(d[0].context.size(), 2u);
  EXPECT_EQ(d[1].file, "/tmp/dg/logs/te/py311_cu130/relu/main.cpp");
  EXPECT_EQ(d[1].line, 5);
  EXPECT_EQ(d[1].column, 5);
  EXPECT_EQ(d[1].context.size(), 2u);  // Not "ninja: build stopped".
}

TEST(ParseDiagnosticsTest, EmptyAndNoiseLogs) {
  EXPECT_TRUE(ParseDiagnostics("").empty());
  EXPECT_TRUE(ParseDiagnostics("\n\n[1/2] c++ -c a.cpp\nninja: no work to do.\n").empty());
  EXPECT_TRUE(ParseDiagnostics("RuntimeError: Error building extension 'relu'\n").empty());
}

TEST(MapAndDedupeTest, MapsGeneratedLinesToCandidate) {
  const std::vector<Diagnostic> d = MapAndDedupe(ParseDiagnostics(kTorchBuildLog), ReluMaps(), AllOf());
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].file, "relu.py");
  EXPECT_EQ(d[0].line, 7);
  EXPECT_TRUE(d[0].in_candidate);
  EXPECT_EQ(d[1].file, "relu.py");
  EXPECT_EQ(d[1].line, 14);
  EXPECT_EQ(d[1].column, 5);
  EXPECT_TRUE(d[1].in_candidate);
}

TEST(MapAndDedupeTest, LeavesUnmappedDiagnosticsAlone) {
  std::vector<Diagnostic> in = {Diag("/x/cuda.cu", 1, "error", "before the mapped region"),
                                Diag("/x/cuda.cu", 9, "error", "after the mapped region"),
                                Diag("other.cu", 5, "error", "another file"),
                                Diag("", 0, "error", "ld returned 1 exit status")};
  const std::vector<Diagnostic> d = MapAndDedupe(in, ReluMaps(), AllOf());
  ASSERT_EQ(d.size(), 4u);
  for (std::size_t i = 0; i < d.size(); ++i) {
    EXPECT_EQ(d[i].file, in[i].file);
    EXPECT_EQ(d[i].line, in[i].line);
    EXPECT_FALSE(d[i].in_candidate);
  }
}

TEST(MapAndDedupeTest, DedupesGccRepeatsAndDropsNotesByDefault) {
  const std::vector<Diagnostic> d = MapAndDedupe(ParseDiagnostics(kGccLog), {}, AllOf());
  // 11 parsed: 4 notes dropped, the repeated "invalid conversion" error dropped.
  ASSERT_EQ(d.size(), 6u);
  int invalid_conversions = 0;
  for (const Diagnostic& x : d) {
    EXPECT_NE(x.severity, "note");
    if (x.message.find("invalid conversion") != std::string::npos) ++invalid_conversions;
  }
  EXPECT_EQ(invalid_conversions, 1);
  EXPECT_EQ(d.back().severity, "warning");
}

TEST(MapAndDedupeTest, IncludeNotesStillDropsSystemHeaderNotes) {
  const std::vector<Diagnostic> d = MapAndDedupe(ParseDiagnostics(kClangLog), {}, AllOf(/*include_notes=*/true));
  ASSERT_EQ(d.size(), 4u);
  for (const Diagnostic& x : d) EXPECT_EQ(x.severity, "error");

  std::vector<Diagnostic> in = {Diag("/usr/include/c++/12/bits/stl_vector.h", 1, "error", "in system"),
                                Diag("k.cu", 3, "note", "declared here")};
  const std::vector<Diagnostic> kept = MapAndDedupe(in, {}, AllOf(true));
  ASSERT_EQ(kept.size(), 2u);  // System-header errors stay; user notes stay.
}

TEST(MapAndDedupeTest, NotesOfADroppedDuplicateGoWithIt) {
  std::vector<Diagnostic> in = {Diag("a.cu", 1, "error", "e"), Diag("a.cu", 2, "note", "n1"),
                                Diag("a.cu", 1, "error", "e"), Diag("a.cu", 3, "note", "n2")};
  const std::vector<Diagnostic> d = MapAndDedupe(in, {}, AllOf(true));
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[1].message, "n1");
}

TEST(MapAndDedupeTest, ErrorsFirstKeepingOrderAndTheirNotes) {
  std::vector<Diagnostic> in = {Diag("a.cu", 1, "warning", "w1"), Diag("a.cu", 2, "error", "e1"),
                                Diag("a.cu", 3, "note", "n1"),    Diag("a.cu", 4, "warning", "w2"),
                                Diag("", 0, "fatal", "f1"),       Diag("a.cu", 5, "error", "e2")};
  const std::vector<Diagnostic> d = MapAndDedupe(in, {}, AllOf(true));
  std::vector<std::string> order;
  for (const Diagnostic& x : d) order.push_back(x.message);
  EXPECT_EQ(order, (std::vector<std::string>{"e1", "n1", "f1", "e2", "w1", "w2"}));
}

TEST(MapAndDedupeTest, CapsAtMaxDiagnostics) {
  DiagnosticOptions options;
  options.max_diagnostics = 3;
  const std::vector<Diagnostic> d = MapAndDedupe(ParseDiagnostics(kGccLog), {}, options);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[2].severity, "error");
  EXPECT_EQ(DiagnosticOptions().max_diagnostics, 20u);
  options.max_diagnostics = 0;
  EXPECT_TRUE(MapAndDedupe(ParseDiagnostics(kGccLog), {}, options).empty());
}

TEST(FormatDiagnosticsTest, ExcerptsTheCandidateLine) {
  const std::vector<Diagnostic> d = MapAndDedupe(ParseDiagnostics(kTorchBuildLog), ReluMaps(), DiagnosticOptions());
  EXPECT_EQ(FormatDiagnostics(d, kReluPy),
            "relu.py:7: error: identifier \"undefined_val\" is undefined\n"
            "    7 |   if (i < n) y[i] = x[i] > 0 ? x[i] : undefined_val;\n"
            "relu.py:14:5: error: ‘foo’ was not declared in this scope\n"
            "   14 |     foo(y);\n"
            "      |     ^\n");
}

TEST(FormatDiagnosticsTest, UnmappedUsesCompilerContext) {
  std::vector<Diagnostic> d = ParseDiagnostics(kNvccLog);
  d.resize(1);
  d.push_back(Diag("", 0, "error", "ld returned 1 exit status"));
  EXPECT_EQ(FormatDiagnostics(d, kReluPy),
            "k.cu:5: error: identifier \"undefined_val\" is undefined\n"
            "    if (i < n) y[i] = x[i] > 0 ? x[i] : undefined_val;\n"
            "                                        ^\n"
            "error: ld returned 1 exit status\n");
}

TEST(FormatDiagnosticsTest, OutOfRangeCandidateLineFallsBackToContext) {
  Diagnostic d = Diag("relu.py", 400, "error", "far away");
  d.in_candidate = true;
  d.context = {"  ctx"};
  EXPECT_EQ(FormatDiagnostics({d}, kReluPy), "relu.py:400: error: far away\n  ctx\n");
}

}  // namespace
}  // namespace anvil
