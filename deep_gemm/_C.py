# @generated from ops.yaml by python -m codegen — do not edit
"""The legacy ``deep_gemm._C`` module, as a thin layer over ``torch.ops.deep_gemm``.

Loading this module loads the compiled extension (which registers every op
with the dispatcher) and defines one function per op with the historical
pybind11 signature: ``(tensor, scale)`` pairs, defaults and aliases.  Ops that
this build does not contain (their guard is off) are simply absent.
"""

import torch

from deep_gemm import _convert
from deep_gemm._shim import guard_enabled, load_extension
from deep_gemm._shim import pack_error as _pack_error
from deep_gemm._shim import register_fake as _register_fake

load_extension("deep_gemm._C_extension")

_ops = torch.ops.deep_gemm
_Tensor = torch.Tensor
# Dynamo folds this to True; eager calls go straight to the op (Note [Shim call path] in codegen/spelling/python.py).
_compiling = getattr(torch.compiler, "is_dynamo_compiling", torch.compiler.is_compiling)


def _graph_break() -> None:
    """Note [Python values under Dynamo]: an op returning ints or int lists cannot sit in a graph.
    Dynamo would run it once while tracing and freeze the result; a graph break makes every call
    run the op (with fullgraph=True, compilation fails with a clear message instead)."""
    torch._dynamo.graph_break()


__all__: list[str] = []
FAMILIES: dict[str, list[str]] = {}


def _export(family: str, names: list[str]) -> None:
    FAMILIES.setdefault(family, []).extend(names)
    __all__.extend(names)




# ---- family 'runtime': Process-wide settings read by the kernel heuristics.

_overload_set_num_sms = _ops.set_num_sms.default
_call_set_num_sms = _overload_set_num_sms._op

def set_num_sms(new_num_sms, /):
    """Limit the compute units kernels may use. 0 restores the default (all of them).
    The value must lie in [0, N], N being the current GPU's SM count, or, without a GPU,
    the number of CPU threads ATen uses.
    """
    if _compiling():
        return _overload_set_num_sms(new_num_sms)
    return _call_set_num_sms(new_num_sms)
_export('runtime', ['set_num_sms'])

_overload_get_num_sms = _ops.get_num_sms.default
_call_get_num_sms = _overload_get_num_sms._op

def get_num_sms():
    """The compute units kernels use: the value set by set_num_sms, else the current GPU's SM
    count, or, in a build or process without a GPU, the number of CPU threads ATen uses.
    """
    if _compiling():
        _graph_break()
        return _overload_get_num_sms()
    return _call_get_num_sms()
_export('runtime', ['get_num_sms'])

_overload_set_tc_util = _ops.set_tc_util.default
_call_set_tc_util = _overload_set_tc_util._op

def set_tc_util(new_tc_util, /):
    """Set the approximate tensor-core utilisation (percent, 0..100) the heuristics assume; 0 unsets it."""
    if _compiling():
        return _overload_set_tc_util(new_tc_util)
    return _call_set_tc_util(new_tc_util)
_export('runtime', ['set_tc_util'])

_overload_get_tc_util = _ops.get_tc_util.default
_call_get_tc_util = _overload_get_tc_util._op

def get_tc_util():
    """The tensor-core utilisation the heuristics assume (100 when unset)."""
    if _compiling():
        _graph_break()
        return _overload_get_tc_util()
    return _call_get_tc_util()
_export('runtime', ['get_tc_util'])

_overload_set_pdl = _ops.set_pdl.default
_call_set_pdl = _overload_set_pdl._op

def set_pdl(new_enable_pdl, /):
    """Enable or disable Programmatic Dependent Launch for kernels that support it."""
    if _compiling():
        return _overload_set_pdl(new_enable_pdl)
    return _call_set_pdl(new_enable_pdl)
_export('runtime', ['set_pdl'])

_overload_get_pdl = _ops.get_pdl.default
_call_get_pdl = _overload_get_pdl._op

def get_pdl():
    """Whether Programmatic Dependent Launch is enabled (False by default)."""
    if _compiling():
        _graph_break()
        return _overload_get_pdl()
    return _call_get_pdl()
_export('runtime', ['get_pdl'])

_overload_set_ignore_compile_dims = _ops.set_ignore_compile_dims.default
_call_set_ignore_compile_dims = _overload_set_ignore_compile_dims._op

def set_ignore_compile_dims(new_value, /):
    """When True, the compiled_dims argument of every GEMM is ignored (all sizes are run-time values)."""
    if _compiling():
        return _overload_set_ignore_compile_dims(new_value)
    return _call_set_ignore_compile_dims(new_value)
_export('runtime', ['set_ignore_compile_dims'])

_overload_get_ignore_compile_dims = _ops.get_ignore_compile_dims.default
_call_get_ignore_compile_dims = _overload_get_ignore_compile_dims._op

def get_ignore_compile_dims():
    """The value last given to set_ignore_compile_dims (False by default)."""
    if _compiling():
        _graph_break()
        return _overload_get_ignore_compile_dims()
    return _call_get_ignore_compile_dims()
_export('runtime', ['get_ignore_compile_dims'])

_overload_set_block_size_multiple_of = _ops.set_block_size_multiple_of.default
_call_set_block_size_multiple_of = _overload_set_block_size_multiple_of._op

def set_block_size_multiple_of(value, /):
    """Constrain BLOCK_M / BLOCK_N to multiples of the given sizes: an int x means (x, x), a pair
    (bm, bn) sets both. Each entry must lie in [1, 256].
    """
    value = _convert.int_or_pair(value, "set_block_size_multiple_of", "value")
    if _compiling():
        return _overload_set_block_size_multiple_of(value)
    return _call_set_block_size_multiple_of(value)
_export('runtime', ['set_block_size_multiple_of'])

_overload_get_block_size_multiple_of = _ops.get_block_size_multiple_of.default
_call_get_block_size_multiple_of = _overload_get_block_size_multiple_of._op

def get_block_size_multiple_of():
    """The (BLOCK_M, BLOCK_N) multiples last set by set_block_size_multiple_of ([1, 1] by default)."""
    if _compiling():
        _graph_break()
        return _overload_get_block_size_multiple_of()
    return _call_get_block_size_multiple_of()
_export('runtime', ['get_block_size_multiple_of'])

_overload_init = _ops.init.default
_call_init = _overload_init._op

def init(library_root_path, cuda_home_path_by_python, /):
    """Record the package directory and the CUDA home; deep_gemm calls it at import.
    The library root must be an existing directory.
    """
    if _compiling():
        return _overload_init(library_root_path, cuda_home_path_by_python)
    return _call_init(library_root_path, cuda_home_path_by_python)


# ---- family 'layout': Scale-factor layouts the GEMM kernels consume, and the alignment of contiguous grouped layouts.

_overload_transform_sf_into_required_layout = _ops.transform_sf_into_required_layout.default
_call_transform_sf_into_required_layout = _overload_transform_sf_into_required_layout._op

def transform_sf_into_required_layout(sf, mn, k, recipe, num_groups=None, is_sfa=None, disable_ue8m0_cast=False, psum_layout=None):
    """Convert user scale factors into the layout the kernels read.
    recipe is (gran_mn, gran_k), or (gran_m_a, gran_n_b, gran_k) together with is_sfa.
    sf must be [(num_groups,) ceil(mn/gran_mn), ceil(k/gran_k)] float32, or packed UE8M0 int32
    [(num_groups,) mn, ceil(k/(4*gran_k))] in the MN-major TMA-aligned layout.
    float32 scales become float32 MN-major TMA-aligned (SM90 rules: on an SM90 GPU, or on the CPU
    with disable_ue8m0_cast=True) or packed UE8M0 int32 (SM100 rules; rows of 128-row blocks are
    broadcast first). Always returns a new tensor.
    """
    recipe = _convert.recipe_2_or_3(recipe, "transform_sf_into_required_layout", "recipe")
    if _compiling():
        return _overload_transform_sf_into_required_layout(sf, mn, k, recipe, num_groups, is_sfa, disable_ue8m0_cast, psum_layout)
    if psum_layout is not None:
        return _call_transform_sf_into_required_layout(sf, mn, k, recipe, num_groups, is_sfa, disable_ue8m0_cast, psum_layout)
    if disable_ue8m0_cast is not False:
        return _call_transform_sf_into_required_layout(sf, mn, k, recipe, num_groups, is_sfa, disable_ue8m0_cast)
    if is_sfa is not None:
        return _call_transform_sf_into_required_layout(sf, mn, k, recipe, num_groups, is_sfa)
    if num_groups is not None:
        return _call_transform_sf_into_required_layout(sf, mn, k, recipe, num_groups)
    return _call_transform_sf_into_required_layout(sf, mn, k, recipe)
_export('layout', ['transform_sf_into_required_layout'])
_register_fake('deep_gemm::transform_sf_into_required_layout', 'deep_gemm._fakes.layout.transform_sf_into_required_layout')

_overload_get_tma_aligned_size = _ops.get_tma_aligned_size.default
_call_get_tma_aligned_size = _overload_get_tma_aligned_size._op

def get_tma_aligned_size(x, element_size, /):
    """x rounded up so that x * element_size is a multiple of 16 bytes."""
    if _compiling():
        _graph_break()
        return _overload_get_tma_aligned_size(x, element_size)
    return _call_get_tma_aligned_size(x, element_size)
_export('layout', ['get_tma_aligned_size'])

_overload_get_mn_major_tma_aligned_tensor = _ops.get_mn_major_tma_aligned_tensor.default
_call_get_mn_major_tma_aligned_tensor = _overload_get_mn_major_tma_aligned_tensor._op

def get_mn_major_tma_aligned_tensor(sf, /):
    """float32 scales [(B,) mn, sf_k] -> the same values in MN-major layout with mn padded to a
    multiple of 4: strides (tma_mn * sf_k, 1, tma_mn), tma_mn = align(mn, 4). Always a new tensor.
    """
    if _compiling():
        return _overload_get_mn_major_tma_aligned_tensor(sf)
    return _call_get_mn_major_tma_aligned_tensor(sf)
_export('layout', ['get_mn_major_tma_aligned_tensor'])
_register_fake('deep_gemm::get_mn_major_tma_aligned_tensor', 'deep_gemm._fakes.layout.get_mn_major_tma_aligned_tensor')

_overload_get_mn_major_tma_aligned_packed_ue8m0_tensor = _ops.get_mn_major_tma_aligned_packed_ue8m0_tensor.default
_call_get_mn_major_tma_aligned_packed_ue8m0_tensor = _overload_get_mn_major_tma_aligned_packed_ue8m0_tensor._op

