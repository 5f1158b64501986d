"""Dyno's own lowerings of ATen ops that torch-mlir cannot lower (or lowers wrongly).

torch-mlir imports such an op as `torch.operator` (or as a torch op its pipeline rejects).
Before torch-mlir's pipeline runs, each one whose name is in LOWERINGS is replaced, in the
imported torch dialect, by an island of builtin-tensor ops: `torch_c.to_builtin_tensor`
of its operands, linalg.generic ops (bodies of arith, math and scf ops, loops included)
and scans (`tm_tensor.scan`, which becomes `dyno.scan`), then `torch_c.from_builtin_tensor`
of its results. torch-mlir's pipeline passes such islands through unchanged, exactly as
it passes through the ops its own lowerings produce; the rest of the graph is lowered as
before and Dyno compiles the whole graph.

The module is the one torch-mlir's importer built, walked with torch-mlir's Python IR API
(`lower_unsupported_ops`): an op's operands, constants and result types are read from
the IR. Its lowering builds the island with a `Builder`, which creates the ops through
the same API (scalar SSA values are Python objects with arithmetic), in place of the op.
torch_c and tm_tensor ops are created by name: the Python context does not register
their dialects (torch-mlir's tools, which read the printed module, do).

Each lowering computes what ATen's CPU kernel computes, in the same order and precision
(its source is named where it matters), so that results match eager's within rounding.
An op a lowering does not cover (an element type, a variant) is left alone: torch-mlir
then rejects it and per-op fallback runs it eagerly, as before.
"""
import contextlib
import re
from typing import Callable, Dict, List, Optional

from ..errors import DynoCompileError

FLOAT_TYPES = ("f16", "bf16", "f32", "f64")


class Unsupported(Exception):
    """Raised by a lowering to leave an op to torch-mlir (and so to per-op fallback)."""


_BITS = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "f16": 16, "bf16": 16,
         "f32": 32, "f64": 64}


# torch-mlir's Python bindings have no API for the torch dialect's types: a tensor
# type's sizes and dtype are read from its spelling.
_VTENSOR = re.compile(r"!torch\.vtensor<\[([^\]]*)\],(.+)>")


class TensorType:
    """A `!torch.vtensor<[sizes],dtype>` and its builtin `tensor<...>` counterpart."""

    def __init__(self, torch_type: str):
        match = _VTENSOR.fullmatch(torch_type)
        if not match:  # a list, a scalar, a tensor of unknown shape: left to torch-mlir
            raise Unsupported()
        self.torch = torch_type
        self.sizes = [None if s == "?" else int(s)
                      for s in match.group(1).split(",") if s.strip()]
        # Builtin tensors are signless: si64 -> i64, ui8 -> i8.
        self.element = re.sub(r"^[su]i", "i", match.group(2))

    @property
    def rank(self) -> int:
        return len(self.sizes)

    def builtin(self, element: Optional[str] = None, drop: Optional[int] = None) -> str:
        sizes = ["?" if s is None else str(s)
                 for d, s in enumerate(self.sizes) if d != drop]
        return "tensor<" + "".join(s + "x" for s in sizes) + (element or self.element) + ">"


