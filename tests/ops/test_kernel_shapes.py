"""The compiled GEMM shapes the GPU tests and benchmarks force in turn are read from
csrc/cuda/gemm_launch.cuh; if that read broke, they would silently force nothing."""

from __future__ import annotations

from tests.support.kernels import GEMM_HEADER, compiled_gemm_shapes, layout_codes, printed_layout


def test_every_kernel_family_has_compiled_shapes() -> None:
    shapes = compiled_gemm_shapes()
    fp8_block = [s for s in shapes if not s.bf16 and not s.sfb_per_row]
    fp8_row = [s for s in shapes if not s.bf16 and s.sfb_per_row]
    bf16 = [s for s in shapes if s.bf16]
    assert len(fp8_block) >= 10 and len(fp8_row) >= 3 and len(bf16) >= 4
    assert {s.block_m for s in shapes} == {64, 128, 256}
    # 256-row tiles are FP8 with block SFB (two waves share a scratch accumulator; dense only).
    assert all(not s.bf16 and not s.sfb_per_row for s in shapes if s.block_m == 256)
    assert all(s.block_n % 8 == 0 and 16 <= s.block_n <= 256 for s in shapes)
    assert not any(s.bf16 and s.sfb_per_row for s in shapes)  # BF16 has no scales
    assert len({(s.config, s.sfb_per_row, s.bf16, s.majors) for s in shapes}) == len(shapes)
    # MN-major operands are BF16 (B alone for the einsum, both for the K-grouped TN GEMM), in
    # whole 64-wide slices.
    mn = [s for s in shapes if s.majors]
    assert {s.majors for s in mn} == {2, 3}
    assert all(s.bf16 and s.block_m % 64 == 0 and s.block_n % 64 == 0 for s in mn)
    # Split-K shapes (a cluster per tile) are dense FP8 with block SFB, or dense BF16 with K-major
    # operands, one wave of 64 or 128 rows; both families have some.
    split = [s for s in shapes if s.split > 1]
    assert {s.split for s in split} == {2}
    assert all(not s.sfb_per_row and s.majors == 0 and s.block_m in (64, 128) for s in split)
    assert {s.bf16 for s in split} == {False, True}
    assert all(s.config.endswith(f"s{s.split}") for s in split)
    # Multicast pairs (two CTAs on neighbouring tiles sharing A or B) are dense BF16 with K-major
    # operands, both kinds present, spelled BMxBNma / BMxBNmb (and printed so by DG_PRINT_CONFIGS).
    cast = [s for s in shapes if s.cast]
    assert {s.cast for s in cast} == {1, 2}
    assert all(s.bf16 and s.majors == 0 and s.split == 1 and not s.sfb_per_row for s in cast)
    assert all(s.config.endswith("ma" if s.cast == 1 else "mb") for s in cast)
    assert all(s.printed == f"-> {s.config} split=1 " for s in cast)
    assert all(s.printed == f"-> {s.block_m}x{s.block_n} split={s.split} " for s in shapes if not s.cast)


def test_printed_layouts_match_the_enum_and_the_print() -> None:
    """The GPU tests tell which problem a call ran by its printed layout code (the one-K-group
    route turns a dense problem into a K-grouped one); the codes come from GemmLayout, and gemm.cu
    prints them in the spelling printed_layout returns."""
    codes = layout_codes()
    assert sorted(codes.values()) == list(range(len(codes)))  # distinct, 0 to n - 1
    assert {"kDense", "kKGrouped"} <= codes.keys()  # the two the GPU tests look for
    assert printed_layout("kDense") == "layout=0 "
    source = GEMM_HEADER.with_name("gemm.cu").read_text()
    assert '"sm90 gemm layout=%d ' in source and "static_cast<int>(p.layout)" in source
