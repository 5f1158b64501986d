"""Generates a graph's host wrapper: Python source that runs its schedule.

The wrapper allocates kernel results with torch, launches kernels, calls libraries for
`dyno.extern`, performs reshapes/slices/transposes as views, and returns torch tensors with
the strides eager PyTorch would give them. Like Inductor's wrapper code, it is plain Python
that can be read in DYNO_DEBUG_DIR.
"""
import re
from typing import Dict, List, Sequence, Tuple

import torch

from ..errors import DynoCompileError
from .host_runtime import as_eager, wrapper_globals  # noqa: F401 (re-exported)

_DTYPES = {
    "f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
    "bf16": torch.bfloat16, "i64": torch.int64, "i32": torch.int32, "i16": torch.int16,
    "i8": torch.int8, "ui8": torch.uint8, "i1": torch.bool,
}


def torch_dtype(element_type) -> torch.dtype:
    name = str(element_type)
    if name not in _DTYPES:
        raise DynoCompileError("wrapper", f"unsupported element type {name}")
    return _DTYPES[name]


def _shape(value) -> Tuple[int, ...]:
    from .. import ir

    return tuple(ir.RankedTensorType(value.type).shape)


def _i64_array(attribute) -> List[int]:
    from .. import ir

    return list(ir.DenseI64ArrayAttr(attribute))


def ir_int(attribute) -> int:
    from .. import ir

    return ir.IntegerAttr(attribute).value


def _is_view_placeholder(use) -> bool:
    owner = use.owner
    name = owner.operation.name if hasattr(owner, "operation") else owner.name
    return name == "linalg.transpose" and use.operand_number == 1


def _kernel_name(callee) -> str:
    return re.findall(r"@([\w$.]+)", str(callee))[-1]