def get_mn_major_tma_aligned_packed_ue8m0_tensor(sf, psum_layout=None):
    """float32 power-of-two scales [(B,) mn, sf_k] -> int32 [(B,) mn, ceil(sf_k/4)], MN-major and
    TMA-aligned; byte j of word w is the exponent byte of K-group 4w+j, zero-padded.
    With psum_layout (a psum grouped layout over mn; one batch, contiguous sf) the rows between
    groups are not read and come out zero.
    """
    if _compiling():
        return _overload_get_mn_major_tma_aligned_packed_ue8m0_tensor(sf, psum_layout)
    if psum_layout is not None:
        return _call_get_mn_major_tma_aligned_packed_ue8m0_tensor(sf, psum_layout)
    return _call_get_mn_major_tma_aligned_packed_ue8m0_tensor(sf)
_export('layout', ['get_mn_major_tma_aligned_packed_ue8m0_tensor'])
_register_fake('deep_gemm::get_mn_major_tma_aligned_packed_ue8m0_tensor', 'deep_gemm._fakes.layout.get_mn_major_tma_aligned_packed_ue8m0_tensor')

_overload_get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor = _ops.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor.default
_call_get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor = _overload_get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor._op

def get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, grouped_layout, ks_cpu, gran_k, k_alignment, use_psum_layout=False):
    """K-grouped float32 scales [sum ceil(k_g/gran_k), mn] (contiguous, mn % 4 == 0, at most 128
    groups) -> int32 [sum ceil(k_g/(4*gran_k)), mn], each group's K range packed on its own,
    4 K-groups per int. gran_k is 32 or 128 and k_alignment a multiple of 32. Without ks_cpu
    (None or []) use_psum_layout must be set; sizes then come from grouped_layout and the
    result has the upper-bound row count (sf_k + 3 * groups) / 4, zero-filled past the data.
    """
    if _compiling():
        return _overload_get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, grouped_layout, ks_cpu, gran_k, k_alignment, use_psum_layout)
    if use_psum_layout is not False:
        return _call_get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, grouped_layout, ks_cpu, gran_k, k_alignment, use_psum_layout)
    return _call_get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, grouped_layout, ks_cpu, gran_k, k_alignment)
_export('layout', ['get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor'])
_register_fake('deep_gemm::get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor', 'deep_gemm._fakes.layout.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor')

_overload_set_mk_alignment_for_contiguous_layout = _ops.set_mk_alignment_for_contiguous_layout.default
_call_set_mk_alignment_for_contiguous_layout = _overload_set_mk_alignment_for_contiguous_layout._op

def set_mk_alignment_for_contiguous_layout(new_value, /):
    """Set the group alignment of M (m-grouped) and K (k-grouped) contiguous layouts; a positive multiple of 32 (default 128)."""
    if _compiling():
        return _overload_set_mk_alignment_for_contiguous_layout(new_value)
    return _call_set_mk_alignment_for_contiguous_layout(new_value)
_export('layout', ['set_mk_alignment_for_contiguous_layout'])

_overload_get_mk_alignment_for_contiguous_layout = _ops.get_mk_alignment_for_contiguous_layout.default
_call_get_mk_alignment_for_contiguous_layout = _overload_get_mk_alignment_for_contiguous_layout._op

def get_mk_alignment_for_contiguous_layout():
    """The current group alignment of contiguous grouped layouts (128 by default)."""
    if _compiling():
        _graph_break()
        return _overload_get_mk_alignment_for_contiguous_layout()
    return _call_get_mk_alignment_for_contiguous_layout()
_export('layout', ['get_mk_alignment_for_contiguous_layout'])

_overload_get_theoretical_mk_alignment_for_contiguous_layout = _ops.get_theoretical_mk_alignment_for_contiguous_layout.default
_call_get_theoretical_mk_alignment_for_contiguous_layout = _overload_get_theoretical_mk_alignment_for_contiguous_layout._op

def get_theoretical_mk_alignment_for_contiguous_layout(expected_m=None):
    """The alignment the kernels would pick: 128 except on SM100, where it starts at 224 and drops
    by 32 while it stays above 32 and the next value down is still at least expected_m.
    """
    if _compiling():
        _graph_break()
        return _overload_get_theoretical_mk_alignment_for_contiguous_layout(expected_m)
    if expected_m is not None:
        return _call_get_theoretical_mk_alignment_for_contiguous_layout(expected_m)
    return _call_get_theoretical_mk_alignment_for_contiguous_layout()
_export('layout', ['get_theoretical_mk_alignment_for_contiguous_layout'])


# ---- family 'gemm': Dense and grouped GEMMs with block-scaled FP8/FP4 or BF16 operands.

_overload_fp8_fp4_gemm_nt = _ops.fp8_fp4_gemm_nt.default
_call_fp8_fp4_gemm_nt = _overload_fp8_fp4_gemm_nt._op