class Value:
    """An SSA value of a scalar type (`type`: its MLIR name, "f32", "i64", "index"), with
    Python arithmetic that creates arith ops."""

    def __init__(self, builder: "Builder", value, type: str):
        self.builder, self.value, self.type = builder, value, type

    @property
    def is_float(self) -> bool:
        return self.type in FLOAT_TYPES

    def _binary(self, other, float_op: str, int_op: str, swap=False) -> "Value":
        other = self.builder.coerce(other, self.type)
        lhs, rhs = (other, self) if swap else (self, other)
        op = float_op if self.is_float else int_op
        if not op:
            raise DynoCompileError("frontend", f"no {int_op} of {self.type} values")
        return self.builder.op(op, [lhs, rhs], self.type)

    def __add__(self, other): return self._binary(other, "arith.addf", "arith.addi")
    def __radd__(self, other): return self._binary(other, "arith.addf", "arith.addi", True)
    def __sub__(self, other): return self._binary(other, "arith.subf", "arith.subi")
    def __rsub__(self, other): return self._binary(other, "arith.subf", "arith.subi", True)
    def __mul__(self, other): return self._binary(other, "arith.mulf", "arith.muli")
    def __rmul__(self, other): return self._binary(other, "arith.mulf", "arith.muli", True)
    def __truediv__(self, other): return self._binary(other, "arith.divf", "arith.divsi")
    def __rtruediv__(self, other): return self._binary(other, "arith.divf", "arith.divsi", True)
    def __mod__(self, other): return self._binary(other, "arith.remf", "arith.remsi")
    def __and__(self, other): return self._binary(other, "", "arith.andi")
    def __or__(self, other): return self._binary(other, "", "arith.ori")
    def __xor__(self, other): return self._binary(other, "", "arith.xori")
    def __lshift__(self, other): return self._binary(other, "", "arith.shli")

    def shift_right_unsigned(self, other) -> "Value":
        return self._binary(other, "", "arith.shrui")

    def max_signed(self, other) -> "Value":
        return self._binary(other, "", "arith.maxsi")

    def __neg__(self):
        if self.is_float:
            return self.builder.op("arith.negf", [self], self.type)
        return 0 - self

    def _compare(self, other, float_predicate: str, int_predicate: str) -> "Value":
        other = self.builder.coerce(other, self.type)
        if self.is_float:
            return self.builder.op("arith.cmpf", [self, other], "i1",
                                   predicate=_CMPF[float_predicate])
        return self.builder.op("arith.cmpi", [self, other], "i1",
                               predicate=_CMPI[int_predicate])

    # Ordered float comparisons (false if either is NaN), as C++'s operators; `ne` is
    # C++'s `!=` (true if either is NaN).
    def lt(self, other): return self._compare(other, "olt", "slt")
    def le(self, other): return self._compare(other, "ole", "sle")
    def gt(self, other): return self._compare(other, "ogt", "sgt")
    def ge(self, other): return self._compare(other, "oge", "sge")
    def eq(self, other): return self._compare(other, "oeq", "eq")
    def ne(self, other): return self._compare(other, "une", "ne")

    def isnan(self) -> "Value":
        return self._compare(self, "uno", "ne")

    def to(self, type: str) -> "Value":
        """A conversion as C++'s static_cast (float to integer: see to_int)."""
        return self.builder.convert(self, type)


# arith.cmpf's and arith.cmpi's predicates (the values of their enum attributes).
_CMPF = {"oeq": 1, "ogt": 2, "oge": 3, "olt": 4, "ole": 5, "une": 13, "uno": 14}
_CMPI = {"eq": 0, "ne": 1, "slt": 2, "sle": 3, "sgt": 4, "sge": 5}