class WrapperBuilder:
    """Walks the host function (func.func @main) and emits the body of `call(args)`."""

    def __init__(self, host_func, asm_state, pass_tensors: bool = False):
        """`pass_tensors`: launch kernels with the tensors themselves (Triton) rather than
        their data pointers (the CPU kernels' bare-pointer ABI, which also run on OpenMP
        and so sync its thread count with torch's on every call)."""
        self.func = host_func
        self.pass_tensors = pass_tensors
        self.state = asm_state
        self.names: Dict[str, str] = {}
        self.contiguous = set()  # variables known to be dense row-major tensors
        self.lines: List[str] = []
        self.kernel_signatures: Dict[str, int] = {}
        self.extern_calls = 0
        self.counter = 0

    def key(self, value) -> str:
        return value.get_name(self.state)

    def name(self, value) -> str:
        key = self.key(value)
        if key not in self.names:
            raise DynoCompileError("wrapper", f"value {key} is used before it is defined")
        return self.names[key]

    def define(self, value, prefix="buf", contiguous=False) -> str:
        name = f"{prefix}{self.counter}"
        self.counter += 1
        self.names[self.key(value)] = name
        if contiguous:
            self.contiguous.add(name)
        return name

    def dense(self, value) -> str:
        """A name for `value` as a contiguous tensor (copies only if it is a strided view)."""
        name = self.name(value)
        if name in self.contiguous:
            return name
        dense_name = f"{name}_c"
        self.lines.append(f"{dense_name} = {name}.contiguous()")
        return dense_name

    def emit(self, outputs: Sequence[torch.Tensor]) -> str:
        block = self.func.regions[0].blocks[0]
        arguments = []
        for argument in block.arguments:
            arguments.append(self.define(argument, prefix="arg"))
        if not self.pass_tensors:
            self.lines.append("_sync_threads(_get_num_threads())")
        for op in block.operations:
            self.emit_op(op.operation, outputs)
        header = f"def call(args):\n    {', '.join(arguments)}{',' if len(arguments) == 1 else ''} = args\n" \
            if arguments else "def call(args):\n"
        return header + "".join(f"    {line}\n" for line in self.lines)

    def emit_op(self, op, outputs):
        from .. import ir

        kind = op.name
        if kind == "dyno.launch":
            kernel = _kernel_name(op.attributes["callee"])
            inputs = [self.dense(v) for v in op.operands]
            results = []
            for result in op.results:
                name = self.define(result, contiguous=True)
                tensor_type = ir.RankedTensorType(result.type)
                self.lines.append(
                    f"{name} = _empty({tuple(tensor_type.shape)}, dtype={torch_dtype(tensor_type.element_type)})")
                results.append(name)
            suffix = "" if self.pass_tensors else ".data_ptr()"
            pointers = ", ".join(f"{n}{suffix}" for n in inputs + results)
            self.lines.append(f"_kernels[{kernel!r}]({pointers})")
            self.kernel_signatures[kernel] = len(inputs) + len(results)
        elif kind == "dyno.extern":
            self.emit_extern(op)
        elif kind in ("tensor.expand_shape", "tensor.collapse_shape"):
            source = self.name(op.operands[0])
            name = self.define(op.results[0], contiguous=source in self.contiguous)
            self.lines.append(f"{name} = {source}.reshape({_shape(op.results[0])})")
        elif kind == "tensor.extract_slice":
            self.emit_slice(op)
        elif kind == "linalg.transpose":
            permutation = _i64_array(op.attributes["permutation"])
            name = self.define(op.results[0])
            self.lines.append(f"{name} = {self.name(op.operands[0])}.permute({permutation})")
        elif kind == "tensor.empty":
            if all(_is_view_placeholder(use) for use in op.results[0].uses):
                return  # only the `outs` of a transpose view: nothing to allocate
            name = self.define(op.results[0], contiguous=True)
            tensor_type = ir.RankedTensorType(op.results[0].type)
            self.lines.append(
                f"{name} = _empty({tuple(tensor_type.shape)}, dtype={torch_dtype(tensor_type.element_type)})")
        elif kind == "func.return":
            self.emit_return(op, outputs)
        else:
            raise DynoCompileError("wrapper", f"unsupported host operation {kind}")

    def emit_extern(self, op):
        callee = str(op.attributes["name"]).strip('"')
        operands = [self.name(v) for v in op.operands]
        contiguous = True
        if callee in ("matmul", "batch_matmul"):
            mm, addmm = ("_mm", "_addmm") if callee == "matmul" else ("_bmm", "_baddbmm")
            expression = f"{addmm}({operands[2]}, {operands[0]}, {operands[1]})" \
                if len(operands) == 3 else f"{mm}({operands[0]}, {operands[1]})"
        elif callee == "conv2d":
            bias = operands[2] if len(operands) == 3 else "None"
            stride = _i64_array(op.attributes["strides"])
            padding = _i64_array(op.attributes["padding"])
            dilation = _i64_array(op.attributes["dilations"])
            groups = ir_int(op.attributes["groups"])
            expression = (f"_conv2d({operands[0]}, {operands[1]}, {bias}, {stride}, "
                          f"{padding}, {dilation}, {groups})")
            contiguous = False  # follows the input's memory format
        else:
            raise DynoCompileError("wrapper", f"unknown library operation {callee}")
        name = self.define(op.results[0], contiguous=contiguous)
        self.lines.append(f"{name} = {expression}")
        self.extern_calls += 1

    def emit_slice(self, op):
        offsets = _i64_array(op.attributes["static_offsets"])
        sizes = _i64_array(op.attributes["static_sizes"])
        strides = _i64_array(op.attributes["static_strides"])
        if any(v < 0 for v in offsets + sizes + strides) or len(op.operands) != 1:
            raise DynoCompileError("wrapper", "dynamic tensor.extract_slice on the host")
        result_shape = list(_shape(op.results[0]))
        # Rank-reducing slices drop unit dimensions: index those with an integer.
        indices, kept = [], 0
        for offset, size, stride in zip(offsets, sizes, strides):
            if kept < len(result_shape) and size == result_shape[kept]:
                end = offset + (size - 1) * stride + 1 if size else offset
                indices.append(f"{offset}:{end}:{stride}")
                kept += 1
            elif size == 1:
                indices.append(str(offset))
            else:
                raise DynoCompileError("wrapper", "unexpected rank-reducing slice")
        name = self.define(op.results[0])
        self.lines.append(f"{name} = {self.name(op.operands[0])}[{', '.join(indices)}]")

    def emit_return(self, op, outputs):
        values = iter([self.name(v) for v in op.operands])
        tensors = [expected for expected in outputs if expected is not None]
        if len(op.operands) != len(tensors):
            raise DynoCompileError(
                "wrapper", f"graph returns {len(op.operands)} tensors, FX expects {len(tensors)}")
        results = []
        for expected in outputs:
            if expected is None:
                results.append("None")
            else:
                results.append(
                    f"_as_eager({next(values)}, {tuple(expected.stride())}, {expected.dtype})")
        self.lines.append(f"return [{', '.join(results)}]")
