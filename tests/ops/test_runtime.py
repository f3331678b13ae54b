"""Runtime settings: every value is validated and reads back."""

from __future__ import annotations

import pytest
import torch

import deep_gemm
from deep_gemm import _C


@pytest.fixture(autouse=True)
def restore():
    saved = (_C.get_tc_util(), _C.get_pdl(), _C.get_ignore_compile_dims(), _C.get_block_size_multiple_of())
    yield
    _C.set_num_sms(0)
    _C.set_tc_util(0 if saved[0] == 100 else saved[0])
    _C.set_pdl(saved[1])
    _C.set_ignore_compile_dims(saved[2])
    _C.set_block_size_multiple_of(tuple(saved[3]))


def test_num_sms_defaults_to_the_device() -> None:
    # Without a GPU this is the number of CPU threads ATen uses (see the op's doc).
    expected = (
        torch.cuda.get_device_properties(0).multi_processor_count
        if torch.cuda.is_available()
        else torch.get_num_threads()
    )
    assert deep_gemm.get_num_sms() == expected
    deep_gemm.set_num_sms(1)
    assert deep_gemm.get_num_sms() == 1
    deep_gemm.set_num_sms(0)
    assert deep_gemm.get_num_sms() == expected


@pytest.mark.parametrize("bad", [-1, 10**6])
def test_num_sms_validated(bad: int) -> None:
    deep_gemm.set_num_sms(1)
    with pytest.raises(ValueError, match="^set_num_sms: argument 'new_num_sms' must be between 0 and"):
        deep_gemm.set_num_sms(bad)
    assert deep_gemm.get_num_sms() == 1  # a rejected value changes nothing
    with pytest.raises(ValueError, match="does not fit a 32-bit int"):
        deep_gemm.set_num_sms(2**40)


def test_tc_util() -> None:
    assert _C.get_tc_util() == 100
    _C.set_tc_util(37)
    assert _C.get_tc_util() == 37
    for bad in (-1, 101):
        with pytest.raises(
            ValueError, match="^set_tc_util: argument 'new_tc_util' must be a percentage in \\[0, 100\\]"
        ):
            _C.set_tc_util(bad)
    assert _C.get_tc_util() == 37


def test_flags_read_back() -> None:
    for value in (True, False, True):
        _C.set_pdl(value)
        assert _C.get_pdl() is value
        _C.set_ignore_compile_dims(value)
        assert _C.get_ignore_compile_dims() is value


def test_block_size_multiple_of() -> None:
    _C.set_block_size_multiple_of((16, 32))
    assert _C.get_block_size_multiple_of() == [16, 32]
    with pytest.raises(ValueError, match="entries must be block sizes in \\[1, 256\\], got 512"):
        torch.ops.deep_gemm.set_block_size_multiple_of([512])
    with pytest.raises(ValueError, match="must hold 1 or 2 block sizes, got 3"):
        torch.ops.deep_gemm.set_block_size_multiple_of([1, 2, 3])
    assert _C.get_block_size_multiple_of() == [16, 32]


def test_init_validates_the_package_path(tmp_path) -> None:
    _C.init(str(tmp_path), "")
    with pytest.raises(ValueError, match="^init: argument 'library_root_path' must be an existing directory"):
        _C.init(str(tmp_path / "missing"), "")
    assert not hasattr(deep_gemm, "init")  # reachable as deep_gemm._C.init only, as upstream
