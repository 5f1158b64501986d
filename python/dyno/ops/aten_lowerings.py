"""Dyno's own lowerings of ATen ops that torch-mlir cannot lower (or lowers wrongly).

torch-mlir imports such an op as `torch.operator` (or as a torch op its pipeline rejects).
Before torch-mlir's pipeline runs, each one whose name is in LOWERINGS is replaced, in the
imported torch dialect, by an island of builtin-tensor ops: `torch_c.to_builtin_tensor`
of its operands, linalg.generic ops (bodies of arith, math and scf ops, loops included)
and scans (`tm_tensor.scan`, which becomes `dyno.scan`), then `torch_c.from_builtin_tensor`
of its results. torch-mlir's pipeline passes such islands through unchanged, exactly as
it passes through the ops its own lowerings produce; the rest of the graph is lowered as
before and Dyno compiles the whole graph.

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


def _split_top_level(text: str) -> List[str]:
    """`a<b, c>, d` -> [`a<b, c>`, `d`]: commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "<[({":
            depth += 1
        elif char in ">])}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if text.strip():
        parts.append(text[start:].strip())
    return parts


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


class Operand:
    """An operand of the op being lowered: its SSA name, torch type, and constant value
    (for `torch.constant.*` scalars)."""

    def __init__(self, name: str, type: str, constants: Dict[str, object]):
        self.name, self.type = name, type
        self.is_tensor = type.startswith("!torch.vtensor")
        self.tensor = TensorType(type) if self.is_tensor else None
        self.is_constant = name in constants
        self.constant = constants.get(name)


class Island:
    """The ops replacing one torch op: builtin tensors in, builtin tensors out."""

    def __init__(self, prefix: str):
        self.builder = Builder(prefix)

    def to_builtin(self, operand: Operand) -> str:
        value = self.builder.fresh()
        self.builder.emit(f"{value} = torch_c.to_builtin_tensor {operand.name} : "
                          f"{operand.type} -> {operand.tensor.builtin()}")
        return value

    def scalar(self, operand: Operand) -> Value:
        """A scalar operand (int, float or bool) as an i64, f64 or i1 value."""
        type = {"!torch.int": "i64", "!torch.float": "f64", "!torch.bool": "i1"}.get(operand.type)
        if type is None:
            raise DynoCompileError("frontend", f"unsupported scalar operand {operand.type}")
        if operand.is_constant:
            return self.builder.constant(operand.constant, type)
        convert = {"i64": "to_i64", "f64": "to_f64", "i1": "to_i1"}[type]
        return self.builder.op(f"torch_c.{convert} {operand.name} : {operand.type} -> {type}",
                               type)

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
        b.emit(f"{name}:2 = tm_tensor.scan dimension({dim}) inclusive(true) "
               f"ins({input_name} : {type.builtin()}) outs({output}, {filled} : "
               f"{type.builtin()}, {acc_type}) {{")
        previous = Value(b, b.fresh(), type.element)
        current = Value(b, b.fresh(), type.element)
        b.emit(f"^bb0({previous.name}: {type.element}, {current.name}: {type.element}):")
        outer = b.indent
        b.indent = outer + "  "
        value = combine(previous, current)
        b.emit(f"tm_tensor.yield {value.name} : {type.element}")
        b.indent = outer
        b.emit(f"}} -> {type.builtin()}, {acc_type}")
        return f"{name}#0"

    def from_builtin(self, name: str, builtin: str, result: str, torch_type: str) -> None:
        self.builder.emit(f"{result} = torch_c.from_builtin_tensor {name} : "
                          f"{builtin} -> {torch_type}")


# A lowering gets the island, the op's operands and its result types, and returns the
# builtin tensors (name, builtin type) of its results.
LOWERINGS: Dict[str, Callable] = {}


def lowering(*names: str):
    def register(function):
        for name in names:
            LOWERINGS[name] = function
        return function
    return register


_CONSTANT = re.compile(
    r'^\s*(%[\w.$-]+) = "torch\.constant\.(int|float|bool|none|str)"\(\)'
    r'(?: <\{value = ([^:}]+?)(?: : \w+)?\}>)?')
_INT_LIST = re.compile(
    r'^\s*(%[\w.$-]+) = "torch\.prim\.ListConstruct"\((.*?)\) : .* -> !torch\.list<int>$')
_OP = re.compile(
    r'^(\s*)(?:(%[\w.$-]+)(?::(\d+))? = )?"(torch\.operator|torch\.aten\.[\w.]+)"'
    r'\((.*?)\)(?: <\{name = "([\w.]+)"\}>)? : \((.*)\) -> (.*)$')


def _constant_value(kind: str, text: Optional[str]):
    if kind == "none":
        return None
    if kind == "bool":
        return text.strip() == "true"
    if kind == "int":
        return int(text)
    if kind == "str":
        return text.strip().strip('"')
    text = text.strip()
    if text.lower().startswith("0x"):  # NaN and infinities print as f64 bit patterns
        import struct
        return struct.unpack("d", struct.pack("Q", int(text, 16)))[0]
    return float(text)


def lower_unsupported_ops(text: str) -> str:
    """Replaces the ops LOWERINGS covers in a torch-dialect module (generic form)."""
    constants: Dict[str, object] = {}
    lines = text.splitlines()
    renames: Dict[str, str] = {}
    output = []
    for number, line in enumerate(lines):
        constant = _CONSTANT.match(line)
        if constant:
            constants[constant.group(1)] = _constant_value(constant.group(2), constant.group(3))
        int_list = _INT_LIST.match(line)
        if int_list:
            items = _split_top_level(int_list.group(2))
            if all(isinstance(constants.get(item), int) for item in items):
                constants[int_list.group(1)] = [constants[item] for item in items]
        match = _OP.match(line)
        if not match:
            output.append(line)
            continue
        indent, result, count, op, operands, name, in_types, out_types = match.groups()
        name = name if op == "torch.operator" else op
        function = LOWERINGS.get(name)
        if function is None:
            output.append(line)
            continue
        names = _split_top_level(operands)
        types = _split_top_level(in_types)
        out_types = out_types.strip()
        if out_types.startswith("("):
            out_types = out_types[1:-1]
        island = Island(f"dyno{number}")
        try:
            results = [TensorType(t) for t in _split_top_level(out_types)]
            built = function(island, [Operand(n, t, constants) for n, t in zip(names, types)],
                             results)
        except Unsupported:
            output.append(line)
            continue
        # `%5#1` becomes `%dyno_5_1` (a name that starts with a digit must be all digits).
        result_names = [] if result is None else [result] if count is None else \
            [f"%dyno_{result[1:]}_{i}" for i in range(int(count))]
        if count is not None:
            renames[result] = f"%dyno_{result[1:]}_"
        for (builtin_name, builtin_type), result_name, result_type in zip(
                built, result_names, results):
            island.from_builtin(builtin_name, builtin_type, result_name, result_type.torch)
        output.extend(island.builder.lines)
    lowered = "\n".join(output) + "\n"
    for result, prefix in renames.items():
        lowered = re.sub(re.escape(result) + r"#(\d+)", prefix + r"\1", lowered)
    return lowered


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