class Builder:
    """Creates MLIR ops with MLIR's Python API (torch-mlir's bindings, in the imported
    module's context) at the end of `block`, each at `location` (the op being lowered).
    Values are `Value`s (scalars) or the API's values (tensors)."""

    def __init__(self, context, location, block):
        self.context, self.location, self.block = context, location, block
        self._types: Dict[str, object] = {}

    def type(self, name: str):
        """The MLIR type spelled `name` ("f32", "tensor<4x?xf32>", "!torch.int")."""
        from torch_mlir import ir

        if name not in self._types:
            self._types[name] = ir.Type.parse(name, self.context)
        return self._types[name]

    def attribute(self, value):
        """`value` as an attribute: an attribute itself, an i64 (int), a bool or an f64."""
        from torch_mlir import ir

        if isinstance(value, ir.Attribute):
            return value
        if isinstance(value, bool):
            return ir.BoolAttr.get(value, self.context)
        if isinstance(value, int):
            return ir.IntegerAttr.get(self.type("i64"), value)
        if isinstance(value, float):
            return ir.FloatAttr.get(self.type("f64"), value)
        raise DynoCompileError("frontend", f"no attribute for {value!r}")

    def create(self, name: str, operands, result_types=(), regions: int = 0, /,
               **attributes):
        """The op `name` of `operands` (Values or the API's values), results of the types
        named `result_types`, `regions` empty regions and `attributes`."""
        from torch_mlir import ir

        return ir.Operation.create(
            name, results=[self.type(t) for t in result_types],
            operands=[o.value if isinstance(o, Value) else o for o in operands],
            attributes={key: self.attribute(v) for key, v in attributes.items()},
            regions=regions, loc=self.location, ip=ir.InsertionPoint(self.block))

    def op(self, name: str, operands, type: str, /, **attributes) -> Value:
        """A one-result op whose result is a scalar of `type`."""
        return Value(self, self.create(name, operands, [type], **attributes).result, type)

    def tensor(self, name: str, operands, type: str, /, **attributes):
        """A one-result op whose result is a tensor of the type `type` names."""
        return self.create(name, operands, [type], **attributes).result

    @contextlib.contextmanager
    def inside(self, block):
        """Ops created in the `with` go to the end of `block` (a region's block)."""
        outer, self.block = self.block, block
        try:
            yield
        finally:
            self.block = outer

    def new_block(self, operation, region: int, types: List[str]):
        """The entry block of `operation`'s region `region`, with arguments of `types`."""
        return operation.regions[region].blocks.append(*[self.type(t) for t in types])

    def constant(self, value, type: str) -> Value:
        from torch_mlir import ir

        if type in FLOAT_TYPES:
            attribute = ir.FloatAttr.get(self.type(type), float(value))
        else:
            attribute = ir.IntegerAttr.get(self.type(type), int(bool(value)) if type == "i1"
                                           else int(value))
        return self.op("arith.constant", [], type, value=attribute)

    def coerce(self, value, type: str) -> Value:
        return value if isinstance(value, Value) else self.constant(value, type)

    def select(self, condition: Value, a, b) -> Value:
        type = a.type if isinstance(a, Value) else b.type
        a, b = self.coerce(a, type), self.coerce(b, type)
        return self.op("arith.select", [condition, a, b], type)

    def math(self, name: str, *operands: Value) -> Value:
        return self.op(f"math.{name}", operands, operands[0].type)

    def bitcast(self, value: Value, type: str) -> Value:
        return self.op("arith.bitcast", [value], type)

    def convert(self, value: Value, type: str, **attributes) -> Value:
        source = value.type
        if source == type:
            return value
        if source in FLOAT_TYPES and type in FLOAT_TYPES:
            op = "arith.extf" if _BITS[type] > _BITS[source] else "arith.truncf"
        elif type in FLOAT_TYPES:
            op = "arith.uitofp" if source == "i1" else "arith.sitofp"
        elif source in FLOAT_TYPES:
            raise DynoCompileError("frontend", "float to integer conversions go through to_int")
        elif source == "index" or type == "index":
            op = "arith.index_cast"
        else:
            op = ("arith.extui" if source == "i1" else "arith.extsi") \
                if _BITS[type] > _BITS[source] else "arith.trunci"
        return self.op(op, [value], type, **attributes)

    def to_int(self, value: Value, type: str = "i64") -> Value:
        """static_cast<int64_t> of a float as x86-64 computes it: truncation, and the
        'integer indefinite' value (the most negative integer) for NaN, infinities and
        values out of range (LLVM's fptosi gives poison there)."""
        limit = float(2 ** (_BITS[type] - 1))
        in_range = self.math("absf", value).lt(limit)
        truncated = self.op("arith.fptosi", [value], type)
        return self.select(in_range, truncated, -(2 ** (_BITS[type] - 1)))

    def and_(self, a: Value, b: Value) -> Value: return a & b
    def or_(self, a: Value, b: Value) -> Value: return a | b
    def not_(self, a: Value) -> Value: return a ^ self.constant(1, "i1")

    def while_loop(self, initial: List[Value], condition: Callable, body: Callable) -> List[Value]:
        """scf.while: `condition(values)` -> i1, `body(values)` -> next values."""
        types = [v.type for v in initial]
        loop = self.create("scf.while", initial, types, 2)
        before = self.new_block(loop, 0, types)
        with self.inside(before):
            values = [Value(self, a, t) for a, t in zip(before.arguments, types)]
            self.create("scf.condition", [condition(values), *values])
        after = self.new_block(loop, 1, types)
        with self.inside(after):
            values = [Value(self, a, t) for a, t in zip(after.arguments, types)]
            following = [self.coerce(v, t) for v, t in zip(body(values), types)]
            self.create("scf.yield", following)
        return [Value(self, r, t) for r, t in zip(loop.results, types)]

    def tensor_dim(self, tensor, dim: int) -> Value:
        return self.op("tensor.dim", [tensor, self.constant(dim, "index")], "index")

    def extract(self, tensor, indices: List[Value], type: str) -> Value:
        """The element of `tensor` at `indices` (index values)."""
        return self.op("tensor.extract", [tensor, *indices], type)


_NOT_CONSTANT = object()


class Operand:
    """An operand of the op being lowered: its value, torch type, and constant value (for
    `torch.constant.*` scalars and lists of constant ints)."""

    def __init__(self, value, type: str, constant=_NOT_CONSTANT):
        self.value, self.type = value, type
        self.is_tensor = type.startswith("!torch.vtensor")
        self.tensor = TensorType(type) if self.is_tensor else None
        self.is_constant = constant is not _NOT_CONSTANT
        self.constant = constant if self.is_constant else None