def fp8_fp4_gemm_nt(a, b, d, c=None, recipe=None, recipe_a=None, recipe_b=None, compiled_dims="nk", disable_ue8m0_cast=False):
    """D = C + (A * SFA)(B * SFB)^T with A [M, K] and B [N, K] block-scaled.
    Data is FP8 e4m3, or FP4 e2m1 packed two per int8 byte (low nibble first) along the
    contiguous dim. Scales are float32 [ceil(MN/gran_mn), ceil(K/gran_k)] or packed UE8M0 int32
    [MN, ceil(K/(4*gran_k))]. Pass recipe (1, gran_n, gran_k) or recipe_a + recipe_b
    ((gran_mn, gran_k) each); by default (1, 128, 128) for float32 SFB and (1, 1, 128) for packed
    SFB. d is bf16 or float32, row-major [M, N]; c (optional, may be d itself) is added.
    """
    if (a.__class__ is not tuple and isinstance(a, _Tensor)) or (b.__class__ is not tuple and isinstance(b, _Tensor)):
        raise _pack_error("fp8_fp4_gemm_nt", ("a", "b",), (a, b,))
    try:
        _a, sfa = a
        _b, sfb = b
    except (TypeError, ValueError):
        raise _pack_error("fp8_fp4_gemm_nt", ("a", "b",), (a, b,)) from None
    if _compiling():
        return _overload_fp8_fp4_gemm_nt(_a, sfa, _b, sfb, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    if disable_ue8m0_cast is not False:
        return _call_fp8_fp4_gemm_nt(_a, sfa, _b, sfb, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    if compiled_dims != "nk":
        return _call_fp8_fp4_gemm_nt(_a, sfa, _b, sfb, d, c, recipe, recipe_a, recipe_b, compiled_dims)
    if recipe_b is not None:
        return _call_fp8_fp4_gemm_nt(_a, sfa, _b, sfb, d, c, recipe, recipe_a, recipe_b)
    if recipe_a is not None:
        return _call_fp8_fp4_gemm_nt(_a, sfa, _b, sfb, d, c, recipe, recipe_a)
    if recipe is not None:
        return _call_fp8_fp4_gemm_nt(_a, sfa, _b, sfb, d, c, recipe)
    if c is not None:
        return _call_fp8_fp4_gemm_nt(_a, sfa, _b, sfb, d, c)
    return _call_fp8_fp4_gemm_nt(_a, sfa, _b, sfb, d)
fp8_gemm_nt = fp8_fp4_gemm_nt
_export('gemm', ['fp8_fp4_gemm_nt', 'fp8_gemm_nt'])

_overload_fp8_fp4_gemm_nn = _ops.fp8_fp4_gemm_nn.default
_call_fp8_fp4_gemm_nn = _overload_fp8_fp4_gemm_nn._op

def fp8_fp4_gemm_nn(a, b, d, c=None, recipe=None, recipe_a=None, recipe_b=None, compiled_dims="nk", disable_ue8m0_cast=False):
    """fp8_fp4_gemm_nt with B given as [K, N] and SFB transposed with it."""
    if (a.__class__ is not tuple and isinstance(a, _Tensor)) or (b.__class__ is not tuple and isinstance(b, _Tensor)):
        raise _pack_error("fp8_fp4_gemm_nn", ("a", "b",), (a, b,))
    try:
        _a, sfa = a
        _b, sfb = b
    except (TypeError, ValueError):
        raise _pack_error("fp8_fp4_gemm_nn", ("a", "b",), (a, b,)) from None
    if _compiling():
        return _overload_fp8_fp4_gemm_nn(_a, sfa, _b, sfb, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    if disable_ue8m0_cast is not False:
        return _call_fp8_fp4_gemm_nn(_a, sfa, _b, sfb, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    if compiled_dims != "nk":
        return _call_fp8_fp4_gemm_nn(_a, sfa, _b, sfb, d, c, recipe, recipe_a, recipe_b, compiled_dims)
    if recipe_b is not None:
        return _call_fp8_fp4_gemm_nn(_a, sfa, _b, sfb, d, c, recipe, recipe_a, recipe_b)
    if recipe_a is not None:
        return _call_fp8_fp4_gemm_nn(_a, sfa, _b, sfb, d, c, recipe, recipe_a)
    if recipe is not None:
        return _call_fp8_fp4_gemm_nn(_a, sfa, _b, sfb, d, c, recipe)
    if c is not None:
        return _call_fp8_fp4_gemm_nn(_a, sfa, _b, sfb, d, c)
    return _call_fp8_fp4_gemm_nn(_a, sfa, _b, sfb, d)
fp8_gemm_nn = fp8_fp4_gemm_nn
_export('gemm', ['fp8_fp4_gemm_nn', 'fp8_gemm_nn'])

_overload_fp8_fp4_gemm_tn = _ops.fp8_fp4_gemm_tn.default
_call_fp8_fp4_gemm_tn = _overload_fp8_fp4_gemm_tn._op

def fp8_fp4_gemm_tn(a, b, d, c=None, recipe=None, recipe_a=None, recipe_b=None, compiled_dims="mn", disable_ue8m0_cast=False):
    """fp8_fp4_gemm_nt with A given as [K, M] and B as [K, N], each scale tensor transposed with its data."""
    if (a.__class__ is not tuple and isinstance(a, _Tensor)) or (b.__class__ is not tuple and isinstance(b, _Tensor)):
        raise _pack_error("fp8_fp4_gemm_tn", ("a", "b",), (a, b,))
    try:
        _a, sfa = a
        _b, sfb = b
    except (TypeError, ValueError):
        raise _pack_error("fp8_fp4_gemm_tn", ("a", "b",), (a, b,)) from None
    if _compiling():
        return _overload_fp8_fp4_gemm_tn(_a, sfa, _b, sfb, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    if disable_ue8m0_cast is not False:
        return _call_fp8_fp4_gemm_tn(_a, sfa, _b, sfb, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    if compiled_dims != "mn":
        return _call_fp8_fp4_gemm_tn(_a, sfa, _b, sfb, d, c, recipe, recipe_a, recipe_b, compiled_dims)
    if recipe_b is not None:
        return _call_fp8_fp4_gemm_tn(_a, sfa, _b, sfb, d, c, recipe, recipe_a, recipe_b)
    if recipe_a is not None:
        return _call_fp8_fp4_gemm_tn(_a, sfa, _b, sfb, d, c, recipe, recipe_a)
    if recipe is not None:
        return _call_fp8_fp4_gemm_tn(_a, sfa, _b, sfb, d, c, recipe)
    if c is not None:
        return _call_fp8_fp4_gemm_tn(_a, sfa, _b, sfb, d, c)
    return _call_fp8_fp4_gemm_tn(_a, sfa, _b, sfb, d)
fp8_gemm_tn = fp8_fp4_gemm_tn
_export('gemm', ['fp8_fp4_gemm_tn', 'fp8_gemm_tn'])

_overload_fp8_fp4_gemm_tt = _ops.fp8_fp4_gemm_tt.default
_call_fp8_fp4_gemm_tt = _overload_fp8_fp4_gemm_tt._op

def fp8_fp4_gemm_tt(a, b, d, c=None, recipe=None, recipe_a=None, recipe_b=None, compiled_dims="mn", disable_ue8m0_cast=False):
    """fp8_fp4_gemm_nt with A given as [K, M] (SFA transposed with it) and B as [N, K]."""
    if (a.__class__ is not tuple and isinstance(a, _Tensor)) or (b.__class__ is not tuple and isinstance(b, _Tensor)):
        raise _pack_error("fp8_fp4_gemm_tt", ("a", "b",), (a, b,))
    try:
        _a, sfa = a
        _b, sfb = b
    except (TypeError, ValueError):
        raise _pack_error("fp8_fp4_gemm_tt", ("a", "b",), (a, b,)) from None
    if _compiling():
        return _overload_fp8_fp4_gemm_tt(_a, sfa, _b, sfb, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    if disable_ue8m0_cast is not False:
        return _call_fp8_fp4_gemm_tt(_a, sfa, _b, sfb, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    if compiled_dims != "mn":
        return _call_fp8_fp4_gemm_tt(_a, sfa, _b, sfb, d, c, recipe, recipe_a, recipe_b, compiled_dims)
    if recipe_b is not None:
        return _call_fp8_fp4_gemm_tt(_a, sfa, _b, sfb, d, c, recipe, recipe_a, recipe_b)
    if recipe_a is not None:
        return _call_fp8_fp4_gemm_tt(_a, sfa, _b, sfb, d, c, recipe, recipe_a)
    if recipe is not None:
        return _call_fp8_fp4_gemm_tt(_a, sfa, _b, sfb, d, c, recipe)
    if c is not None:
        return _call_fp8_fp4_gemm_tt(_a, sfa, _b, sfb, d, c)
    return _call_fp8_fp4_gemm_tt(_a, sfa, _b, sfb, d)
fp8_gemm_tt = fp8_fp4_gemm_tt
_export('gemm', ['fp8_fp4_gemm_tt', 'fp8_gemm_tt'])

_overload_bf16_gemm_nt = _ops.bf16_gemm_nt.default
_call_bf16_gemm_nt = _overload_bf16_gemm_nt._op

def bf16_gemm_nt(a, b, d, c=None, compiled_dims="nk"):
    """D = C + A B^T with bf16 A [M, K] and B [N, K] (either major); d is bf16 or float32, row-major [M, N]."""
    if _compiling():
        return _overload_bf16_gemm_nt(a, b, d, c, compiled_dims)
    if compiled_dims != "nk":
        return _call_bf16_gemm_nt(a, b, d, c, compiled_dims)
    if c is not None:
        return _call_bf16_gemm_nt(a, b, d, c)
    return _call_bf16_gemm_nt(a, b, d)
_export('gemm', ['bf16_gemm_nt'])

_overload_bf16_gemm_nn = _ops.bf16_gemm_nn.default
_call_bf16_gemm_nn = _overload_bf16_gemm_nn._op

def bf16_gemm_nn(a, b, d, c=None, compiled_dims="nk"):
    """bf16_gemm_nt with B given as [K, N]."""
    if _compiling():
        return _overload_bf16_gemm_nn(a, b, d, c, compiled_dims)
    if compiled_dims != "nk":
        return _call_bf16_gemm_nn(a, b, d, c, compiled_dims)
    if c is not None:
        return _call_bf16_gemm_nn(a, b, d, c)
    return _call_bf16_gemm_nn(a, b, d)
_export('gemm', ['bf16_gemm_nn'])

_overload_bf16_gemm_tn = _ops.bf16_gemm_tn.default
_call_bf16_gemm_tn = _overload_bf16_gemm_tn._op

def bf16_gemm_tn(a, b, d, c=None, compiled_dims="mn"):
    """bf16_gemm_nt with A given as [K, M] and B as [K, N]."""
    if _compiling():
        return _overload_bf16_gemm_tn(a, b, d, c, compiled_dims)
    if compiled_dims != "mn":
        return _call_bf16_gemm_tn(a, b, d, c, compiled_dims)
    if c is not None:
        return _call_bf16_gemm_tn(a, b, d, c)
    return _call_bf16_gemm_tn(a, b, d)
_export('gemm', ['bf16_gemm_tn'])

_overload_bf16_gemm_tt = _ops.bf16_gemm_tt.default
_call_bf16_gemm_tt = _overload_bf16_gemm_tt._op

def bf16_gemm_tt(a, b, d, c=None, compiled_dims="mn"):
    """bf16_gemm_nt with A given as [K, M] and B as [N, K]."""
    if _compiling():
        return _overload_bf16_gemm_tt(a, b, d, c, compiled_dims)
    if compiled_dims != "mn":
        return _call_bf16_gemm_tt(a, b, d, c, compiled_dims)
    if c is not None:
        return _call_bf16_gemm_tt(a, b, d, c)
    return _call_bf16_gemm_tt(a, b, d)
_export('gemm', ['bf16_gemm_tt'])

_overload_m_grouped_fp8_fp4_gemm_nt_contiguous = _ops.m_grouped_fp8_fp4_gemm_nt_contiguous.default
_call_m_grouped_fp8_fp4_gemm_nt_contiguous = _overload_m_grouped_fp8_fp4_gemm_nt_contiguous._op

def m_grouped_fp8_fp4_gemm_nt_contiguous(a, b, d, grouped_layout, recipe=None, recipe_a=None, recipe_b=None, compiled_dims="nk", disable_ue8m0_cast=False, use_psum_layout=False, ensure_zero_padding=True, expected_m_for_psum_layout=None):
    """M-grouped D = (A * SFA)(B[g] * SFB[g])^T with A [M, K] holding the rows of every group and
    B [G, N, K] (scales per group, [G, ...]); operands and recipes as in fp8_fp4_gemm_nt; d is
    bf16 [M, N]. grouped_layout is int32: without use_psum_layout, [M] group ids per row, where
    an id outside [0, G) (-1 by convention) marks a padding row whose D row is written as zero
    (always; ensure_zero_padding does not apply). With use_psum_layout, [G] cumulative end rows:
    group g covers [align(end[g-1], a), end[g]), a = get_mk_alignment_for_contiguous_layout();
    rows outside every group are not read nor written, except that ensure_zero_padding zeroes the
    D rows [end[g], align(end[g], a)). expected_m_for_psum_layout
    (a hint) is only allowed with use_psum_layout.
    """
    if (a.__class__ is not tuple and isinstance(a, _Tensor)) or (b.__class__ is not tuple and isinstance(b, _Tensor)):
        raise _pack_error("m_grouped_fp8_fp4_gemm_nt_contiguous", ("a", "b",), (a, b,))
    try:
        _a, sfa = a
        _b, sfb = b
    except (TypeError, ValueError):
        raise _pack_error("m_grouped_fp8_fp4_gemm_nt_contiguous", ("a", "b",), (a, b,)) from None
    if _compiling():
        return _overload_m_grouped_fp8_fp4_gemm_nt_contiguous(_a, sfa, _b, sfb, d, grouped_layout, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast, use_psum_layout, ensure_zero_padding, expected_m_for_psum_layout)
    if expected_m_for_psum_layout is not None:
        return _call_m_grouped_fp8_fp4_gemm_nt_contiguous(_a, sfa, _b, sfb, d, grouped_layout, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast, use_psum_layout, ensure_zero_padding, expected_m_for_psum_layout)
    if ensure_zero_padding is not True:
        return _call_m_grouped_fp8_fp4_gemm_nt_contiguous(_a, sfa, _b, sfb, d, grouped_layout, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast, use_psum_layout, ensure_zero_padding)
    if use_psum_layout is not False:
        return _call_m_grouped_fp8_fp4_gemm_nt_contiguous(_a, sfa, _b, sfb, d, grouped_layout, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast, use_psum_layout)
    if disable_ue8m0_cast is not False:
        return _call_m_grouped_fp8_fp4_gemm_nt_contiguous(_a, sfa, _b, sfb, d, grouped_layout, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    if compiled_dims != "nk":
        return _call_m_grouped_fp8_fp4_gemm_nt_contiguous(_a, sfa, _b, sfb, d, grouped_layout, recipe, recipe_a, recipe_b, compiled_dims)
    if recipe_b is not None:
        return _call_m_grouped_fp8_fp4_gemm_nt_contiguous(_a, sfa, _b, sfb, d, grouped_layout, recipe, recipe_a, recipe_b)
    if recipe_a is not None:
        return _call_m_grouped_fp8_fp4_gemm_nt_contiguous(_a, sfa, _b, sfb, d, grouped_layout, recipe, recipe_a)
    if recipe is not None:
        return _call_m_grouped_fp8_fp4_gemm_nt_contiguous(_a, sfa, _b, sfb, d, grouped_layout, recipe)
    return _call_m_grouped_fp8_fp4_gemm_nt_contiguous(_a, sfa, _b, sfb, d, grouped_layout)
m_grouped_fp8_gemm_nt_contiguous = m_grouped_fp8_fp4_gemm_nt_contiguous
_export('gemm', ['m_grouped_fp8_fp4_gemm_nt_contiguous', 'm_grouped_fp8_gemm_nt_contiguous'])

_overload_m_grouped_fp8_fp4_gemm_nn_contiguous = _ops.m_grouped_fp8_fp4_gemm_nn_contiguous.default
_call_m_grouped_fp8_fp4_gemm_nn_contiguous = _overload_m_grouped_fp8_fp4_gemm_nn_contiguous._op

def m_grouped_fp8_fp4_gemm_nn_contiguous(a, b, d, grouped_layout, recipe=None, recipe_a=None, recipe_b=None, compiled_dims="nk", disable_ue8m0_cast=False, use_psum_layout=False, ensure_zero_padding=True):
    """m_grouped_fp8_fp4_gemm_nt_contiguous with B given as [G, K, N] and SFB transposed with it."""
    if (a.__class__ is not tuple and isinstance(a, _Tensor)) or (b.__class__ is not tuple and isinstance(b, _Tensor)):
        raise _pack_error("m_grouped_fp8_fp4_gemm_nn_contiguous", ("a", "b",), (a, b,))
    try:
        _a, sfa = a
        _b, sfb = b
    except (TypeError, ValueError):
        raise _pack_error("m_grouped_fp8_fp4_gemm_nn_contiguous", ("a", "b",), (a, b,)) from None
    if _compiling():
        return _overload_m_grouped_fp8_fp4_gemm_nn_contiguous(_a, sfa, _b, sfb, d, grouped_layout, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast, use_psum_layout, ensure_zero_padding)
    if ensure_zero_padding is not True:
        return _call_m_grouped_fp8_fp4_gemm_nn_contiguous(_a, sfa, _b, sfb, d, grouped_layout, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast, use_psum_layout, ensure_zero_padding)
    if use_psum_layout is not False:
        return _call_m_grouped_fp8_fp4_gemm_nn_contiguous(_a, sfa, _b, sfb, d, grouped_layout, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast, use_psum_layout)
    if disable_ue8m0_cast is not False:
        return _call_m_grouped_fp8_fp4_gemm_nn_contiguous(_a, sfa, _b, sfb, d, grouped_layout, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    if compiled_dims != "nk":
        return _call_m_grouped_fp8_fp4_gemm_nn_contiguous(_a, sfa, _b, sfb, d, grouped_layout, recipe, recipe_a, recipe_b, compiled_dims)
    if recipe_b is not None:
        return _call_m_grouped_fp8_fp4_gemm_nn_contiguous(_a, sfa, _b, sfb, d, grouped_layout, recipe, recipe_a, recipe_b)
    if recipe_a is not None:
        return _call_m_grouped_fp8_fp4_gemm_nn_contiguous(_a, sfa, _b, sfb, d, grouped_layout, recipe, recipe_a)
    if recipe is not None:
        return _call_m_grouped_fp8_fp4_gemm_nn_contiguous(_a, sfa, _b, sfb, d, grouped_layout, recipe)
    return _call_m_grouped_fp8_fp4_gemm_nn_contiguous(_a, sfa, _b, sfb, d, grouped_layout)
m_grouped_fp8_gemm_nn_contiguous = m_grouped_fp8_fp4_gemm_nn_contiguous
_export('gemm', ['m_grouped_fp8_fp4_gemm_nn_contiguous', 'm_grouped_fp8_gemm_nn_contiguous'])

_overload_m_grouped_fp8_fp4_gemm_nt_masked = _ops.m_grouped_fp8_fp4_gemm_nt_masked.default
_call_m_grouped_fp8_fp4_gemm_nt_masked = _overload_m_grouped_fp8_fp4_gemm_nt_masked._op

def m_grouped_fp8_fp4_gemm_nt_masked(a, b, d, masked_m, expected_m, recipe=None, recipe_a=None, recipe_b=None, compiled_dims="nk", disable_ue8m0_cast=False):
    """Batched D[g] = (A[g] * SFA[g])(B[g] * SFB[g])^T with A [G, max_m, K], B [G, N, K] and d bf16
    [G, max_m, N]; operands and recipes as in fp8_fp4_gemm_nt. masked_m is int32 [G]: rows
    r >= masked_m[g] of D[g] are not written. expected_m (> 0) is only a performance hint.
    """
    if (a.__class__ is not tuple and isinstance(a, _Tensor)) or (b.__class__ is not tuple and isinstance(b, _Tensor)):
        raise _pack_error("m_grouped_fp8_fp4_gemm_nt_masked", ("a", "b",), (a, b,))
    try:
        _a, sfa = a
        _b, sfb = b
    except (TypeError, ValueError):
        raise _pack_error("m_grouped_fp8_fp4_gemm_nt_masked", ("a", "b",), (a, b,)) from None
    if _compiling():
        return _overload_m_grouped_fp8_fp4_gemm_nt_masked(_a, sfa, _b, sfb, d, masked_m, expected_m, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    if disable_ue8m0_cast is not False:
        return _call_m_grouped_fp8_fp4_gemm_nt_masked(_a, sfa, _b, sfb, d, masked_m, expected_m, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    if compiled_dims != "nk":
        return _call_m_grouped_fp8_fp4_gemm_nt_masked(_a, sfa, _b, sfb, d, masked_m, expected_m, recipe, recipe_a, recipe_b, compiled_dims)
    if recipe_b is not None:
        return _call_m_grouped_fp8_fp4_gemm_nt_masked(_a, sfa, _b, sfb, d, masked_m, expected_m, recipe, recipe_a, recipe_b)
    if recipe_a is not None:
        return _call_m_grouped_fp8_fp4_gemm_nt_masked(_a, sfa, _b, sfb, d, masked_m, expected_m, recipe, recipe_a)
    if recipe is not None:
        return _call_m_grouped_fp8_fp4_gemm_nt_masked(_a, sfa, _b, sfb, d, masked_m, expected_m, recipe)
    return _call_m_grouped_fp8_fp4_gemm_nt_masked(_a, sfa, _b, sfb, d, masked_m, expected_m)
m_grouped_fp8_gemm_nt_masked = m_grouped_fp8_fp4_gemm_nt_masked
fp8_m_grouped_gemm_nt_masked = m_grouped_fp8_fp4_gemm_nt_masked
_export('gemm', ['m_grouped_fp8_fp4_gemm_nt_masked', 'm_grouped_fp8_gemm_nt_masked', 'fp8_m_grouped_gemm_nt_masked'])

_overload_k_grouped_fp8_gemm_tn_contiguous = _ops.k_grouped_fp8_gemm_tn_contiguous.default
_call_k_grouped_fp8_gemm_tn_contiguous = _overload_k_grouped_fp8_gemm_tn_contiguous._op

def k_grouped_fp8_gemm_tn_contiguous(a, b, d, ks_cpu, grouped_layout, c=None, recipe=(1, 1, 128), compiled_dims="mn", use_psum_layout=False):
    """K-grouped (weight-gradient) D[g] = C[g] + (A_g * SFA_g)^T (B_g * SFB_g), with A [sum K, M] and
    B [sum K, N] FP8 e4m3 holding the K slices of the groups one after another, and d, c float32
    [G, M, N]; c is required (pass d itself to accumulate in place). Scales are per channel over
    gran_k rows of each group: float32 [sum ceil(k_g/gran_k), M] or packed UE8M0 int32
    [sum ceil(k_g/(4*gran_k)), M]. recipe is (1, 1, 32 or 128). ks_cpu lists the K sizes (each a
    multiple of get_mk_alignment_for_contiguous_layout(), 0 allowed: D[g] = C[g]); grouped_layout
    is int32 [G], equal to ks_cpu (checked when it is on the CPU; sizes always come from ks_cpu
    when given). With use_psum_layout it holds end offsets instead (group g
    starts at the aligned end of group g-1, sizes need not be aligned), and ks_cpu may be None or
    [], in which case the sizes are read from grouped_layout on the host.
    """
    if (a.__class__ is not tuple and isinstance(a, _Tensor)) or (b.__class__ is not tuple and isinstance(b, _Tensor)):
        raise _pack_error("k_grouped_fp8_gemm_tn_contiguous", ("a", "b",), (a, b,))
    try:
        _a, sfa = a
        _b, sfb = b
    except (TypeError, ValueError):
        raise _pack_error("k_grouped_fp8_gemm_tn_contiguous", ("a", "b",), (a, b,)) from None
    if _compiling():
        return _overload_k_grouped_fp8_gemm_tn_contiguous(_a, sfa, _b, sfb, d, ks_cpu, grouped_layout, c, recipe, compiled_dims, use_psum_layout)
    if use_psum_layout is not False:
        return _call_k_grouped_fp8_gemm_tn_contiguous(_a, sfa, _b, sfb, d, ks_cpu, grouped_layout, c, recipe, compiled_dims, use_psum_layout)
    if compiled_dims != "mn":
        return _call_k_grouped_fp8_gemm_tn_contiguous(_a, sfa, _b, sfb, d, ks_cpu, grouped_layout, c, recipe, compiled_dims)
    if recipe != (1, 1, 128):
        return _call_k_grouped_fp8_gemm_tn_contiguous(_a, sfa, _b, sfb, d, ks_cpu, grouped_layout, c, recipe)
    if c is not None:
        return _call_k_grouped_fp8_gemm_tn_contiguous(_a, sfa, _b, sfb, d, ks_cpu, grouped_layout, c)
    return _call_k_grouped_fp8_gemm_tn_contiguous(_a, sfa, _b, sfb, d, ks_cpu, grouped_layout)
_export('gemm', ['k_grouped_fp8_gemm_tn_contiguous'])

_overload_k_grouped_fp8_gemm_nt_contiguous = _ops.k_grouped_fp8_gemm_nt_contiguous.default
_call_k_grouped_fp8_gemm_nt_contiguous = _overload_k_grouped_fp8_gemm_nt_contiguous._op

def k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks_cpu, grouped_layout, c=None, recipe=(1, 1, 128), compiled_dims="mn", use_psum_layout=False):
    """k_grouped_fp8_gemm_tn_contiguous with K-major groups: a (and b) is 1-D, group g's block being
    A_g as [M, k_g] row-major, the blocks one after another (sum K * M elements); sfa [M, sum
    ceil(k_g/128)] and sfb [N, ...] float32. recipe must be (1, 1, 128), ks_cpu must be given and
    use_psum_layout must be False.
    """
    if (a.__class__ is not tuple and isinstance(a, _Tensor)) or (b.__class__ is not tuple and isinstance(b, _Tensor)):
        raise _pack_error("k_grouped_fp8_gemm_nt_contiguous", ("a", "b",), (a, b,))
    try:
        _a, sfa = a
        _b, sfb = b
    except (TypeError, ValueError):
        raise _pack_error("k_grouped_fp8_gemm_nt_contiguous", ("a", "b",), (a, b,)) from None
    if _compiling():
        return _overload_k_grouped_fp8_gemm_nt_contiguous(_a, sfa, _b, sfb, d, ks_cpu, grouped_layout, c, recipe, compiled_dims, use_psum_layout)
    if use_psum_layout is not False:
        return _call_k_grouped_fp8_gemm_nt_contiguous(_a, sfa, _b, sfb, d, ks_cpu, grouped_layout, c, recipe, compiled_dims, use_psum_layout)
    if compiled_dims != "mn":
        return _call_k_grouped_fp8_gemm_nt_contiguous(_a, sfa, _b, sfb, d, ks_cpu, grouped_layout, c, recipe, compiled_dims)
    if recipe != (1, 1, 128):
        return _call_k_grouped_fp8_gemm_nt_contiguous(_a, sfa, _b, sfb, d, ks_cpu, grouped_layout, c, recipe)
    if c is not None:
        return _call_k_grouped_fp8_gemm_nt_contiguous(_a, sfa, _b, sfb, d, ks_cpu, grouped_layout, c)
    return _call_k_grouped_fp8_gemm_nt_contiguous(_a, sfa, _b, sfb, d, ks_cpu, grouped_layout)
_export('gemm', ['k_grouped_fp8_gemm_nt_contiguous'])

_overload_m_grouped_bf16_gemm_nt_contiguous = _ops.m_grouped_bf16_gemm_nt_contiguous.default
_call_m_grouped_bf16_gemm_nt_contiguous = _overload_m_grouped_bf16_gemm_nt_contiguous._op

def m_grouped_bf16_gemm_nt_contiguous(a, b, d, grouped_layout, compiled_dims="nk", use_psum_layout=False, ensure_zero_padding=True, expected_m_for_psum_layout=None):
    """BF16 m_grouped_fp8_fp4_gemm_nt_contiguous: D = A B[g]^T with bf16 A [M, K], B [G, N, K] and
    d bf16 [M, N]; grouped_layout, use_psum_layout and ensure_zero_padding as there.
    """
    if _compiling():
        return _overload_m_grouped_bf16_gemm_nt_contiguous(a, b, d, grouped_layout, compiled_dims, use_psum_layout, ensure_zero_padding, expected_m_for_psum_layout)
    if expected_m_for_psum_layout is not None:
        return _call_m_grouped_bf16_gemm_nt_contiguous(a, b, d, grouped_layout, compiled_dims, use_psum_layout, ensure_zero_padding, expected_m_for_psum_layout)
    if ensure_zero_padding is not True:
        return _call_m_grouped_bf16_gemm_nt_contiguous(a, b, d, grouped_layout, compiled_dims, use_psum_layout, ensure_zero_padding)
    if use_psum_layout is not False:
        return _call_m_grouped_bf16_gemm_nt_contiguous(a, b, d, grouped_layout, compiled_dims, use_psum_layout)
    if compiled_dims != "nk":
        return _call_m_grouped_bf16_gemm_nt_contiguous(a, b, d, grouped_layout, compiled_dims)
    return _call_m_grouped_bf16_gemm_nt_contiguous(a, b, d, grouped_layout)
_export('gemm', ['m_grouped_bf16_gemm_nt_contiguous'])

_overload_m_grouped_bf16_gemm_nn_contiguous = _ops.m_grouped_bf16_gemm_nn_contiguous.default
_call_m_grouped_bf16_gemm_nn_contiguous = _overload_m_grouped_bf16_gemm_nn_contiguous._op

def m_grouped_bf16_gemm_nn_contiguous(a, b, d, grouped_layout, compiled_dims="nk", use_psum_layout=False, ensure_zero_padding=True):
    """m_grouped_bf16_gemm_nt_contiguous with B given as [G, K, N]."""
    if _compiling():
        return _overload_m_grouped_bf16_gemm_nn_contiguous(a, b, d, grouped_layout, compiled_dims, use_psum_layout, ensure_zero_padding)
    if ensure_zero_padding is not True:
        return _call_m_grouped_bf16_gemm_nn_contiguous(a, b, d, grouped_layout, compiled_dims, use_psum_layout, ensure_zero_padding)
    if use_psum_layout is not False:
        return _call_m_grouped_bf16_gemm_nn_contiguous(a, b, d, grouped_layout, compiled_dims, use_psum_layout)
    if compiled_dims != "nk":
        return _call_m_grouped_bf16_gemm_nn_contiguous(a, b, d, grouped_layout, compiled_dims)
    return _call_m_grouped_bf16_gemm_nn_contiguous(a, b, d, grouped_layout)
_export('gemm', ['m_grouped_bf16_gemm_nn_contiguous'])

_overload_m_grouped_bf16_gemm_nt_masked = _ops.m_grouped_bf16_gemm_nt_masked.default
_call_m_grouped_bf16_gemm_nt_masked = _overload_m_grouped_bf16_gemm_nt_masked._op

def m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, expected_m, compiled_dims="nk"):
    """BF16 m_grouped_fp8_fp4_gemm_nt_masked: D[g] = A[g] B[g]^T with bf16 A [G, max_m, K],
    B [G, N, K] and d bf16 [G, max_m, N]; rows r >= masked_m[g] are not written.
    """
    if _compiling():
        return _overload_m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, expected_m, compiled_dims)
    if compiled_dims != "nk":
        return _call_m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, expected_m, compiled_dims)
    return _call_m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, expected_m)
bf16_m_grouped_gemm_nt_masked = m_grouped_bf16_gemm_nt_masked
_export('gemm', ['m_grouped_bf16_gemm_nt_masked', 'bf16_m_grouped_gemm_nt_masked'])

_overload_k_grouped_bf16_gemm_tn_contiguous = _ops.k_grouped_bf16_gemm_tn_contiguous.default
_call_k_grouped_bf16_gemm_tn_contiguous = _overload_k_grouped_bf16_gemm_tn_contiguous._op

def k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks_cpu, grouped_layout, c=None, compiled_dims="mn", use_psum_layout=False):
    """BF16 k_grouped_fp8_gemm_tn_contiguous: D[g] = C[g] + A_g^T B_g with bf16 A [sum K, M] and
    B [sum K, N], d and c float32 [G, M, N] (c required); ks_cpu, grouped_layout and
    use_psum_layout as there.
    """
    if _compiling():
        return _overload_k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks_cpu, grouped_layout, c, compiled_dims, use_psum_layout)
    if use_psum_layout is not False:
        return _call_k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks_cpu, grouped_layout, c, compiled_dims, use_psum_layout)
    if compiled_dims != "mn":
        return _call_k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks_cpu, grouped_layout, c, compiled_dims)
    if c is not None:
        return _call_k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks_cpu, grouped_layout, c)
    return _call_k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks_cpu, grouped_layout)
_export('gemm', ['k_grouped_bf16_gemm_tn_contiguous'])

_overload_cublaslt_gemm_nt = _ops.cublaslt_gemm_nt.default
_call_cublaslt_gemm_nt = _overload_cublaslt_gemm_nt._op

def cublaslt_gemm_nt(a, b, d, c=None):
    """cuBLASLt reference GEMM D = C + A B^T, no scales: A [M, K] and B [N, K] of one dtype (bf16,
    float32 or FP8 e4m3), d bf16 or float32 [M, N] (row-major), c (optional, may be d) of d's dtype.
    Registered in every build; on the CPU it is the ATen reference (float32 product, one rounding into d).
    """
    if _compiling():
        return _overload_cublaslt_gemm_nt(a, b, d, c)
    if c is not None:
        return _call_cublaslt_gemm_nt(a, b, d, c)
    return _call_cublaslt_gemm_nt(a, b, d)
_export('gemm', ['cublaslt_gemm_nt'])

_overload_cublaslt_gemm_nn = _ops.cublaslt_gemm_nn.default
_call_cublaslt_gemm_nn = _overload_cublaslt_gemm_nn._op

def cublaslt_gemm_nn(a, b, d, c=None):
    """cublaslt_gemm_nt with B given as [K, N]."""
    if _compiling():
        return _overload_cublaslt_gemm_nn(a, b, d, c)
    if c is not None:
        return _call_cublaslt_gemm_nn(a, b, d, c)
    return _call_cublaslt_gemm_nn(a, b, d)
_export('gemm', ['cublaslt_gemm_nn'])

_overload_cublaslt_gemm_tn = _ops.cublaslt_gemm_tn.default
_call_cublaslt_gemm_tn = _overload_cublaslt_gemm_tn._op

def cublaslt_gemm_tn(a, b, d, c=None):
    """cublaslt_gemm_nt with A given as [K, M] and B as [K, N]."""
    if _compiling():
        return _overload_cublaslt_gemm_tn(a, b, d, c)
    if c is not None:
        return _call_cublaslt_gemm_tn(a, b, d, c)
    return _call_cublaslt_gemm_tn(a, b, d)
_export('gemm', ['cublaslt_gemm_tn'])

_overload_cublaslt_gemm_tt = _ops.cublaslt_gemm_tt.default
_call_cublaslt_gemm_tt = _overload_cublaslt_gemm_tt._op

def cublaslt_gemm_tt(a, b, d, c=None):
    """cublaslt_gemm_nt with A given as [K, M] and B as [N, K]."""
    if _compiling():
        return _overload_cublaslt_gemm_tt(a, b, d, c)
    if c is not None:
        return _call_cublaslt_gemm_tt(a, b, d, c)
    return _call_cublaslt_gemm_tt(a, b, d)
_export('gemm', ['cublaslt_gemm_tt'])


# ---- family 'einsum': Batched contractions written as einsum expressions (BF16 and block-scaled FP8).

_overload_einsum = _ops.einsum.default
_call_einsum = _overload_einsum._op

def einsum(expr, a, b, d, c=None, use_cublaslt=False):
    """One of three fixed contractions of bf16 operands, accumulated in float32 (expr is matched exactly):
    'bmk,bnk->mn': D[m, n] = C[m, n] + sum over b, k of A[b, m, k] * B[b, n, k], with A, B and D
    contiguous. A float32 d accumulates: c is required, d itself (accumulate in place) or another
    float32 [m, n] tensor. A bf16 d is overwritten: c must be None. use_cublaslt must be False.
    'bhr,hdr->bhd': D[b, h, d] = sum over r of A[b, h, r] * B[h, d, r].
    'bhd,hdr->bhr': D[b, h, r] = sum over d of A[b, h, d] * B[h, d, r].
    In these two, A, B and D are bf16 with stride(-1) == 1 and free other strides (B may be a strided
    slice), c must be None, and use_cublaslt only selects the GPU backend (same result).
    """
    if _compiling():
        return _overload_einsum(expr, a, b, d, c, use_cublaslt)
    if use_cublaslt is not False:
        return _call_einsum(expr, a, b, d, c, use_cublaslt)
    if c is not None:
        return _call_einsum(expr, a, b, d, c)
    return _call_einsum(expr, a, b, d)
_export('einsum', ['einsum'])

_overload_fp8_einsum = _ops.fp8_einsum.default
_call_fp8_einsum = _overload_fp8_einsum._op

def fp8_einsum(expr, a, b, d, c=None, recipe=(1, 128, 128)):
    """Block-scaled FP8 e4m3 contractions with float32 scales; recipe is (gran_m_a, gran_n_b, gran_k).
    'bhr,hdr->bhd': D[b, h, d] = sum over r of (A * SFA)[b, h, r] * (B * SFB)[h, d, r], with
    A [b, h, r], SFA [b, h, ceil(r/gran_k)], B [h, d, r], SFB [h, ceil(d/gran_n), ceil(r/gran_k)].
    'bhd,hdr->bhr': D[b, h, r] = sum over d of (A * SFA)[b, h, d] * (B * SFB)[h, d, r], with
    A [b, h, d], SFA [b, h, ceil(d/gran_k)], B [h, d, r], SFB [h, ceil(d/gran_k), ceil(r/gran_n)].
    For both, recipe is (1, 128, 128) or (1, 1, 128), d is bf16 and c must be None.
    'bhd,bhr->hdr': D[h, d, r] = C + sum over b of (A * SFA)[b, h, d] * (B * SFB)[b, h, r], scales
    per channel over b: SFA [ceil(b/128), h, d], SFB [ceil(b/128), h, r]; recipe must be (1, 1, 128),
    d float32 [h, d, r], and c is required: d itself (accumulate in place) or another float32 tensor.
    FP8 data and d need stride(-1) == 1; their other strides are free (B may be a strided slice).
    """
    if (a.__class__ is not tuple and isinstance(a, _Tensor)) or (b.__class__ is not tuple and isinstance(b, _Tensor)):
        raise _pack_error("fp8_einsum", ("a", "b",), (a, b,))
    try:
        _a, sfa = a
        _b, sfb = b
    except (TypeError, ValueError):
        raise _pack_error("fp8_einsum", ("a", "b",), (a, b,)) from None
    if _compiling():
        return _overload_fp8_einsum(expr, _a, sfa, _b, sfb, d, c, recipe)
    if recipe != (1, 128, 128):
        return _call_fp8_einsum(expr, _a, sfa, _b, sfb, d, c, recipe)
    if c is not None:
        return _call_fp8_einsum(expr, _a, sfa, _b, sfb, d, c)
    return _call_fp8_einsum(expr, _a, sfa, _b, sfb, d)
_export('einsum', ['fp8_einsum'])


# ---- family 'attention': Attention-side GEMMs and the MQA "lightning indexer" logits.

_overload_fp8_gemm_nt_skip_head_mid = _ops.fp8_gemm_nt_skip_head_mid.default
_call_fp8_gemm_nt_skip_head_mid = _overload_fp8_gemm_nt_skip_head_mid._op

def fp8_gemm_nt_skip_head_mid(a, b, d, head_splits, recipe=None, compiled_dims="nk", disable_ue8m0_cast=False):
    """fp8_gemm_nt whose output skips the middle of every head. head_splits is (left, mid, right);
    B [N, K] holds H heads of left + right rows (N = H * (left + right)) and d is bf16, row-major
    [M, H * (left + mid + right)]. For each head h the product's columns [h*(left+right), +left)
    go to d's columns [h*(left+mid+right), +left) and the next right columns go after a gap of
    mid columns, which are left untouched. A and B are FP8 e4m3, K-major; the recipe (default
    (1, 128, 128) for float32 SFB, (1, 1, 128) for packed SFB) must have K granularity 128.
    """
    if (a.__class__ is not tuple and isinstance(a, _Tensor)) or (b.__class__ is not tuple and isinstance(b, _Tensor)):
        raise _pack_error("fp8_gemm_nt_skip_head_mid", ("a", "b",), (a, b,))
    try:
        _a, sfa = a
        _b, sfb = b
    except (TypeError, ValueError):
        raise _pack_error("fp8_gemm_nt_skip_head_mid", ("a", "b",), (a, b,)) from None
    if _compiling():
        return _overload_fp8_gemm_nt_skip_head_mid(_a, sfa, _b, sfb, d, head_splits, recipe, compiled_dims, disable_ue8m0_cast)
    if disable_ue8m0_cast is not False:
        return _call_fp8_gemm_nt_skip_head_mid(_a, sfa, _b, sfb, d, head_splits, recipe, compiled_dims, disable_ue8m0_cast)
    if compiled_dims != "nk":
        return _call_fp8_gemm_nt_skip_head_mid(_a, sfa, _b, sfb, d, head_splits, recipe, compiled_dims)
    if recipe is not None:
        return _call_fp8_gemm_nt_skip_head_mid(_a, sfa, _b, sfb, d, head_splits, recipe)
    return _call_fp8_gemm_nt_skip_head_mid(_a, sfa, _b, sfb, d, head_splits)
_export('attention', ['fp8_gemm_nt_skip_head_mid'])

_overload_fp8_fp4_mqa_logits = _ops.fp8_fp4_mqa_logits.default
_call_fp8_fp4_mqa_logits = _overload_fp8_fp4_mqa_logits._op

def fp8_fp4_mqa_logits(q, kv, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits=True, max_seqlen_k=0, logits_dtype=torch.float32):
    """The "lightning indexer" logits of a prefill: for query i and key j with ks[i] <= j < ke[i],
    logits[i, j] = sum_h weights[i, h] * relu(sum_d q[i, h, d] * kv[j, d]), on dequantized values.
    q is (FP8 e4m3 [S, H, D], None) or (FP4 int8 [S, H, D/2], packed UE8M0 int32 [S, H]); kv is
    (FP8 [Skv, D], float32 per-token scales [Skv]) or (FP4 [Skv, D/2], packed UE8M0 int32 [Skv]);
    FP4 scales have granularity 32 along D (byte g of a word scales elements [32g, 32g+32)).
    q and kv are both FP8 or both FP4; H is 8, 16, 32 or 64; D is 32, 64 or 128 (64 or 128 for
    FP4). weights is [S, H] float32 (bfloat16 only with bfloat16 logits) with stride(1) == 1;
    ks / ke (cu_seq_len_k_start / _end) are int32 [S]. logits_dtype is float32 or bfloat16.
    max_seqlen_k == 0: returns [S, Skv], a view of an [align(S, 128/H), align(Skv + 256, E)]
    allocation, E = 1024 bytes / element size, so the row stride is a multiple of 1024 bytes.
    max_seqlen_k > 0 (needs clean_logits=False): returns [S, max_seqlen_k] with column t holding
    key ks[i] + t, row stride align(align(max_seqlen_k, 256), E). Entries outside [ks, ke) are
    -inf, with or without clean_logits.
    """
    if (q.__class__ is not tuple and isinstance(q, _Tensor)) or (kv.__class__ is not tuple and isinstance(kv, _Tensor)):
        raise _pack_error("fp8_fp4_mqa_logits", ("q", "kv",), (q, kv,))
    try:
        _q, q_sf = q
        _kv, kv_sf = kv
    except (TypeError, ValueError):
        raise _pack_error("fp8_fp4_mqa_logits", ("q", "kv",), (q, kv,)) from None
    if _compiling():
        return _overload_fp8_fp4_mqa_logits(_q, q_sf, _kv, kv_sf, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits, max_seqlen_k, logits_dtype)
    if logits_dtype is not torch.float32:
        return _call_fp8_fp4_mqa_logits(_q, q_sf, _kv, kv_sf, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits, max_seqlen_k, logits_dtype)
    if max_seqlen_k.__class__ is not int or max_seqlen_k != 0:
        return _call_fp8_fp4_mqa_logits(_q, q_sf, _kv, kv_sf, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits, max_seqlen_k)
    if clean_logits is not True:
        return _call_fp8_fp4_mqa_logits(_q, q_sf, _kv, kv_sf, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits)
    return _call_fp8_fp4_mqa_logits(_q, q_sf, _kv, kv_sf, weights, cu_seq_len_k_start, cu_seq_len_k_end)
_export('attention', ['fp8_fp4_mqa_logits'])
_register_fake('deep_gemm::fp8_fp4_mqa_logits', 'deep_gemm._fakes.attention.fp8_fp4_mqa_logits')

_overload_fp8_mqa_logits = _ops.fp8_mqa_logits.default
_call_fp8_mqa_logits = _overload_fp8_mqa_logits._op

def fp8_mqa_logits(q, kv, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits=True, max_seqlen_k=0):
    """Legacy form of fp8_fp4_mqa_logits for a plain FP8 q [S, H, D] (no q scale) and float32 logits."""
    if (kv.__class__ is not tuple and isinstance(kv, _Tensor)):
        raise _pack_error("fp8_mqa_logits", ("kv",), (kv,))
    try:
        _kv, kv_sf = kv
    except (TypeError, ValueError):
        raise _pack_error("fp8_mqa_logits", ("kv",), (kv,)) from None
    if _compiling():
        return _overload_fp8_mqa_logits(q, _kv, kv_sf, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits, max_seqlen_k)
    if max_seqlen_k.__class__ is not int or max_seqlen_k != 0:
        return _call_fp8_mqa_logits(q, _kv, kv_sf, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits, max_seqlen_k)
    if clean_logits is not True:
        return _call_fp8_mqa_logits(q, _kv, kv_sf, weights, cu_seq_len_k_start, cu_seq_len_k_end, clean_logits)
    return _call_fp8_mqa_logits(q, _kv, kv_sf, weights, cu_seq_len_k_start, cu_seq_len_k_end)
_export('attention', ['fp8_mqa_logits'])
_register_fake('deep_gemm::fp8_mqa_logits', 'deep_gemm._fakes.attention.fp8_mqa_logits')

_overload_get_paged_mqa_logits_metadata = _ops.get_paged_mqa_logits_metadata.default
_call_get_paged_mqa_logits_metadata = _overload_get_paged_mqa_logits_metadata._op

def get_paged_mqa_logits_metadata(context_lens, block_kv, num_sms, indices=None):
    """The work schedule of fp8_fp4_paged_mqa_logits: int32 [num_sms + 1, 2] on context_lens' device.
    context_lens is int32 [B, next_n]; query group b (row b: its next_n queries share one KV
    sequence) needs n_b = ceil(max(0, max_t context_lens[b, t]) / block_kv) KV blocks. The
    T = sum_b n_b (b, block) items, in order b-major then block, are cut into num_sms contiguous
    runs; unit s starts at item p_s = s * (T // num_sms) + min(s, T % num_sms), so every unit gets
    T // num_sms or one more block. Row s is (b, k): item p_s is block k of group b, where b is
    the first group whose blocks end after p_s (empty groups are skipped); row num_sms is (B, 0).
    Unit s works from row s up to (not including) row s + 1. block_kv is 32 or 64 and
    num_sms >= 1. indices (int32 [B], the varlen form) requires next_n == 1 and does not change the
    schedule. Computed on the device with no host synchronisation: by one CUDA kernel on sm90
    GPUs, by tensor ops elsewhere.
    """
    if _compiling():
        return _overload_get_paged_mqa_logits_metadata(context_lens, block_kv, num_sms, indices)
    if indices is not None:
        return _call_get_paged_mqa_logits_metadata(context_lens, block_kv, num_sms, indices)
    return _call_get_paged_mqa_logits_metadata(context_lens, block_kv, num_sms)
_export('attention', ['get_paged_mqa_logits_metadata'])
_register_fake('deep_gemm::get_paged_mqa_logits_metadata', 'deep_gemm._fakes.attention.get_paged_mqa_logits_metadata')

_overload_fp8_fp4_paged_mqa_logits = _ops.fp8_fp4_paged_mqa_logits.default
_call_fp8_fp4_paged_mqa_logits = _overload_fp8_fp4_paged_mqa_logits._op

def fp8_fp4_paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len, clean_logits=False, logits_dtype=torch.float32, indices=None):
    """The indexer logits of a decode step over a paged KV cache. q is (FP8 [B, next_n, H, D], None)
    or (FP4 int8 [B, next_n, H, D/2], packed UE8M0 int32 [B, next_n, H]), H and D as for
    fp8_fp4_mqa_logits. kv_cache is uint8
    [num_blocks, block_kv, 1, D + 4] (FP8) or [num_blocks, block_kv, 1, D/2 + 4] (FP4) with
    stride(1) = size(3), stride(3) = 1 and stride(0) % 4 == 0; the stride(0) bytes of a block hold
    block_kv tokens' values (token-major) followed by block_kv 4-byte scales (float32 for FP8,
    packed UE8M0 int32 with granularity 32 along D for FP4). block_kv is 32 or 64. weights is
    [B * next_n, H] (float32; bfloat16 only with bfloat16 logits), context_lens int32 [B, next_n],
    block_table int32 [B, max_blocks] (stride(1) == 1) and schedule_meta the int32
    [get_num_sms() + 1, 2] result of get_paged_mqa_logits_metadata. With indices (int32 [B],
    next_n == 1) query b reads the sequence block_table[indices[b]]. Row r = b * next_n + t of the
    result, column j < context_lens[b, t], is sum_h weights[r, h] * relu(q[b, t, h] . kv_j), kv_j
    being token j % block_kv of block block_table[seq, j // block_kv]. Returns
    [B * next_n, max_context_len], a view with row stride align(align(max_context_len, 256), E),
    E = 1024 bytes / element size. Columns at or past the context length are -inf. A needed block-table entry outside [0, num_blocks), a column past
    max_blocks * block_kv, or an indices entry outside the table's rows gives NaN (never a fault).
    clean_logits=True is not supported (RuntimeError).
    """
    if (q.__class__ is not tuple and isinstance(q, _Tensor)):
        raise _pack_error("fp8_fp4_paged_mqa_logits", ("q",), (q,))
    try:
        _q, q_sf = q
    except (TypeError, ValueError):
        raise _pack_error("fp8_fp4_paged_mqa_logits", ("q",), (q,)) from None
    if _compiling():
        return _overload_fp8_fp4_paged_mqa_logits(_q, q_sf, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len, clean_logits, logits_dtype, indices)
    if indices is not None:
        return _call_fp8_fp4_paged_mqa_logits(_q, q_sf, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len, clean_logits, logits_dtype, indices)
    if logits_dtype is not torch.float32:
        return _call_fp8_fp4_paged_mqa_logits(_q, q_sf, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len, clean_logits, logits_dtype)
    if clean_logits is not False:
        return _call_fp8_fp4_paged_mqa_logits(_q, q_sf, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len, clean_logits)
    return _call_fp8_fp4_paged_mqa_logits(_q, q_sf, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len)
