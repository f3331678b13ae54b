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

load_extension()

_ops = torch.ops.deep_gemm
_Tensor = torch.Tensor
# Dynamo folds this to True; eager calls go straight to the op (Note [Shim call path] in codegen/spelling/python.py).
_compiling = getattr(torch.compiler, "is_dynamo_compiling", torch.compiler.is_compiling)

__all__: list[str] = []
FAMILIES: dict[str, list[str]] = {}


def _export(family: str, names: list[str]) -> None:
    FAMILIES.setdefault(family, []).extend(names)
    __all__.extend(names)


def _present(names: list[str]) -> None:
    """Names kept on ``deep_gemm._C`` only (not re-exported by ``deep_gemm``)."""




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
_present(['init'])


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
_register_fake('transform_sf_into_required_layout', 'deep_gemm._fakes.transform_sf_into_required_layout')

_overload_get_tma_aligned_size = _ops.get_tma_aligned_size.default
_call_get_tma_aligned_size = _overload_get_tma_aligned_size._op

def get_tma_aligned_size(x, element_size, /):
    """x rounded up so that x * element_size is a multiple of 16 bytes."""
    if _compiling():
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
_register_fake('get_mn_major_tma_aligned_tensor', 'deep_gemm._fakes.get_mn_major_tma_aligned_tensor')

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
_register_fake('get_mn_major_tma_aligned_packed_ue8m0_tensor', 'deep_gemm._fakes.get_mn_major_tma_aligned_packed_ue8m0_tensor')

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
_register_fake('get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor', 'deep_gemm._fakes.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor')

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
        a, sfa = a
        b, sfb = b
    except (TypeError, ValueError):
        raise _pack_error("fp8_fp4_gemm_nt", ("a", "b",), (a, b,)) from None
    if _compiling():
        return _overload_fp8_fp4_gemm_nt(a, sfa, b, sfb, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    if disable_ue8m0_cast is not False:
        return _call_fp8_fp4_gemm_nt(a, sfa, b, sfb, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    if compiled_dims != "nk":
        return _call_fp8_fp4_gemm_nt(a, sfa, b, sfb, d, c, recipe, recipe_a, recipe_b, compiled_dims)
    if recipe_b is not None:
        return _call_fp8_fp4_gemm_nt(a, sfa, b, sfb, d, c, recipe, recipe_a, recipe_b)
    if recipe_a is not None:
        return _call_fp8_fp4_gemm_nt(a, sfa, b, sfb, d, c, recipe, recipe_a)
    if recipe is not None:
        return _call_fp8_fp4_gemm_nt(a, sfa, b, sfb, d, c, recipe)
    if c is not None:
        return _call_fp8_fp4_gemm_nt(a, sfa, b, sfb, d, c)
    return _call_fp8_fp4_gemm_nt(a, sfa, b, sfb, d)
fp8_gemm_nt = fp8_fp4_gemm_nt
_export('gemm', ['fp8_fp4_gemm_nt', 'fp8_gemm_nt'])

_overload_fp8_fp4_gemm_nn = _ops.fp8_fp4_gemm_nn.default
_call_fp8_fp4_gemm_nn = _overload_fp8_fp4_gemm_nn._op

def fp8_fp4_gemm_nn(a, b, d, c=None, recipe=None, recipe_a=None, recipe_b=None, compiled_dims="nk", disable_ue8m0_cast=False):
    """fp8_fp4_gemm_nt with B given as [K, N] and SFB transposed with it."""
    if (a.__class__ is not tuple and isinstance(a, _Tensor)) or (b.__class__ is not tuple and isinstance(b, _Tensor)):
        raise _pack_error("fp8_fp4_gemm_nn", ("a", "b",), (a, b,))
    try:
        a, sfa = a
        b, sfb = b
    except (TypeError, ValueError):
        raise _pack_error("fp8_fp4_gemm_nn", ("a", "b",), (a, b,)) from None
    if _compiling():
        return _overload_fp8_fp4_gemm_nn(a, sfa, b, sfb, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    if disable_ue8m0_cast is not False:
        return _call_fp8_fp4_gemm_nn(a, sfa, b, sfb, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    if compiled_dims != "nk":
        return _call_fp8_fp4_gemm_nn(a, sfa, b, sfb, d, c, recipe, recipe_a, recipe_b, compiled_dims)
    if recipe_b is not None:
        return _call_fp8_fp4_gemm_nn(a, sfa, b, sfb, d, c, recipe, recipe_a, recipe_b)
    if recipe_a is not None:
        return _call_fp8_fp4_gemm_nn(a, sfa, b, sfb, d, c, recipe, recipe_a)
    if recipe is not None:
        return _call_fp8_fp4_gemm_nn(a, sfa, b, sfb, d, c, recipe)
    if c is not None:
        return _call_fp8_fp4_gemm_nn(a, sfa, b, sfb, d, c)
    return _call_fp8_fp4_gemm_nn(a, sfa, b, sfb, d)
fp8_gemm_nn = fp8_fp4_gemm_nn
_export('gemm', ['fp8_fp4_gemm_nn', 'fp8_gemm_nn'])

_overload_fp8_fp4_gemm_tn = _ops.fp8_fp4_gemm_tn.default
_call_fp8_fp4_gemm_tn = _overload_fp8_fp4_gemm_tn._op

def fp8_fp4_gemm_tn(a, b, d, c=None, recipe=None, recipe_a=None, recipe_b=None, compiled_dims="mn", disable_ue8m0_cast=False):
    """fp8_fp4_gemm_nt with A given as [K, M] and B as [K, N], each scale tensor transposed with its data."""
    if (a.__class__ is not tuple and isinstance(a, _Tensor)) or (b.__class__ is not tuple and isinstance(b, _Tensor)):
        raise _pack_error("fp8_fp4_gemm_tn", ("a", "b",), (a, b,))
    try:
        a, sfa = a
        b, sfb = b
    except (TypeError, ValueError):
        raise _pack_error("fp8_fp4_gemm_tn", ("a", "b",), (a, b,)) from None
    if _compiling():
        return _overload_fp8_fp4_gemm_tn(a, sfa, b, sfb, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    if disable_ue8m0_cast is not False:
        return _call_fp8_fp4_gemm_tn(a, sfa, b, sfb, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    if compiled_dims != "mn":
        return _call_fp8_fp4_gemm_tn(a, sfa, b, sfb, d, c, recipe, recipe_a, recipe_b, compiled_dims)
    if recipe_b is not None:
        return _call_fp8_fp4_gemm_tn(a, sfa, b, sfb, d, c, recipe, recipe_a, recipe_b)
    if recipe_a is not None:
        return _call_fp8_fp4_gemm_tn(a, sfa, b, sfb, d, c, recipe, recipe_a)
    if recipe is not None:
        return _call_fp8_fp4_gemm_tn(a, sfa, b, sfb, d, c, recipe)
    if c is not None:
        return _call_fp8_fp4_gemm_tn(a, sfa, b, sfb, d, c)
    return _call_fp8_fp4_gemm_tn(a, sfa, b, sfb, d)
fp8_gemm_tn = fp8_fp4_gemm_tn
_export('gemm', ['fp8_fp4_gemm_tn', 'fp8_gemm_tn'])

_overload_fp8_fp4_gemm_tt = _ops.fp8_fp4_gemm_tt.default
_call_fp8_fp4_gemm_tt = _overload_fp8_fp4_gemm_tt._op

def fp8_fp4_gemm_tt(a, b, d, c=None, recipe=None, recipe_a=None, recipe_b=None, compiled_dims="mn", disable_ue8m0_cast=False):
    """fp8_fp4_gemm_nt with A given as [K, M] (SFA transposed with it) and B as [N, K]."""
    if (a.__class__ is not tuple and isinstance(a, _Tensor)) or (b.__class__ is not tuple and isinstance(b, _Tensor)):
        raise _pack_error("fp8_fp4_gemm_tt", ("a", "b",), (a, b,))
    try:
        a, sfa = a
        b, sfb = b
    except (TypeError, ValueError):
        raise _pack_error("fp8_fp4_gemm_tt", ("a", "b",), (a, b,)) from None
    if _compiling():
        return _overload_fp8_fp4_gemm_tt(a, sfa, b, sfb, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    if disable_ue8m0_cast is not False:
        return _call_fp8_fp4_gemm_tt(a, sfa, b, sfb, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    if compiled_dims != "mn":
        return _call_fp8_fp4_gemm_tt(a, sfa, b, sfb, d, c, recipe, recipe_a, recipe_b, compiled_dims)
    if recipe_b is not None:
        return _call_fp8_fp4_gemm_tt(a, sfa, b, sfb, d, c, recipe, recipe_a, recipe_b)
    if recipe_a is not None:
        return _call_fp8_fp4_gemm_tt(a, sfa, b, sfb, d, c, recipe, recipe_a)
    if recipe is not None:
        return _call_fp8_fp4_gemm_tt(a, sfa, b, sfb, d, c, recipe)
    if c is not None:
        return _call_fp8_fp4_gemm_tt(a, sfa, b, sfb, d, c)
    return _call_fp8_fp4_gemm_tt(a, sfa, b, sfb, d)
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


# ---- family 'einsum': Batched contractions written as einsum expressions (BF16 and block-scaled FP8).


# ---- family 'attention': Attention-side GEMMs and the MQA "lightning indexer" logits.


# ---- family 'hyperconnection': The TF32 pre-norm GEMM of hyper-connections.


# ---- family 'mega': Mega MoE (fused expert-parallel dispatch, two GEMMs, activation and combine) and its symmetric buffer.
