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
the IR. Its lowering writes the island with a `Builder` (MLIR ops as text, SSA values as
Python objects with arithmetic); the island is parsed as a function of the op's operands
in the module's context and its body spliced in place of the op. torch_c and tm_tensor
ops are written in generic form: the Python context does not register their dialects.

Each lowering computes what ATen's CPU kernel computes, in the same order and precision
(its source is named where it matters), so that results match eager's within rounding.
An op a lowering does not cover (an element type, a variant) is left alone: torch-mlir
then rejects it and per-op fallback runs it eagerly, as before.
"""
import re
from typing import Callable, Dict, List, Optional

from ..errors import DynoCompileError

FLOAT_TYPES = ("f16", "bf16", "f32", "f64")


class Unsupported(Exception):
    """Raised by a lowering to leave an op to torch-mlir (and so to per-op fallback)."""
_BITS = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "f16": 16, "bf16": 16,
         "f32": 32, "f64": 64}


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
    """An SSA value of a scalar type, with Python arithmetic that emits arith ops."""

    def __init__(self, builder: "Builder", name: str, type: str):
        self.builder, self.name, self.type = builder, name, type

    @property
    def is_float(self) -> bool:
        return self.type in FLOAT_TYPES

    def _binary(self, other, float_op: str, int_op: str, swap=False) -> "Value":
        other = self.builder.coerce(other, self.type)
        lhs, rhs = (other, self) if swap else (self, other)
        op = float_op if self.is_float else int_op
        return self.builder.op(f"{op} {lhs.name}, {rhs.name} : {self.type}", self.type)

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

    def __neg__(self):
        if self.is_float:
            return self.builder.op(f"arith.negf {self.name} : {self.type}", self.type)
        return 0 - self

    def _compare(self, other, float_predicate: str, int_predicate: str) -> "Value":
        other = self.builder.coerce(other, self.type)
        if self.is_float:
            return self.builder.op(
                f"arith.cmpf {float_predicate}, {self.name}, {other.name} : {self.type}", "i1")
        return self.builder.op(
            f"arith.cmpi {int_predicate}, {self.name}, {other.name} : {self.type}", "i1")

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


class Builder:
    """Collects MLIR ops (custom form) with fresh SSA names under one prefix."""

    def __init__(self, prefix: str):
        self.prefix, self.count, self.lines = prefix, 0, []
        self.indent = "    "

    def fresh(self) -> str:
        self.count += 1
        return f"%{self.prefix}_{self.count}"

    def emit(self, line: str) -> None:
        self.lines.append(self.indent + line)

    def op(self, text: str, type: str) -> Value:
        name = self.fresh()
        self.emit(f"{name} = {text}")
        return Value(self, name, type)

    def constant(self, value, type: str) -> Value:
        if type in FLOAT_TYPES:
            value = float(value)
            if value != value or value in (float("inf"), float("-inf")):
                import struct
                bits = {"f64": ("d", "Q"), "f32": ("f", "I")}
                if type not in bits:
                    raise DynoCompileError("frontend", f"no {type} constant {value}")
                pack, unpack = bits[type]
                literal = hex(struct.unpack(unpack, struct.pack(pack, value))[0])
            else:
                literal = "%.17e" % value
        elif type == "i1":  # a typed attribute already: no ": i1"
            return self.op(f"arith.constant {'true' if value else 'false'}", type)
        else:
            literal = str(int(value))
        return self.op(f"arith.constant {literal} : {type}", type)

    def coerce(self, value, type: str) -> Value:
        return value if isinstance(value, Value) else self.constant(value, type)

    def select(self, condition: Value, a, b) -> Value:
        type = a.type if isinstance(a, Value) else b.type
        a, b = self.coerce(a, type), self.coerce(b, type)
        return self.op(f"arith.select {condition.name}, {a.name}, {b.name} : {type}", type)

    def math(self, name: str, *operands: Value) -> Value:
        type = operands[0].type
        names = ", ".join(v.name for v in operands)
        return self.op(f"math.{name} {names} : {type}", type)

    def bitcast(self, value: Value, type: str) -> Value:
        return self.op(f"arith.bitcast {value.name} : {value.type} to {type}", type)

    def convert(self, value: Value, type: str) -> Value:
        source = value.type
        if source == type:
            return value
        if source in FLOAT_TYPES and type in FLOAT_TYPES:
            op = "arith.extf" if _BITS[type] > _BITS[source] else "arith.truncf"
        elif type in FLOAT_TYPES:
            op = "arith.uitofp" if source == "i1" else "arith.sitofp"
        elif source in FLOAT_TYPES:
            raise DynoCompileError("frontend", "float to integer conversions go through to_int")
        else:
            op = ("arith.extui" if source == "i1" else "arith.extsi") \
                if _BITS[type] > _BITS[source] else "arith.trunci"
        return self.op(f"{op} {value.name} : {source} to {type}", type)

    def to_int(self, value: Value, type: str = "i64") -> Value:
        """static_cast<int64_t> of a float as x86-64 computes it: truncation, and the
        'integer indefinite' value (the most negative integer) for NaN, infinities and
        values out of range (LLVM's fptosi gives poison there)."""
        limit = float(2 ** (_BITS[type] - 1))
        in_range = self.math("absf", value).lt(limit)
        truncated = self.op(f"arith.fptosi {value.name} : {value.type} to {type}", type)
        return self.select(in_range, truncated, -(2 ** (_BITS[type] - 1)))

    def and_(self, a: Value, b: Value) -> Value: return a & b
    def or_(self, a: Value, b: Value) -> Value: return a | b
    def not_(self, a: Value) -> Value: return a ^ self.constant(1, "i1")

    def while_loop(self, initial: List[Value], condition: Callable, body: Callable) -> List[Value]:
        """scf.while: `condition(values)` -> i1, `body(values)` -> next values."""
        types = ", ".join(v.type for v in initial)
        before = [Value(self, self.fresh(), v.type) for v in initial]
        after = [Value(self, self.fresh(), v.type) for v in initial]
        result = self.fresh()
        bindings = ", ".join(f"{b.name} = {v.name}" for b, v in zip(before, initial))
        self.emit(f"{result}:{len(initial)} = scf.while ({bindings}) : ({types}) -> ({types}) {{")
        outer = self.indent
        self.indent = outer + "  "
        keep = condition(before)
        self.emit(f"scf.condition({keep.name}) {', '.join(b.name for b in before)} : {types}")
        self.indent = outer
        self.emit("} do {")
        self.emit(f"^bb0({', '.join(f'{a.name}: {a.type}' for a in after)}):")
        self.indent = outer + "  "
        following = [self.coerce(v, a.type) for v, a in zip(body(after), after)]
        self.emit(f"scf.yield {', '.join(v.name for v in following)} : {types}")
        self.indent = outer
        self.emit("}")
        return [Value(self, f"{result}#{i}", v.type) for i, v in enumerate(initial)]


_NOT_CONSTANT = object()


class Operand:
    """An operand of the op being lowered: its SSA name inside the island, torch type,
    and constant value (for `torch.constant.*` scalars and lists of constant ints)."""

    def __init__(self, name: str, type: str, constant=_NOT_CONSTANT):
        self.name, self.type = name, type
        self.is_tensor = type.startswith("!torch.vtensor")
        self.tensor = TensorType(type) if self.is_tensor else None
        self.is_constant = constant is not _NOT_CONSTANT
        self.constant = constant if self.is_constant else None


class Island:
    """The ops replacing one torch op: builtin tensors in, builtin tensors out."""

    def __init__(self, prefix: str):
        self.builder = Builder(prefix)

    def to_builtin(self, operand: Operand) -> str:
        value = self.builder.fresh()
        self.builder.emit(f'{value} = "torch_c.to_builtin_tensor"({operand.name}) : '
                          f"({operand.type}) -> {operand.tensor.builtin()}")
        return value

    def scalar(self, operand: Operand) -> Value:
        """A scalar operand (int, float or bool) as an i64, f64 or i1 value."""
        type = {"!torch.int": "i64", "!torch.float": "f64", "!torch.bool": "i1"}.get(operand.type)
        if type is None:
            raise DynoCompileError("frontend", f"unsupported scalar operand {operand.type}")
        if operand.is_constant:
            return self.builder.constant(operand.constant, type)
        convert = {"i64": "to_i64", "f64": "to_f64", "i1": "to_i1"}[type]
        return self.builder.op(f'"torch_c.{convert}"({operand.name}) : ({operand.type}) -> '
                               f"{type}", type)

    def sizes(self, result: TensorType, sources: List[tuple], drop: Optional[int] = None) -> str:
        """Dynamic-size operands for a tensor.empty of `result`'s shape: each unknown size
        is read from a source (builtin name, TensorType) whose aligned size is unknown."""
        values = []
        for d, size in enumerate(result.sizes):
            if size is not None or d == drop:
                continue
            for name, type in sources:
                dim = d - (result.rank - type.rank)
                if dim >= 0 and type.sizes[dim] is None:
                    index = self.builder.op(f"arith.constant {dim} : index", "index")
                    size_value = self.builder.op(
                        f"tensor.dim {name}, {index.name} : {type.builtin()}", "index")
                    values.append(size_value.name)
                    break
            else:
                raise DynoCompileError("frontend", f"no operand gives dimension {d}'s size")
        return ", ".join(values)

    def empty(self, result: TensorType, sources, element=None, drop=None) -> str:
        sizes = self.sizes(result, sources, drop)
        return self.builder.op(f"tensor.empty({sizes}) : "
                               f"{result.builtin(element, drop)}", "tensor").name

    def elementwise(self, inputs: List[tuple], result: TensorType, element: str,
                    body: Callable) -> str:
        """A linalg.generic over `result`'s shape; `inputs` are (builtin name, TensorType),
        broadcast as PyTorch does (aligned right; a size-1 dimension repeats).
        `body(values, index)` gets the input elements and a function giving the position
        along a dimension (i64), and returns the result element."""
        b = self.builder
        rank = result.rank
        dims = [f"d{d}" for d in range(rank)]
        maps = []
        for _, type in inputs:
            offset = rank - type.rank
            exprs = ["0" if (size == 1 and result.sizes[offset + i] != 1) else dims[offset + i]
                     for i, size in enumerate(type.sizes)]
            maps.append(f"affine_map<({', '.join(dims)}) -> ({', '.join(exprs)})>")
        maps.append(f"affine_map<({', '.join(dims)}) -> ({', '.join(dims)})>")
        output = self.empty(result, inputs, element)
        out_type = result.builtin(element)
        name = b.fresh()
        ins = ", ".join(n for n, _ in inputs)
        in_types = ", ".join(t.builtin() for _, t in inputs)
        iterators = ", ".join(['"parallel"'] * rank)
        ins_clause = f"ins({ins} : {in_types}) " if inputs else ""
        b.emit(f"{name} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
               f"iterator_types = [{iterators}]}} {ins_clause}outs({output} : {out_type}) {{")
        arguments = [Value(b, b.fresh(), t.element) for _, t in inputs]
        out_argument = b.fresh()
        b.emit("^bb0(" + ", ".join([f"{a.name}: {a.type}" for a in arguments] +
                                   [f"{out_argument}: {element}"]) + "):")
        outer = b.indent
        b.indent = outer + "  "

        def index(dim: int) -> Value:
            position = b.op(f"linalg.index {dim} : index", "index")
            return b.op(f"arith.index_cast {position.name} : index to i64", "i64")

        value = body(arguments, index)
        b.emit(f"linalg.yield {value.name} : {element}")
        b.indent = outer
        b.emit(f"}} -> {out_type}")
        return name

    def scan(self, input_name: str, type: TensorType, dim: int, combine: Callable,
             initial) -> str:
        """An inclusive scan along `dim`: out[0] = in[0], out[i] = combine(out[i-1], in[i]).
        `initial` fills the accumulator (which an inclusive scan does not read)."""
        b = self.builder
        output = self.empty(type, [(input_name, type)])
        accumulator = self.empty(type, [(input_name, type)], drop=dim)
        fill_value = b.constant(initial, type.element)
        filled = b.fresh()
        acc_type = type.builtin(drop=dim)
        b.emit(f"{filled} = linalg.fill ins({fill_value.name} : {type.element}) "
               f"outs({accumulator} : {acc_type}) -> {acc_type}")
        name = b.fresh()
        b.emit(f'{name}:2 = "tm_tensor.scan"({input_name}, {output}, {filled}) ({{')
        previous = Value(b, b.fresh(), type.element)
        current = Value(b, b.fresh(), type.element)
        b.emit(f"^bb0({previous.name}: {type.element}, {current.name}: {type.element}):")
        outer = b.indent
        b.indent = outer + "  "
        value = combine(previous, current)
        b.emit(f'"tm_tensor.yield"({value.name}) : ({type.element}) -> ()')
        b.indent = outer
        b.emit(f"}}) {{dimension = {dim} : i64, inclusive = true, "
               f"operandSegmentSizes = array<i32: 1, 2>}} : ({type.builtin()}, "
               f"{type.builtin()}, {acc_type}) -> ({type.builtin()}, {acc_type})")
        return f"{name}#0"

    def from_builtin(self, name: str, builtin: str, result: str, torch_type: str) -> None:
        self.builder.emit(f'{result} = "torch_c.from_builtin_tensor"({name}) : '
                          f"({builtin}) -> {torch_type}")


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


def _island_function(island: Island, operands: List[Operand], results: List[TensorType],
                     built: List[tuple]) -> str:
    """The island as a function of the op's operands returning its results."""
    if len(built) != len(results):
        raise DynoCompileError("frontend", f"a lowering built {len(built)} results for "
                               f"an op with {len(results)}")
    returned = []
    for i, ((name, builtin), result) in enumerate(zip(built, results)):
        returned.append(f"%dyno_result_{i}")
        island.from_builtin(name, builtin, returned[-1], result.torch)
    arguments = ", ".join(f"{o.name}: {o.type}" for o in operands)
    types = ", ".join(r.torch for r in results)
    lines = [f"func.func private @island({arguments}) -> ({types}) {{",
             *island.builder.lines]
    lines.append(f"    func.return {', '.join(returned)} : {types}" if returned
                 else "    func.return")
    return "\n".join(lines + ["}"])


def _splice(island_module, op) -> None:
    """Replaces `op` by the body of the island function, its arguments by `op`'s
    operands and its returned values for `op`'s results."""
    from torch_mlir import ir

    block = island_module.body.operations[0].regions[0].blocks[0]
    mapping = dict(zip(block.arguments, op.operands))

    def remap(operation):  # values of the island function become the graph's
        for i, value in enumerate(operation.operands):
            if value in mapping:
                operation.operands[i] = mapping[value]
        for region in operation.regions:
            for inner_block in region.blocks:
                for inner in inner_block.operations:
                    remap(inner.operation)

    *body, returned = list(block.operations)
    for original in body:
        copy = original.operation.clone(ip=ir.InsertionPoint(op))
        remap(copy)
        for old, new in zip(original.results, copy.results):
            mapping[old] = new
    for result, value in zip(op.results, returned.operands):
        result.replace_all_uses_with(mapping[value])
    op.erase()


def lower_unsupported_ops(module) -> None:
    """Replaces, in `module` (the torch dialect torch-mlir's importer built), each op
    LOWERINGS covers by its island: the lowering builds it as a function of the op's
    operands, which is parsed in the module's context and spliced in place of the op."""
    from torch_mlir import ir

    module.context.allow_unregistered_dialects = True  # dyno.library_call

    def ops_of(operation):  # every op nested in `operation`, outer ones first
        for region in operation.regions:
            for block in region.blocks:
                for op in list(block.operations):
                    yield op.operation
                    yield from ops_of(op.operation)

    for count, op in enumerate([op for op in ops_of(module.operation)
                                if _lowered_name(op) in LOWERINGS]):
        operands = [Operand(f"%operand{i}", str(value.type), _constant_of(value))
                    for i, value in enumerate(op.operands)]
        island = Island(f"dyno{count}")
        try:
            results = [TensorType(str(result.type)) for result in op.results]
            built = LOWERINGS[_lowered_name(op)](island, operands, results)
        except Unsupported:
            continue
        text = _island_function(island, operands, results, built)
        try:
            island_module = ir.Module.parse(text, context=module.context)
        except Exception as error:
            raise DynoCompileError("frontend", f"the lowering of {_lowered_name(op)} built "
                                   f"IR that does not parse: {error}") from None
        _splice(island_module, op)


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