_export('attention', ['fp8_fp4_paged_mqa_logits'])
_register_fake('deep_gemm::fp8_fp4_paged_mqa_logits', 'deep_gemm._fakes.attention.fp8_fp4_paged_mqa_logits')

_overload_fp8_paged_mqa_logits = _ops.fp8_paged_mqa_logits.default
_call_fp8_paged_mqa_logits = _overload_fp8_paged_mqa_logits._op

def fp8_paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len, clean_logits=False, indices=None):
    """Legacy form of fp8_fp4_paged_mqa_logits for a plain FP8 q [B, next_n, H, D] and float32 logits."""
    if _compiling():
        return _overload_fp8_paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len, clean_logits, indices)
    if indices is not None:
        return _call_fp8_paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len, clean_logits, indices)
    if clean_logits is not False:
        return _call_fp8_paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len, clean_logits)
    return _call_fp8_paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len)
_export('attention', ['fp8_paged_mqa_logits'])
_register_fake('deep_gemm::fp8_paged_mqa_logits', 'deep_gemm._fakes.attention.fp8_paged_mqa_logits')


# ---- family 'hyperconnection': The TF32 pre-norm GEMM of hyper-connections.

_overload_tf32_hc_prenorm_gemm = _ops.tf32_hc_prenorm_gemm.default
_call_tf32_hc_prenorm_gemm = _overload_tf32_hc_prenorm_gemm._op

