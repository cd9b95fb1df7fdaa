"""What the checker knows about torch's names: which are plumbing, which compute, and what kind they return.

The plumbing allowlist is the paper's Appendix J plus metadata, views, allocation and casts; `torch_compute()`
says whether calling a dotted torch path runs compute outside it. The other sets name tensor methods and
attributes, nn layers, extension loaders, kernel decorators and compilers, for the resolver and the rules.
"""


def words(text):
    return frozenset(text.split())


# Paper Appendix J: the aten ops that are plumbing, not compute.
APPENDIX_J = words("""_local_scalar_dense alias allclose arange as_strided broadcast_to clone contiguous copy_
    empty empty_like equal expand flatten full item ones permute rand randint randn reshape select slice squeeze
    stride transpose unsqueeze view zeros""")
# Metadata, views, creation, casts and bookkeeping that the brief also allows.
PLUMBING = APPENDIX_J | words("""size dim ndimension numel nelement element_size is_contiguous data_ptr
    storage_offset untyped_storage get_device new_empty new_zeros new_ones new_full new_tensor new_empty_strided
    zeros_like ones_like full_like empty_strided tensor as_tensor asarray from_numpy frombuffer from_dlpack
    rand_like randn_like randint_like randperm view_as reshape_as expand_as t t_ narrow unflatten movedim moveaxis
    swapaxes swapdims chunk split tensor_split unbind detach detach_ requires_grad_ zero_ fill_ resize_
    as_strided_ squeeze_ unsqueeze_ transpose_ record_stream pin_memory share_memory_ is_floating_point
    is_complex is_tensor tolist numpy cpu cuda to float double int long short bool char byte half bfloat16 type
    type_as view_as_real view_as_complex is_pinned is_shared register_hook retain_grad dim_order broadcast_tensors
    atleast_1d atleast_2d atleast_3d diagonal split_with_sizes hsplit vsplit dsplit ravel is_same_size
    resize_as_ T mT mH H adjoint unfold""")
# torch.<name> callables that are not compute.
TORCH_NONCOMPUTE = words("""no_grad enable_grad set_grad_enabled inference_mode is_grad_enabled
    is_inference_mode_enabled manual_seed seed initial_seed get_rng_state set_rng_state get_default_dtype
    set_default_dtype get_default_device set_default_device set_printoptions is_storage promote_types result_type
    can_cast broadcast_shapes typename get_num_threads set_num_threads get_num_interop_threads
    use_deterministic_algorithms are_deterministic_algorithms_enabled get_float32_matmul_precision
    set_float32_matmul_precision is_autocast_enabled autocast sym_int sym_float sym_not sym_max sym_min finfo
    iinfo device dtype load save _check _check_index _check_value _check_type""")
# torch.<namespace>.* that is not compute.
TORCH_NONCOMPUTE_NS = words("""cuda backends utils autograd jit library testing random profiler _dynamo compiler
    hub distributed multiprocessing version types overrides cpu mps xpu musa npu amp export fx onnx package
    storage serialization _utils _logging _guards futures accelerator mtia cuda_graphs""")
TORCH_COMPUTE_NS = words("special linalg fft sparse nested masked functional _refs _prims _decomp signal")
ATEN_OP_NS = words("aten prims _refs quantized _quantized")

# Tensor methods (and torch.Tensor.*) that dispatch compute ops.
TENSOR_COMPUTE_METHODS = words("""abs abs_ absolute acos acosh add add_ addbmm addcdiv addcdiv_ addcmul addcmul_
    addmm addmm_ addmv addr all amax amin aminmax angle any apply_ argmax argmin argsort argwhere asin asinh atan
    atan2 atanh baddbmm baddbmm_ bernoulli bernoulli_ bincount bitwise_and bitwise_not bitwise_or bitwise_xor bmm
    cauchy_ ceil ceil_ cholesky clamp clamp_ clamp_max clamp_min clip clip_ cos cos_ cosh count_nonzero cross
    cummax cummin cumprod cumsum deg2rad diag diag_embed diff digamma dist div div_ divide dot eq eq_ erf erf_
    erfc erfinv exp exp_ exp2 expm1 exponential_ fix flip fliplr flipud float_power floor floor_ floor_divide fmax
    fmin fmod frac gather gcd ge geometric_ ger greater greater_equal gt hardshrink heaviside histc hypot
    index_add index_add_ index_copy index_copy_ index_fill index_fill_ index_put index_put_ index_reduce
    index_select inner inverse isclose isfinite isinf isnan kron kthvalue lcm ldexp le lerp lerp_ less less_equal
    lgamma log log_ log10 log1p log2 log_normal_ log_softmax logaddexp logcumsumexp logdet logical_and
    logical_not logical_or logical_xor logit logsumexp lt lu map_ masked_fill masked_fill_ masked_scatter
    masked_scatter_ masked_select matmul matrix_exp matrix_power max maximum mean median min minimum mm mode
    msort mul mul_ multinomial multiply mv mvlgamma nan_to_num nan_to_num_ nanmean nanmedian nanquantile nansum
    ne neg neg_ negative nonzero norm normal_ not_equal outer pinverse polygamma pow pow_ prod put put_ qr
    quantile rad2deg reciprocal reciprocal_ relu relu_ remainder renorm repeat repeat_interleave roll rot90
    round round_ rsqrt rsqrt_ scatter scatter_ scatter_add scatter_add_ scatter_reduce scatter_reduce_ sgn
    sigmoid sigmoid_ sign sign_ signbit sin sin_ sinc sinh slogdet softmax sort sqrt sqrt_ square square_ std
    sub sub_ subtract sum sum_to_size svd take take_along_dim tan tanh tanh_ tensordot topk trace tril tril_ triu
    triu_ true_divide trunc trunc_ unique unique_consecutive var vdot where xlogy __matmul__ __rmatmul__
    __add__ __radd__ __iadd__ __sub__ __rsub__ __mul__ __rmul__ __imul__ __truediv__ __rtruediv__ __pow__
    __rpow__ __neg__""")
