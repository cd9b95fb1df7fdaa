// The words the C++/CUDA source scan (source_scan.h) judges by: ATen's allowed and compute names, vendor
// libraries, the calls that start threads or processes, patch the process, touch files or install signal
// handlers, the loader's tables, Python's C API, assembler directives. Data; read-only after the first use.
#pragma once

#include <string_view>
#include <unordered_set>

namespace anvil {

using NameSet = std::unordered_set<std::string_view>;

// The words of a space-separated list; the views point into `list`, a string literal.
NameSet Words(std::string_view list);

struct Vocabulary {
  // at::/torch:: names that allocate, describe or view tensors (paper Appendix J plus metadata).
  NameSet aten_allowed = Words(
      "empty empty_like empty_strided zeros zeros_like ones ones_like full full_like from_blob arange rand randn "
      "randint rand_like randn_like randint_like tensor scalar_tensor dtype device layout requires_grad "
      "memory_format pinned_memory ceil_div globalContext parallel_for parallel_reduce irange toString "
      "typeMetaToScalarType elementSize infer_size manual_seed clone contiguous copy_ view reshape permute "
      "transpose squeeze unsqueeze expand flatten select slice as_strided alias broadcast_to narrow stride "
      "allclose equal item numel _local_scalar_dense in_parallel_region init_num_threads set_num_threads "
      "intraop_default_num_threads maybe_wrap_dim maybe_wrap_dims device_of promoteTypes isFloatingType "
      "isIntegralType isComplexType isReducedFloatingType canCast toRealValueType wrap_pybind_function "
      "get_num_threads get_thread_num get_parallel_info divup");
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
      "process_vm_writev process_vm_readv syscall getauxval mremap __libc_dlopen_mode __libc_dlsym");
  // Signal handlers and timers: code that runs once the call has returned (a
  // handler fills the output after anvil's done); a timer's SIGEV_THREAD is a
  // thread no thread API names.
  NameSet signal_calls = Words(
      "sigaction signal sigset bsd_signal sysv_signal setitimer alarm ualarm timer_create timer_settime sigqueue "
      "pthread_kill tgkill mq_notify");
  // ATen's per-backend kernels, called past the dispatcher (at::cpu::mm): every name in them is a kernel.
  NameSet aten_kernel_namespaces =
      Words("cpu native compositeexplicitautograd compositeimplicitautograd compositeexplicitautogradnonfunctional");
  // The dynamic loader's and the process's own tables: walking them finds any
  // function or the harness's memory without naming it (catalog D4).
  NameSet loader_tables = Words(
      "_r_debug r_debug link_map __libc_stack_end _dl_find_object Elf64_Sym Elf32_Sym "
      "Elf64_Dyn Elf32_Dyn Elf64_Phdr Elf32_Phdr Elf64_Ehdr Elf32_Ehdr ElfW");
  // The Python C API's and pybind11's ways to run Python from native code: an
  // embedded worker or torch called through Python (catalog A1, D5).
  // And its ways to reach the interpreter's frames and state, where the worker's data is (the timing sets).
  NameSet python_run_prefixes = Words(
      "PyRun_ PyImport_ Py_CompileString PyEval_EvalCode PyMarshal_ Py_Initialize PyEval_GetFrame PyEval_GetLocals "
      "PyEval_GetGlobals PyThreadState_GetFrame PyFrame_GetLocals PyFrame_GetGlobals PyFrame_GetBuiltins "
      "PySys_GetObject PyGC_ PyEval_SetTrace PyEval_SetProfile");
  // Fragments of string literals naming Python's frames and function internals (looked up by attribute name).
  NameSet string_python = Words(
      "f_locals f_globals f_back f_builtins tb_frame gi_frame cr_frame _getframe __globals__ "
      "__closure__ co_consts f_code");
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
  // Symbol directives (.weak, .set, .symver) make a name refer to another one.
  NameSet asm_data = Words(
      ".byte .2byte .4byte .8byte .word .hword .short .long .quad .octa .int .inst .incbin .fill .ascii .asciz "
      ".string .section .pushsection .text .data .weak .weakref .set .symver .globl .equ .equiv .comm .lcomm");
  // Words before `::at` that leave it global (`return ::at::cpu::mm(a, b);`).
  NameSet expression_keywords =
      Words("return else case throw co_return co_yield new delete sizeof decltype typeid alignof and or not");
};

const Vocabulary& Vocab();

}  // namespace anvil