def tf32_hc_prenorm_gemm(a, b, d, sqr_sum, num_splits=None):
    """D = float32(A) B^T and sqr_sum[m] = sum over k of float32(A[m, k])^2, with A bf16 [M, K] and
    B float32 [N, K] (both stride(-1) == 1), N > 0 and K > 0; d and sqr_sum are contiguous float32.
    Without num_splits: d [M, N], sqr_sum [M]. With num_splits = S >= 1: split-K partials,
    d [S, M, N] and sqr_sum [S, M]; split s covers k in [s * c, min((s + 1) * c, K)) with
    c = ceil(K / S) (a split starting at or past K is empty and gives zeros), so summing over
    dim 0 gives the unsplit result. M == 0 is a no-op.
    """
    if _compiling():
        return _overload_tf32_hc_prenorm_gemm(a, b, d, sqr_sum, num_splits)
    if num_splits is not None:
        return _call_tf32_hc_prenorm_gemm(a, b, d, sqr_sum, num_splits)
    return _call_tf32_hc_prenorm_gemm(a, b, d, sqr_sum)
_export('hyperconnection', ['tf32_hc_prenorm_gemm'])


# ---- family 'mega': Mega MoE (fused expert-parallel dispatch, two GEMMs, activation and combine) and its symmetric buffer.