# Tensor methods that hand a tensor's data to Python or numpy: in forward, the work is then done on the host by
# Python or numpy instead of a kernel (catalog A1/A3). tolist is also a numpy method: it counts on a known tensor.
HOST_METHODS = words("numpy tolist __array__ __dlpack__")
# Raw memory: reading or writing a tensor's bytes through an address, a buffer or a capsule hands its data to
# Python (catalog A1/A3). Dotted callees, prefixes, and method names (ctypes array types: `(c_float * n).from_address`).
RAW_MEMORY_FUNCTIONS = words("""ctypes.string_at ctypes.wstring_at ctypes.memmove ctypes.memset
    torch.utils.dlpack.to_dlpack torch.to_dlpack numpy.from_dlpack""")
RAW_MEMORY_PREFIXES = ("numpy.ctypeslib", "torch._tensor_str")
RAW_MEMORY_METHODS = words("from_address from_buffer from_buffer_copy")
# ctypes.cast of a pointer is fine as an argument of a call (a ctypes-loaded kernel's parameter), not kept.
POINTER_CASTS = words("ctypes.cast")
# Tensor methods that run a Python callback per element.
CALLBACK_METHODS = words("apply_ map_ map2_")
# Tensor methods and attributes that print a tensor's values (parsed back, they are host compute).
TEXT_METHODS = words("__repr__ __str__ __format__")
ARRAY_INTERFACES = words("__array_interface__ __cuda_array_interface__")
# Storage accessors, and what may be read of a storage without reading its bytes.
STORAGE_METHODS = words("storage untyped_storage _typed_storage _storage")
STORAGE_META = words("""data_ptr nbytes size element_size device dtype is_shared is_pinned is_cuda _cdata
    resize_ share_memory_ _share_cuda_ _weak_ref""")
# numpy functions that take a tensor's data (through __array__ or DLPack).
HOST_FUNCTIONS = words("""numpy.asarray numpy.array numpy.asanyarray numpy.ascontiguousarray numpy.from_dlpack
    numpy.frombuffer numpy.copy""")
# Compute method names that builtin containers also have: hit only when the receiver is known to be a tensor.
AMBIGUOUS_METHODS = words("add sort")
SCALAR_RESULT_METHODS = words("""item numel dim ndimension nelement element_size data_ptr get_device
    storage_offset is_contiguous is_floating_point is_complex tolist equal allclose __len__""")
TENSOR_SCALAR_ATTRS = words("ndim dtype device is_cuda requires_grad layout itemsize nbytes is_leaf is_sparse")
TENSOR_TENSOR_ATTRS = words("T mT H mH data grad real imag")

NOOP_LAYERS = words("Identity Flatten Unflatten Module")
DROPOUT_LAYERS = words("Dropout Dropout1d Dropout2d Dropout3d AlphaDropout FeatureAlphaDropout")
CONTAINER_LAYERS = words("Sequential ModuleList ModuleDict")
PARAM_CLASSES = words("Parameter Buffer UninitializedParameter UninitializedBuffer ParameterList ParameterDict")

# torch.<name> values that are not functions.
TORCH_CONSTANTS = words("""float32 float float16 half bfloat16 float64 double int64 long int32 int int16 short int8
    uint8 uint16 uint32 uint64 bool complex32 complex64 cfloat complex128 cdouble float8_e4m3fn float8_e5m2
    float8_e4m3fnuz float8_e5m2fnuz strided sparse_coo sparse_csr contiguous_format channels_last
    channels_last_3d preserve_format inf nan pi e newaxis""")
HALF_DTYPES = words("torch.float16 torch.half torch.bfloat16")
AUTOCAST = words("torch.autocast torch.cuda.amp.autocast torch.amp.autocast torch.cpu.amp.autocast")
MATMUL_OPERATORS = words("operator.matmul operator.imatmul operator.__matmul__ operator.__imatmul__")
ARITH_OPERATORS = words("""add sub mul truediv floordiv mod pow neg iadd isub imul itruediv __add__ __sub__
    __mul__ __truediv__ __pow__""")

