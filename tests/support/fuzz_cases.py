"""Hostile calls for every op, derived from its schema (the generator of tests/ops/test_fuzz.py).

A case is named by ``(op, index)`` and built deterministically from it
(``random.Random(f"{op}:{index}")``): pick one of the op's registered samples
as the seed (so everything else in the call stays valid), then mutate one to
three of its arguments by their schema type:

* ``Tensor``: another dtype; another shape (a dim more or less, one size
  changed, 0-dim, empty, six dims); the meta device; non-contiguous, transposed,
  column-major, misaligned, expanded (stride 0) or sparse; hostile values (-1,
  INT_MAX, NaN, inf); an alias of another argument; requires_grad; None, an
  int, a string or a list instead of a tensor.  ``Tensor?`` that was None gets
  a tensor.
* ``int`` / ``int?``: 0, -1, +-2^31 and neighbours, 2^63 - 1, values past
  int64, the seed's value +-1; a float, a string, a bool, a list, None.
* ``int[]`` / ``int[N]``: wrong lengths, hostile entries, 1000 entries, a bare
  int, strings or None inside, None.
* ``float``: NaN, +-inf, -0.0, +-1e308, denormals; ``bool``: None, 2, "yes";
  ``str``: empty, repeated or unknown letters, NUL bytes, non-ASCII, a lone
  surrogate, 100 000 characters, bytes; ``ScalarType``: every dtype, a string.
* the call itself: a missing argument, an extra one, an unknown keyword.

A quarter of the cases go through the legacy ``deep_gemm._C`` shim, which adds
pack mutations (a bare tensor or a 1- or 3-tuple where a ``(tensor, scale)``
pair belongs).

A case whose mutations all keep the logical values (non-contiguous,
column-major or misaligned storage, requires_grad) is *layout-only*: if the op
accepts it, its result must match the seed's.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from codegen.spelling.python import params
from tests.support.manifest import OPS
from tests.support.samples import Sample, clone_args

DTYPES = (
    torch.float32,
    torch.float64,
    torch.float16,
    torch.bfloat16,
    torch.int8,
    torch.uint8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.bool,
    torch.float8_e4m3fn,
    torch.float8_e5m2,
    torch.complex64,
)
INTS = (-1, 0, 1, 2, 3, 4, 7, 31, 32, 33, 127, 128, 129, 1024, 65537, -(2**31), 2**31 - 1, 2**31, -(2**31) - 1)
BIG_INTS = (2**32 + 1, 2**62, 2**63 - 1, -(2**63), 2**63, -(2**63) - 1, 2**100)
FLOATS = (math.nan, math.inf, -math.inf, -0.0, 0.0, 1e308, -1e308, 5e-324, 1.5, -3.0)
STRINGS = ("", "m", "n", "k", "mn", "nk", "mk", "mnk", "kmn", "mm", "nkk", "mnkm", "MNK", "xyz", " nk", "n,k",
           "\x00", "nk\x00m", "日本", "\ud800", "m" * 100_000)  # fmt: skip
WRONG_TYPES: tuple[Any, ...] = (None, "x", 1.5, [1], (1, 2), {"a": 1}, b"nk")

Mutation = tuple[Any, str, bool]  # (new value, label, keeps the logical values)


@dataclass
class Case:
    op: str
    index: int
    entry: str  # "schema" | "legacy"
    seed: Sample
    labels: list[str]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    layout_only: bool
    written: list[Any] = field(default_factory=list)  # the values passed for the '!' arguments

    def describe(self) -> str:
        return f"{self.op}#{self.index} [{self.entry}] seed={self.seed.name}: " + "; ".join(self.labels)


def _rand(shape: tuple[int, ...], dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    if dtype.is_floating_point or dtype.is_complex:
        return (torch.randn(shape, generator=gen) * 4).to(dtype)
    info = torch.iinfo(dtype)
    return torch.randint(max(info.min, -1000), min(info.max, 1000), shape, generator=gen, dtype=torch.int64).to(dtype)


def _to_dtype(t: torch.Tensor, dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    try:
        return t.to(dtype)
    except (RuntimeError, TypeError):
        return _rand(tuple(t.shape), dtype, gen)


def _same_values_strided(t: torch.Tensor) -> torch.Tensor:
    """The same values in a non-contiguous view (every other element of a buffer twice as wide)."""
    wide = torch.zeros((*t.shape[:-1], 2 * t.shape[-1]), dtype=t.dtype)
    view = wide[..., ::2]
    view.copy_(t)
    return view


def _same_values_offset(t: torch.Tensor) -> torch.Tensor:
    """The same values at storage offset 3 (a misaligned data pointer)."""
    buf = torch.zeros(t.numel() + 3, dtype=t.dtype)
    view = buf[3:].view(t.shape)
    view.copy_(t)
    return view


def _tensor_mutations(t: torch.Tensor, others: list[torch.Tensor], rng: random.Random, gen: torch.Generator):
    shape = tuple(t.shape)
    muts: list[Callable[[], Mutation]] = []
    for dtype in DTYPES:
        if dtype != t.dtype:
            muts.append(lambda dtype=dtype: (_to_dtype(t, dtype, gen), f"dtype {dtype}", False))
    muts.append(lambda: (t.unsqueeze(0), f"shape {shape} -> extra leading dim", False))
    if t.dim() != 1:
        muts.append(lambda: (t.reshape(-1), f"shape {shape} -> flattened", False))
    muts.append(lambda: (_rand((), t.dtype, gen), "0-dim", False))
    if t.dim() < 6:
        muts.append(lambda: (t.reshape((1,) * (6 - t.dim()) + shape), "six dims", False))
    if t.dim() >= 1:

        def resized() -> Mutation:
            d = rng.randrange(t.dim())
            new = list(shape)
            new[d] = rng.choice([0, 1, max(shape[d] - 1, 0), shape[d] + 1, 2 * shape[d] + 1, shape[d] + 128, 4096])
            return _rand(tuple(new), t.dtype, gen), f"shape {shape} -> {tuple(new)}", False

        muts += [resized, resized, resized]
        muts.append(lambda: (t.narrow(0, 0, 1).expand(shape), "expanded (stride 0)", False))
        muts.append(lambda: (t.as_strided(shape, (0,) * t.dim()), "every element aliased (stride 0)", False))
        if t.numel() > 0:
            muts.append(lambda: (_same_values_strided(t), "non-contiguous, same values", True))
            muts.append(lambda: (_same_values_offset(t), "storage offset 3, same values", True))
        muts.append(lambda: (t.to_sparse(), "sparse", False))
    if t.dim() >= 2:
        muts.append(lambda: (t.mT, "transposed view", False))
        muts.append(lambda: (t.mT.contiguous().mT, "column-major, same values", True))
    muts.append(lambda: (torch.empty_strided(shape, t.stride(), dtype=t.dtype, device="meta"), "meta device", False))
    if t.dtype.is_floating_point:
        muts.append(lambda: (t.detach().clone().requires_grad_(True), "requires_grad", True))
        for value in (math.nan, math.inf, -math.inf):
            muts.append(lambda value=value: (torch.full(shape, value).to(t.dtype), f"all {value}", False))
    elif t.dtype != torch.bool and not t.dtype.is_complex:
        info = torch.iinfo(t.dtype)
        for value in (-1, info.max, info.min, 0):
            muts.append(lambda value=value: (torch.full_like(t, value), f"all {value}", False))
        muts.append(lambda: (_rand(shape, t.dtype, gen) * 1000, "random large values", False))
    if others:
        muts.append(lambda: (rng.choice(others), "alias of another argument", False))
    for wrong in (None, 3, "tensor", [t]):
        muts.append(lambda wrong=wrong: (wrong, f"{type(wrong).__name__} instead of a tensor", False))
    return muts


def _value_mutations(arg: Any, value: Any, tensors: list[torch.Tensor], rng: random.Random, gen: torch.Generator):
    ty = arg.type
    muts: list[Callable[[], Mutation]] = []
    if ty.base == "Tensor":
        if isinstance(value, torch.Tensor):
            return _tensor_mutations(value, [o for o in tensors if o is not value], rng, gen)

        def given() -> Mutation:
            if tensors and rng.random() < 0.5:
                return rng.choice(tensors).clone(), "a copy of another argument instead of None", False
            shape = tuple(rng.choice([0, 1, 4, 33]) for _ in range(rng.choice([0, 1, 2, 3])))
            dtype = rng.choice(DTYPES)
            return _rand(shape, dtype, gen), f"a {dtype} tensor of shape {shape} instead of None", False

        return [given, given, lambda: (3, "int instead of None", False)]
    if ty.base == "int" and ty.is_list:
        base = list(value) if isinstance(value, (list, tuple)) else [1, 1]

        def entry() -> Mutation:
            new = list(base) or [0]
            i = rng.randrange(len(new))
            new[i] = rng.choice(INTS + BIG_INTS)
            return new, f"list {base} -> {new}", False

        muts += [entry, entry, entry]
        muts += [
            lambda: ([], "empty list", False),
            lambda: (base[:-1], "one entry short", False),
            lambda: ([*base, 1], "one entry more", False),
            lambda: ([1] * 1000, "1000 entries", False),
            lambda: (128, "a bare int", False),
            lambda: (["a", *base[1:]], "a string entry", False),
            lambda: ([1.5, *base[1:]], "a float entry", False),
            lambda: ([None, *base[1:]], "a None entry", False),
            lambda: (None, "None", False),
            lambda: (tuple(base), "a tuple", True),
        ]
        return muts
    if ty.base == "int":
        for v in INTS + BIG_INTS:
            muts.append(lambda v=v: (v, f"int {v}", False))
        if isinstance(value, int):
            muts += [lambda: (value + 1, f"int {value + 1}", False), lambda: (value - 1, f"int {value - 1}", False)]
        for wrong in (None, 1.5, "3", True, [1], torch.tensor([1, 2])):
            muts.append(lambda wrong=wrong: (wrong, f"{type(wrong).__name__} instead of an int", False))
        return muts
    if ty.base == "float":
        for v in FLOATS:
            muts.append(lambda v=v: (v, f"float {v}", False))
        for wrong in (None, "x", [1.0]):
            muts.append(lambda wrong=wrong: (wrong, f"{type(wrong).__name__} instead of a float", False))
        return muts
    if ty.base == "bool":
        for wrong in (None, 2, -1, "yes", 0.5, [True], torch.tensor([True, False])):
            muts.append(lambda wrong=wrong: (wrong, f"{wrong!r} instead of a bool", False))
        muts.append(lambda: (not value, f"bool {not value}", False))
        return muts
    if ty.base == "str":
        for v in STRINGS:
            muts.append(lambda v=v: (v, f"str {v[:12]!r}{'...' if len(v) > 12 else ''}", False))
        for wrong in (None, 5, b"nk", ["n", "k"]):
            muts.append(lambda wrong=wrong: (wrong, f"{type(wrong).__name__} instead of a str", False))
        return muts
    if ty.base == "ScalarType":
        for dtype in DTYPES:
            muts.append(lambda dtype=dtype: (dtype, f"dtype {dtype}", False))
        for wrong in (None, "float32", 6):
            muts.append(lambda wrong=wrong: (wrong, f"{wrong!r} instead of a dtype", False))
        return muts
    return [lambda: (None, "None", False)]


def make_case(name: str, index: int, seeds: list[Sample]) -> Case:
    op = OPS[name]
    rng = random.Random(f"{name}:{index}")
    gen = torch.Generator().manual_seed(rng.getrandbits(62))
    seed = seeds[rng.randrange(len(seeds))]
    sample = clone_args(seed)
    values: dict[str, Any] = {}
    for i, arg in enumerate(op.schema.args):
        if i < len(sample.args):
            values[arg.name] = sample.args[i]
        elif arg.name in sample.kwargs:
            values[arg.name] = sample.kwargs[arg.name]
        elif arg.has_default:
            values[arg.name] = arg.default
    entry = "legacy" if rng.random() < 0.25 else "schema"
    labels: list[str] = []
    layout_only = True
    call_level = None
    args_list = list(op.schema.args)
    for _ in range(rng.choice([1, 1, 1, 1, 1, 2, 2, 3])):
        if not args_list or rng.random() < 0.06:
            call_level = rng.choice(["missing", "extra", "unknown keyword"])
            labels.append(f"call: {call_level} argument")
            layout_only = False
            continue
        arg = rng.choice(args_list)
        tensors = [v for v in values.values() if isinstance(v, torch.Tensor)]
        choices = _value_mutations(arg, values.get(arg.name), tensors, rng, gen)
        for _attempt in range(8):
            try:
                value, label, same = rng.choice(choices)()
                break
            except (RuntimeError, TypeError, ValueError):
                continue  # not applicable to this value (e.g. a reshape of a sparse tensor): pick another
        else:
            value, label, same = None, "None", False
        values[arg.name] = value
        labels.append(f"{arg.name}: {label}")
        layout_only = layout_only and same

    written = [values.get(a.name) for a in op.schema.args if a.is_write]
    if entry == "schema":
        args = [values[a.name] for a in op.schema.args if not a.kwarg_only and a.name in values]
        kwargs = {a.name: values[a.name] for a in op.schema.args if a.kwarg_only and a.name in values}
    else:
        args, kwargs = [], {}
        for p in params(op):
            members = [values.get(m.name) for m in p.members]
            value = tuple(members) if p.is_pack else members[0]
            if p.is_pack and rng.random() < 0.15:
                value = rng.choice([members[0], (members[0],), (*members, members[0]), (None, None), list(members)])
                labels.append(
                    f"pack {p.name}: {type(value).__name__} of {len(value) if isinstance(value, (tuple, list)) else 1}"
                )
                layout_only = layout_only and isinstance(value, list) and len(value) == 2
            if p.kind == "kwonly":
                kwargs[p.name] = value
            else:
                args.append(value)
    if call_level == "missing" and args:
        args.pop()
    elif call_level == "extra":
        args.append(1)
    elif call_level == "unknown keyword":
        kwargs["not_an_argument"] = 1
    return Case(name, index, entry, seed, labels, tuple(args), kwargs, layout_only and bool(labels), written)