class Island:
    """The ops replacing one torch op: builtin tensors in, builtin tensors out. Tensors
    are the API's values; scalars `Value`s."""

    def __init__(self, builder: Builder):
        self.builder = builder

    def to_builtin(self, operand: Operand):
        return self.builder.tensor("torch_c.to_builtin_tensor", [operand.value],
                                   operand.tensor.builtin())

    def scalar(self, operand: Operand) -> Value:
        """A scalar operand (int, float or bool) as an i64, f64 or i1 value."""
        type = {"!torch.int": "i64", "!torch.float": "f64", "!torch.bool": "i1"}.get(operand.type)
        if type is None:
            raise DynoCompileError("frontend", f"unsupported scalar operand {operand.type}")
        if operand.is_constant:
            return self.builder.constant(operand.constant, type)
        convert = {"i64": "to_i64", "f64": "to_f64", "i1": "to_i1"}[type]
        return self.builder.op(f"torch_c.{convert}", [operand.value], type)

    def sizes(self, result: TensorType, sources: List[tuple], drop: Optional[int] = None):
        """Dynamic-size operands for a tensor.empty of `result`'s shape: each unknown size
        is read from a source (builtin tensor, TensorType) whose aligned size is unknown."""
        values = []
        for d, size in enumerate(result.sizes):
            if size is not None or d == drop:
                continue
            for tensor, type in sources:
                dim = d - (result.rank - type.rank)
                if dim >= 0 and type.sizes[dim] is None:
                    values.append(self.builder.tensor_dim(tensor, dim))
                    break
            else:
                raise DynoCompileError("frontend", f"no operand gives dimension {d}'s size")
        return values

    def empty(self, result: TensorType, sources, element=None, drop=None):
        return self.builder.tensor("tensor.empty", self.sizes(result, sources, drop),
                                   result.builtin(element, drop))

    def elementwise(self, inputs: List[tuple], result: TensorType, element: str,
                    body: Callable):
        """A linalg.generic over `result`'s shape; `inputs` are (builtin tensor,
        TensorType), broadcast as PyTorch does (aligned right; a size-1 dimension
        repeats). `body(values, index)` gets the input elements and a function giving the
        position along a dimension (i64), and returns the result element."""
        from torch_mlir import ir

        b = self.builder
        rank = result.rank
        maps = []
        with b.context:
            for _, type in inputs:
                offset = rank - type.rank
                maps.append(ir.AffineMap.get(rank, 0, [
                    ir.AffineConstantExpr.get(0)
                    if (size == 1 and result.sizes[offset + i] != 1)
                    else ir.AffineDimExpr.get(offset + i) for i, size in enumerate(type.sizes)]))
            maps.append(ir.AffineMap.get_identity(rank))
            parallel = ir.Attribute.parse("#linalg.iterator_type<parallel>")
            attributes = dict(
                indexing_maps=ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                iterator_types=ir.ArrayAttr.get([parallel] * rank),
                operandSegmentSizes=ir.DenseI32ArrayAttr.get([len(inputs), 1]))
        output = self.empty(result, inputs, element)
        generic = b.create("linalg.generic", [tensor for tensor, _ in inputs] + [output],
                           [result.builtin(element)], 1, **attributes)
        block = b.new_block(generic, 0, [t.element for _, t in inputs] + [element])
        with b.inside(block):
            arguments = [Value(b, a, t.element) for a, (_, t) in zip(block.arguments, inputs)]

            def index(dim: int) -> Value:
                return b.op("linalg.index", [], "index", dim=dim).to("i64")

            b.create("linalg.yield", [body(arguments, index)])
        return generic.result

    def scan(self, input, type: TensorType, dim: int, combine: Callable, initial):
        """An inclusive scan along `dim`: out[0] = in[0], out[i] = combine(out[i-1], in[i]).
        `initial` fills the accumulator (which an inclusive scan does not read)."""
        from torch_mlir import ir

        b = self.builder
        output = self.empty(type, [(input, type)])
        accumulator = self.empty(type, [(input, type)], drop=dim)
        fill_value = b.constant(initial, type.element)
        acc_type = type.builtin(drop=dim)
        segments = ir.DenseI32ArrayAttr.get([1, 1], b.context)
        fill = b.create("linalg.fill", [fill_value, accumulator], [acc_type], 1,
                        operandSegmentSizes=segments)
        block = b.new_block(fill, 0, [type.element, type.element])
        with b.inside(block):
            b.create("linalg.yield", [block.arguments[0]])
        # TMTensor is not registered in this context: written as torch-mlir parses it.
        scan = b.create("tm_tensor.scan", [input, output, fill.result],
                        [type.builtin(), acc_type], 1, dimension=dim, inclusive=True,
                        operandSegmentSizes=ir.DenseI32ArrayAttr.get([1, 2], b.context))
        block = b.new_block(scan, 0, [type.element, type.element])
        with b.inside(block):
            previous, current = (Value(b, a, type.element) for a in block.arguments)
            b.create("tm_tensor.yield", [combine(previous, current)])
        return scan.results[0]

    def from_builtin(self, tensor, torch_type: str):
        return self.builder.tensor("torch_c.from_builtin_tensor", [tensor], torch_type)