EXT_LOADERS = words("""torch.utils.cpp_extension.load_inline torch.utils.cpp_extension.load torch.ops.load_library
    ctypes.CDLL ctypes.PyDLL ctypes.cdll.LoadLibrary ctypes.pydll.LoadLibrary cupy.RawKernel cupy.RawModule
    cupy.ElementwiseKernel cupy.ReductionKernel torch.cuda.jiterator._create_jit_fn""")
KERNEL_DECORATORS = words("""triton.jit triton.autotune triton.heuristics numba.cuda.jit numba.jit numba.njit
    tilelang.jit""")
TENSOR_BASES = words("""torch.Tensor torch._C._TensorBase torch._C.TensorBase torch.nn.Parameter
    torch.nn.parameter.Parameter torch.utils._python_dispatch.TorchDispatchMode torch.overrides.TorchFunctionMode
    torch._C._TensorMeta""")
# Module hooks: the function passed runs around forward (before or after it, with its inputs and output).
HOOK_REGISTRARS = words("""register_forward_hook register_forward_pre_hook register_module_forward_hook
    register_module_forward_pre_hook""")
# Registrations of a Python function as the body of a torch op (it runs when forward calls torch.ops.ns.op).
OP_REGISTRARS = words("""custom_op triton_op impl register_kernel _impl register_impl""")
# ModelNew members that run in place of forward when the module is called.
CALL_MEMBERS = ("__call__", "_call_impl", "_wrapped_call_impl", "__getattribute__")
COMPILERS = words("torch.compile torch.jit.script torch.jit.trace torch.jit.trace_module")
AUTOGRAD_FUNCTIONS = words("torch.autograd.Function torch.autograd.function.Function")


# aten-level names of plumbing that the Python API reaches under other names (`.to` is `_to_copy`, `reshape` may be
# `_unsafe_view`, `torch.rand` fills with `uniform_`, `bool(t)` is `is_nonzero`, ...): seen only at run time.
ATEN_PLUMBING = words("""_to_copy _unsafe_view _reshape_alias lift_fresh lift_fresh_copy empty_strided
    new_empty_strided alias detach split_with_sizes unbind uniform_ normal_ random_ is_nonzero sym_size sym_stride
    sym_numel sym_storage_offset resize_ set_ _copy_from _copy_from_and_resize _has_compatible_shallow_copy_type
    view_copy expand_copy slice select scalar_tensor _pin_memory _efficientzerotensor resolve_conj resolve_neg conj
    _conj _neg_view is_conj is_neg _is_zerotensor _nested_tensor_from_mask_left_aligned lift numpy_T mT mH adjoint
    matrix_H unfold""")


def is_plumbing(name):
    return name in PLUMBING or name.startswith(("_assert", "_cast_"))


def aten_compute(op):
    """Returns True if a dispatched op, named as str(OpOverload) does ("aten.mm.default"), is compute outside the
    allowlist. Ops of other namespaces (a candidate's own custom ops) are not."""
    parts = op.split(".")
    if len(parts) < 2 or parts[0] not in ATEN_OP_NS:
        return False
    return not (is_plumbing(parts[1]) or parts[1] in ATEN_PLUMBING)


# Namespaces of torch's own ops that compute nothing (profiler annotations).
OBSERVED_QUIET_NS = words("profiler")


def observed_compute(name, own):
    """Whether an op the C++ observer counted ("aten::mm", "mkl::_mkl_linear", "torchscript::forward") is compute:
    an aten op outside the allowlist, any op of torch's other namespaces (mkl, mkldnn, inductor, prepacked, ...) but
    the candidate's own (`own`: the op names its code registered), and TorchScript run in the process."""
    if name in own:
        return False
    ns, _, op = name.partition("::")
    if not op:
        return False
    if ns == "torchscript":
        return True
    if ns in OBSERVED_QUIET_NS:
        return False
    if ns in ATEN_OP_NS:
        return not (is_plumbing(op) or op in ATEN_PLUMBING)
    return not is_plumbing(op)


def torch_compute(path):
    """Returns True if calling the dotted `path` runs torch compute outside the allowlist."""
    parts = path.split(".")
    if len(parts) < 2 or parts[0] != "torch":
        return False
    ns, last = parts[1], parts[-1]
    if ns == "ops":
        return len(parts) >= 4 and parts[2] in ATEN_OP_NS and not is_plumbing(parts[3])
    if ns == "nn":
        return len(parts) == 4 and parts[2] == "functional" and not is_plumbing(last)
    if ns == "Tensor":
        return len(parts) == 3 and last in TENSOR_COMPUTE_METHODS
    if ns == "_C":
        return (len(parts) >= 4 and parts[2] in ("_nn", "_VariableFunctions", "_linalg", "_fft", "_special")
                and not is_plumbing(last))
    if ns in TORCH_COMPUTE_NS:
        return not is_plumbing(last)
    if ns in TORCH_NONCOMPUTE_NS or len(parts) != 2:
        return False
    return not (is_plumbing(ns) or ns in TORCH_NONCOMPUTE or ns[:1].isupper())