_overload_get_token_alignment_for_mega_moe = _ops.get_token_alignment_for_mega_moe.default
_call_get_token_alignment_for_mega_moe = _overload_get_token_alignment_for_mega_moe._op

def get_token_alignment_for_mega_moe():
    """The multiple every num_max_tokens_per_rank must be: 384, the LCM of the candidate BLOCK_M
    values {8, 16, 32, 64, 96, 128, 192}.
    """
    if _compiling():
        _graph_break()
        return _overload_get_token_alignment_for_mega_moe()
    return _call_get_token_alignment_for_mega_moe()

_overload_get_ring_limit_for_mega_moe = _ops.get_ring_limit_for_mega_moe.default
_call_get_ring_limit_for_mega_moe = _overload_get_ring_limit_for_mega_moe._op

def get_ring_limit_for_mega_moe(num_max_tokens_per_rank, num_experts_per_rank, num_topk, num_ranks, /):
    """(min, max) ring sizes in tokens for a configuration: min = tokens * ranks (one expert per wave),
    max = min(tokens * ranks * experts_per_rank, align(tokens * ranks * topk + experts_per_rank * 383, 384)).
    num_max_tokens_per_rank must be a multiple of 384. This build's SymmBuffer sizes its receive
    region for the worst case instead of a ring, so the limits only inform callers that size rings.
    """
    if _compiling():
        _graph_break()
        return _overload_get_ring_limit_for_mega_moe(num_max_tokens_per_rank, num_experts_per_rank, num_topk, num_ranks)
    return _call_get_ring_limit_for_mega_moe(num_max_tokens_per_rank, num_experts_per_rank, num_topk, num_ranks)