# A lowering gets the island, the op's operands and its result types, and returns the
# builtin tensors (name, builtin type) of its results.
LOWERINGS: Dict[str, Callable] = {}


def lowering(*names: str):
    def register(function):
        for name in names:
            LOWERINGS[name] = function
        return function
    return register


def _constant_of(value):
    """The Python value of a `torch.constant.*` scalar, or of a `torch.prim.ListConstruct`
    of constant ints; _NOT_CONSTANT for anything else (a graph input, a computed value)."""
    from torch_mlir import ir

    if not isinstance(value, ir.OpResult):
        return _NOT_CONSTANT
    op = value.owner
    name = op.name
    if name == "torch.constant.none":
        return None
    if name == "torch.constant.bool":
        # An i1 attribute: the bindings give an IntegerAttr whose value is sign-extended
        # (true is -1), not a BoolAttr.
        return bool(ir.IntegerAttr(op.attributes["value"]).value)
    if name in ("torch.constant.int", "torch.constant.float", "torch.constant.str"):
        attribute = op.attributes["value"]
        for kind in (ir.IntegerAttr, ir.FloatAttr, ir.StringAttr):
            if isinstance(attribute, kind):
                return attribute.value
        return _NOT_CONSTANT
    if name == "torch.prim.ListConstruct" and str(value.type) == "!torch.list<int>":
        items = [_constant_of(item) for item in op.operands]
        if all(isinstance(item, int) and not isinstance(item, bool) for item in items):
            return items
    return _NOT_CONSTANT


def _lowered_name(op):
    """The name LOWERINGS knows `op` by: an aten op's own, or a torch.operator's `name`."""
    from torch_mlir import ir

    if op.name == "torch.operator":
        return ir.StringAttr(op.attributes["name"]).value
    return op.name if op.name.startswith("torch.aten.") else None


def lower_unsupported_ops(module) -> None:
    """Replaces, in `module` (the torch dialect torch-mlir's importer built), each op
    LOWERINGS covers by its island, built with MLIR's Python API: first in a scratch
    module (a lowering that gives up part way leaves nothing behind), then moved in place
    of the op, whose results its `torch_c.from_builtin_tensor`s replace. The module is
    verified once every island is in."""
    from torch_mlir import ir

    module.context.allow_unregistered_dialects = True  # torch_c, tm_tensor, dyno ops

    def ops_of(operation):  # every op nested in `operation`, outer ones first
        for region in operation.regions:
            for block in region.blocks:
                for op in list(block.operations):
                    yield op.operation
                    yield from ops_of(op.operation)

    lowered = []
    for op in [op for op in ops_of(module.operation) if _lowered_name(op) in LOWERINGS]:
        operands = [Operand(value, str(value.type), _constant_of(value))
                    for value in op.operands]
        scratch = ir.Module.create(op.location)
        island = Island(Builder(module.context, op.location, scratch.body))
        try:
            with op.location:  # (the API's attribute builders take it from here)
                results = [TensorType(str(result.type)) for result in op.results]
                built = LOWERINGS[_lowered_name(op)](island, operands, results)
        except Unsupported:
            continue
        if len(built) != len(results):
            raise DynoCompileError("frontend", f"a lowering built {len(built)} results for "
                                   f"an op with {len(results)}")
        with op.location:
            returned = [island.from_builtin(tensor, result.torch)
                        for (tensor, _), result in zip(built, results)]
        for inner in list(scratch.body.operations):
            inner.operation.move_before(op)
        for result, value in zip(op.results, returned):
            result.replace_all_uses_with(value)
        lowered.append(_lowered_name(op))
        op.erase()
    if lowered:
        try:
            valid = module.operation.verify()
        except ir.MLIRError as error:
            valid, lowered = False, [f"{', '.join(sorted(set(lowered)))}: {error}"]
        if not valid:
            raise DynoCompileError("frontend", "the lowerings of " + ", ".join(lowered) +
                                   " built IR that does not verify")


def float_result(result: TensorType) -> str:
    """The element type an op computes in: f32 and f64 only (ATen's kernels for the ops
    lowered here dispatch on float and double; others are left to fallback)."""
    if result.element not in ("f32", "f64"):
        raise Unsupported()
    return result.element


def dimension(operand: Operand, rank: int) -> int:
    if not operand.is_constant:
        raise Unsupported()
    dim = operand.constant
    return dim + rank if dim < 0 else dim