_overload_get_symm_buffer_size_for_mega_moe = _ops.get_symm_buffer_size_for_mega_moe.default
_call_get_symm_buffer_size_for_mega_moe = _overload_get_symm_buffer_size_for_mega_moe._op

def get_symm_buffer_size_for_mega_moe(num_ranks, num_experts, num_max_tokens_per_rank, num_topk, hidden, intermediate_hidden, mma_type, activation, num_shared_experts=0):
    """Size the symmetric buffer of one rank: returns (num_bytes, layout_info).
    layout_info is 23 ints: num_bytes; the byte offsets of x, x_sf, topk_idx, topk_weights,
    shared_l1_sf, shared_l2_token, shared_l2_sf, l1 token, l1 sf, l2 token, l2 sf; then mma kind
    (0 fp8xfp4, 1 bf16xbf16), with_sf, sf_gran_k, num_max_tokens_per_rank, num_topk, hidden,
    intermediate_hidden, num_shared_experts, shared_intermediate_hidden, num_ring_tokens,
    num_sf_ring_tokens. num_experts must be divisible by num_ranks, num_max_tokens_per_rank a
    positive multiple of 384, 1 <= num_topk <= num_experts, mma_type 'fp8xfp4' (then hidden and
    intermediate_hidden are multiples of 128) or 'bf16xbf16' (intermediate_hidden a multiple of 8),
    activation 'swiglu'. deep_gemm.mega._slice_symm_buffer_for_mega_moe(buffer, layout_info) cuts
    the buffer into its views; deep_gemm.mega.SymmBuffer does it for you.
    """
    if _compiling():
        _graph_break()
        return _overload_get_symm_buffer_size_for_mega_moe(num_ranks, num_experts, num_max_tokens_per_rank, num_topk, hidden, intermediate_hidden, mma_type, activation, num_shared_experts)
    if num_shared_experts.__class__ is not int or num_shared_experts != 0:
        return _call_get_symm_buffer_size_for_mega_moe(num_ranks, num_experts, num_max_tokens_per_rank, num_topk, hidden, intermediate_hidden, mma_type, activation, num_shared_experts)
    return _call_get_symm_buffer_size_for_mega_moe(num_ranks, num_experts, num_max_tokens_per_rank, num_topk, hidden, intermediate_hidden, mma_type, activation)

_overload__get_symm_buffer_views_for_mega_moe = _ops._get_symm_buffer_views_for_mega_moe.default
_call__get_symm_buffer_views_for_mega_moe = _overload__get_symm_buffer_views_for_mega_moe._op

def _get_symm_buffer_views_for_mega_moe(mma_type, num_max_tokens_per_rank, num_topk, hidden, intermediate_hidden, num_shared_experts, num_ring_tokens):
    """Describe every region of the symmetric buffer whose layout_info carries this configuration
    (its fields 12..22): num_bytes, then 16 regions of 10 ints each (byte offset, bytes reserved,
    element type 0 none / 1 float8_e4m3fn / 2 bfloat16 / 3 int32 / 4 int64 / 5 float32, ndim,
    3 sizes, 3 strides in elements), in buffer order: workspace, x, x_sf, topk_idx, topk_weights,
    shared_l1_sf, shared_l2_token, shared_l2_sf, l1_token, l1_sf, l2_token, l2_sf, recv_info,
    recv_weights, l2_out, combine. deep_gemm.mega cuts the views from this description with torch
    view ops (docs/omissions.md says why no op returns the views).
    """
    if _compiling():
        _graph_break()
        return _overload__get_symm_buffer_views_for_mega_moe(mma_type, num_max_tokens_per_rank, num_topk, hidden, intermediate_hidden, num_shared_experts, num_ring_tokens)
    return _call__get_symm_buffer_views_for_mega_moe(mma_type, num_max_tokens_per_rank, num_topk, hidden, intermediate_hidden, num_shared_experts, num_ring_tokens)

_overload__get_workspace_words_for_mega_moe = _ops._get_workspace_words_for_mega_moe.default
_call__get_workspace_words_for_mega_moe = _overload__get_workspace_words_for_mega_moe._op

def _get_workspace_words_for_mega_moe():
    """(recv_rows, stop): the indices of two int64 words in the workspace, the buffer's first region.
    recv_rows holds the rows this rank received in the last call. stop is 0 while every rank
    proceeds; a rank whose call failed writes 1 + its rank there in every rank's buffer, which
    ends every wait at the fused op's barrier.
    """
    if _compiling():
        _graph_break()
        return _overload__get_workspace_words_for_mega_moe()
    return _call__get_workspace_words_for_mega_moe()

_overload_fp8_fp4_mega_moe = _ops.fp8_fp4_mega_moe.default
_call_fp8_fp4_mega_moe = _overload_fp8_fp4_mega_moe._op

def fp8_fp4_mega_moe(y, l1_weights, l2_weights, shared_l1_weights, shared_l1_weights_sf, shared_l2_weights, shared_l2_weights_sf, cumulative_local_expert_recv_stats, sym_buffer, sym_buffer_ptrs, rank_idx, num_max_tokens_per_rank, num_experts, num_topk, recipe, activation, activation_clamp, fast_math, situ_beta=None, situ_linear_beta=None):
    """Mega MoE with FP8 tokens and FP4 experts, one rank's part (call it through
    deep_gemm.mega.fp8_fp4_mega_moe). The caller stages x [T, H] FP8 e4m3, x_sf [T, H/128] packed
    UE8M0 (gran 32), topk_idx [T, K] int64 (-1 = unused slot, distinct experts per token) and
    topk_weights [T, K] float32 in sym_buffer, T = y.size(0) <= num_max_tokens_per_rank. Weights of
    the E/R local experts, after transform_weights_for_mega_moe: l1 [E_l, 2I, H/2] FP4 + sf
    [E_l, 2I, H/128], l2 [E_l, H, I/2] + sf [E_l, H, I/128]; recipe (1, 1, 32), activation 'swiglu',
    activation_clamp >= 0 or None. Each used slot's token runs L1, SwiGLU (up clamped to [-c, c],
    gate to <= c, times its top-k weight), FP8 requantisation with per-32 UE8M0 scales, and L2;
    y (bf16) gets the sum over the token's slots, and cumulative_local_expert_recv_stats (int32
    [E_l]) the rows each local expert received. sym_buffer_ptrs has one entry per rank. With one
    rank the op does everything. With more on CUDA symmetric memory, sym_buffer_ptrs holds every
    rank's mapped buffer address (entry rank_idx is sym_buffer's own) and the op does everything
    too: it writes rows into the peers' buffers and synchronises through a device barrier in the
    buffer's workspace (not CUDA-graph capturable; every rank must make the call). With zeros
    (gloo, or no symmetric memory) a TORCH_LIBRARY op cannot run collectives: the op runs only
    the local experts, on the rows the caller dispatched into sym_buffer's receive region, and
    leaves y alone; the deep_gemm.mega wrapper does dispatch and combine with the process group.
    Shared experts and the 'situ' activation are not supported.
    """
    if (l1_weights.__class__ is not tuple and isinstance(l1_weights, _Tensor)) or (l2_weights.__class__ is not tuple and isinstance(l2_weights, _Tensor)):
        raise _pack_error("fp8_fp4_mega_moe", ("l1_weights", "l2_weights",), (l1_weights, l2_weights,))
    try:
        _l1_weights, l1_weights_sf = l1_weights
        _l2_weights, l2_weights_sf = l2_weights
    except (TypeError, ValueError):
        raise _pack_error("fp8_fp4_mega_moe", ("l1_weights", "l2_weights",), (l1_weights, l2_weights,)) from None
    if _compiling():
        return _overload_fp8_fp4_mega_moe(y, _l1_weights, l1_weights_sf, _l2_weights, l2_weights_sf, shared_l1_weights, shared_l1_weights_sf, shared_l2_weights, shared_l2_weights_sf, cumulative_local_expert_recv_stats, sym_buffer, sym_buffer_ptrs, rank_idx, num_max_tokens_per_rank, num_experts, num_topk, recipe, activation, activation_clamp, fast_math, situ_beta, situ_linear_beta)
    if situ_linear_beta is not None:
        return _call_fp8_fp4_mega_moe(y, _l1_weights, l1_weights_sf, _l2_weights, l2_weights_sf, shared_l1_weights, shared_l1_weights_sf, shared_l2_weights, shared_l2_weights_sf, cumulative_local_expert_recv_stats, sym_buffer, sym_buffer_ptrs, rank_idx, num_max_tokens_per_rank, num_experts, num_topk, recipe, activation, activation_clamp, fast_math, situ_beta, situ_linear_beta)
    if situ_beta is not None:
        return _call_fp8_fp4_mega_moe(y, _l1_weights, l1_weights_sf, _l2_weights, l2_weights_sf, shared_l1_weights, shared_l1_weights_sf, shared_l2_weights, shared_l2_weights_sf, cumulative_local_expert_recv_stats, sym_buffer, sym_buffer_ptrs, rank_idx, num_max_tokens_per_rank, num_experts, num_topk, recipe, activation, activation_clamp, fast_math, situ_beta)
    return _call_fp8_fp4_mega_moe(y, _l1_weights, l1_weights_sf, _l2_weights, l2_weights_sf, shared_l1_weights, shared_l1_weights_sf, shared_l2_weights, shared_l2_weights_sf, cumulative_local_expert_recv_stats, sym_buffer, sym_buffer_ptrs, rank_idx, num_max_tokens_per_rank, num_experts, num_topk, recipe, activation, activation_clamp, fast_math)

_overload_bf16_mega_moe = _ops.bf16_mega_moe.default
_call_bf16_mega_moe = _overload_bf16_mega_moe._op

def bf16_mega_moe(y, l1_weights, l2_weights, shared_l1_weights, shared_l2_weights, cumulative_local_expert_recv_stats, sym_buffer, sym_buffer_ptrs, rank_idx, num_max_tokens_per_rank, num_experts, num_topk, activation, activation_clamp, fast_math):
    """fp8_fp4_mega_moe with bf16 tokens and weights (l1 [E_l, 2I, H] gate/up interleaved, l2
    [E_l, H, I]); the SwiGLU output is rounded to bf16 instead of requantised.
    """
    if _compiling():
        return _overload_bf16_mega_moe(y, l1_weights, l2_weights, shared_l1_weights, shared_l2_weights, cumulative_local_expert_recv_stats, sym_buffer, sym_buffer_ptrs, rank_idx, num_max_tokens_per_rank, num_experts, num_topk, activation, activation_clamp, fast_math)
    return _call_bf16_mega_moe(y, l1_weights, l2_weights, shared_l1_weights, shared_l2_weights, cumulative_local_expert_recv_stats, sym_buffer, sym_buffer_ptrs, rank_idx, num_max_tokens_per_rank, num_experts, num_topk, activation, activation_clamp, fast_math)

_overload__sum_combined_for_mega_moe = _ops._sum_combined_for_mega_moe.default
_call__sum_combined_for_mega_moe = _overload__sum_combined_for_mega_moe._op

def _sum_combined_for_mega_moe(y, combine, topk_idx):
    """The last step of a multi-rank Mega MoE call: y[t] = sum over the slots k with
    topk_idx[t, k] >= 0, in slot order, of combine[k, t] (float32 from zero, rounded once to
    bf16). combine is the buffer's [K, T_max, H] bf16 region, topk_idx its staged [T_max, K];
    the one-rank path of the fused ops ends with the same summation.
    """
    if _compiling():
        return _overload__sum_combined_for_mega_moe(y, combine, topk_idx)
    return _call__sum_combined_for_mega_moe(y, combine, topk_idx)
