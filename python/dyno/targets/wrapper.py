"""Generates a graph's host wrapper: Python source that runs its schedule.

The wrapper allocates kernel results with torch, launches kernels, calls libraries for
`dyno.contraction`, performs reshapes/slices/transposes as views, and returns torch tensors with
the strides eager PyTorch would give them. Like Inductor's wrapper code, it is plain Python
that can be read in DYNO_DEBUG_DIR.
"""
import base64
import math
from typing import Dict, List, Sequence, Tuple

import torch

from .. import counters
from ..errors import DynoCompileError
from ..ops.library_calls import COLLECTIVE_NAMESPACE
from .host_runtime import (K_MAJOR_COPIES_PER_GROUP, as_eager,  # noqa: F401
                           onednn_linear_pays, product_padding,
                           tensor_core_float32_product,
                           wrapper_globals)  # (as_eager, wrapper_globals: re-exported)
from . import view_layouts
from .memory_planning import Statement, plan_workspace, release_dead_names

_DTYPES = {
    "f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
    "bf16": torch.bfloat16, "i64": torch.int64, "i32": torch.int32, "i16": torch.int16,
    "i8": torch.int8, "ui8": torch.uint8, "i1": torch.bool,
    "complex<f32>": torch.complex64, "complex<f64>": torch.complex128,
}


def torch_dtype(element_type) -> torch.dtype:
    name = str(element_type)
    if name not in _DTYPES:
        raise DynoCompileError("wrapper", f"unsupported element type {name}")
    return _DTYPES[name]


def _shape(value) -> Tuple[int, ...]:
    from .. import ir

    return tuple(ir.RankedTensorType(value.type).shape)


def _is_dynamic(size: int) -> bool:
    from .. import ir

    return size == ir.ShapedType.get_dynamic_size()


def _tuple(items: Sequence[str]) -> str:
    return f"({', '.join(items)}{',' if len(items) == 1 else ''})"


# Host integer arithmetic (sizes and graph scalars) as Python expressions.
_BINARY = {
    "arith.addi": "({a} + {b})", "arith.subi": "({a} - {b})", "arith.muli": "({a} * {b})",
    "arith.floordivsi": "({a} // {b})", "arith.ceildivsi": "(-(-{a} // {b}))",
    "arith.divsi": "_divsi({a}, {b})", "arith.divui": "({a} // {b})",
    "arith.remsi": "_remsi({a}, {b})", "arith.remui": "({a} % {b})",
    "arith.maxsi": "max({a}, {b})", "arith.minsi": "min({a}, {b})",
    "arith.maxui": "max({a}, {b})", "arith.minui": "min({a}, {b})",
    "arith.andi": "({a} & {b})", "arith.ori": "({a} | {b})", "arith.xori": "({a} ^ {b})",
}
_CASTS = ("arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui",
          "arith.trunci")
_PREDICATES = {0: "==", 1: "!=", 2: "<", 3: "<=", 4: ">", 5: ">=",
               6: "<", 7: "<=", 8: ">", 9: ">="}  # arith.cmpi: eq ne slt sle sgt sge ult ...


def _affine_expression(expr, operands: Sequence[str], num_dims: int) -> str:
    from .. import ir

    if isinstance(expr, ir.AffineConstantExpr):
        return str(expr.value)
    if isinstance(expr, ir.AffineDimExpr):
        return operands[expr.position]
    if isinstance(expr, ir.AffineSymbolExpr):
        return operands[num_dims + expr.position]
    for kind, template in ((ir.AffineAddExpr, "({a} + {b})"), (ir.AffineMulExpr, "({a} * {b})"),
                           (ir.AffineModExpr, "({a} % {b})"),
                           (ir.AffineFloorDivExpr, "({a} // {b})"),
                           (ir.AffineCeilDivExpr, "(-(-{a} // {b}))")):
        if isinstance(expr, kind):
            binary = expr
            return template.format(a=_affine_expression(binary.lhs, operands, num_dims),
                                   b=_affine_expression(binary.rhs, operands, num_dims))
    raise DynoCompileError("wrapper", f"unsupported affine expression {expr}")


def _i64_array(attribute) -> List[int]:
    from .. import ir

    return list(ir.DenseI64ArrayAttr(attribute))


def ir_string(attribute) -> str:
    from .. import ir

    return ir.StringAttr(attribute).value


def _library_argument(attribute, tensors) -> str:
    """A dyno.library_call argument as Python source: `unit` is the next tensor."""
    from .. import ir

    if isinstance(attribute, ir.UnitAttr):
        return next(tensors)
    if isinstance(attribute, ir.TypeAttr):  # none
        return "None"
    if isinstance(attribute, ir.BoolAttr):
        return repr(attribute.value)
    if isinstance(attribute, (ir.IntegerAttr, ir.FloatAttr, ir.StringAttr)):
        return repr(attribute.value)
    if isinstance(attribute, ir.DenseI64ArrayAttr):
        return repr(list(attribute))
    raise DynoCompileError("wrapper", f"unsupported library call argument {attribute}")


def ir_int(attribute) -> int:
    from .. import ir

    return ir.IntegerAttr(attribute).value


def _is_view_placeholder(use) -> bool:
    owner = use.owner
    name = owner.operation.name if hasattr(owner, "operation") else owner.name
    return name == "linalg.transpose" and use.operand_number == 1


def _kernel_name(callee) -> str:
    """The kernel a launch's callee (@kernel or @module::@kernel) names."""
    from .. import ir

    return ir.SymbolRefAttr(callee).value[-1]


def channels_last_filters(block, element_types: Sequence[str]) -> List[int]:
    """Positions of `block`'s arguments that only convolutions of `element_types` (MLIR
    names: the Triton target's channels-last types for this graph) read, and only as
    their filters. Such a GPU convolution runs channels-last, and PyTorch copies an NCHW
    filter to channels-last on every call (ResNet-50, bf16, H200: 19 copies, 0.15 ms of
    1.7 ms per call): a filter kept channels-last is read as it is."""
    from .. import ir

    positions = []
    for position, argument in enumerate(block.arguments):
        tensor_type = argument.type
        if not isinstance(tensor_type, ir.RankedTensorType):
            continue
        if tensor_type.rank != 4 or str(tensor_type.element_type) not in element_types:
            continue
        uses = list(argument.uses)
        if uses and all(use.owner.name == "dyno.contraction" and use.operand_number == 1
                        and ir_string(use.owner.attributes["name"]) == "conv2d"
                        for use in uses):
            positions.append(position)
    return positions


class WrapperBuilder:
    """Walks the host function (func.func @main) and emits the body of `call(args)`."""

    def __init__(self, host_func, asm_state, pass_tensors: bool = False,
                 frozen_inputs: frozenset = frozenset(),
                 parameter_inputs: frozenset = frozenset(), workspace: bool = True,
                 channels_last_types: Sequence[str] = (),
                 tensor_core_float32: bool = False):
        """`pass_tensors`: launch kernels with the tensors themselves (Triton) rather than
        their data pointers (the CPU kernels' bare-pointer ABI, which also run on OpenMP
        and so sync its thread count with torch's on every call). `frozen_inputs`:
        positions of the arguments that are frozen parameters (CompileOptions.freezing);
        a matmul whose weight is one of them, or a transpose of one, calls
        `_packed.linear`, which keeps the weight packed. `parameter_inputs`: positions of
        the arguments that are parameters or buffers of an inference graph (frozen or
        not); a CPU convolution whose filter is one of them calls `_packed.conv2d`,
        which keeps the filter packed (checked against its bytes on every call where it
        is not frozen). `workspace`: intermediates live
        in a per-graph workspace kept from call to call (memory_planning).
        `channels_last_types`: element types (MLIR names) of the convolutions that run
        channels-last (each `_conv2d` is told; on Triton their filters are kept so,
        channels_last_filters). `tensor_core_float32`: large static float32 products call
        the Triton runtime's tensor-core products (`_kernels.float32_products`,
        host_runtime.tensor_core_float32_product)."""
        self.channels_last_types = tuple(channels_last_types)
        self.tensor_core_float32 = tensor_core_float32
        self.plans_workspace = workspace
        self.func = host_func
        self.pass_tensors = pass_tensors
        self.frozen_inputs = frozen_inputs
        self.frozen_arguments = set()  # names of the frozen arguments
        self.parameter_inputs = parameter_inputs | frozen_inputs
        self.parameter_arguments = set()  # names of the parameter arguments
        # name -> the frozen 2-d argument it is (or a transpose of), and whether transposed
        self.frozen_weights: Dict[str, Tuple[str, bool]] = {}
        # (frozen or parameter argument, transposed) -> its packed weight's slot in
        # `_packed`
        self.frozen_slots: Dict[Tuple[str, bool], int] = {}
        # frozen [k, n] weight -> its K-major copy's slot in `_kernels.float32_products`
        self.k_major_slots: Dict[str, int] = {}
        # A tensor-core product's result (key) -> (the name of its group's K-major
        # copies, the position of its weight there, the group's weights), for the
        # products of weights the graph takes stored [k, n] (group_k_major_copies).
        self.k_major_copies: Dict[str, Tuple[str, int, Tuple[str, ...]]] = {}
        self.k_major_made = set()  # the groups' names whose copies are made already
        # Views dropped where nothing reads them: transposes a library call took the
        # source of instead, and the inner views of a chain made in one call (`_view`).
        self.views: List[str] = []  # in order: the drop is deterministic
        # 2-d transposes by name -> the transposed tensor.
        self.transposed_from: Dict[str, str] = {}
        # Static layouts of dense buffers and their views (view_layouts), by name: a view
        # of one is made from the buffer in one call.
        self.layouts: Dict[str, view_layouts.Layout] = {}
        self.state = asm_state
        self.names: Dict[str, str] = {}
        self.contiguous = set()  # variables known to be dense row-major tensors
        self.tensor_conditions = set()  # 0-d bool tensors checked by cf.assert
        # The body, one statement per entry (memory_planning.Statement): what each
        # defines and reads, and what its operation says about that memory.
        self.statements: List[Statement] = []
        self.constants: List[str] = []  # module-level: tensors made once, not per call
        self.kernel_signatures: Dict[str, int] = {}
        self.padded_slots = 0  # products padded by `_padded` (PaddedProducts)
        # Names of padded products' results with padded rows, and their reshapes that
        # keep the rows: returned as they are (host_runtime.as_eager's padded_rows).
        self.rows_padded = set()
        self.extern_calls = 0
        self.library_calls: List[str] = []  # ATen routines called (dyno.stats()), in order
        self.counter = 0
        # Positions of the arguments read only as channels-last convolution filters (Triton):
        # an exported program lays its own copies out channels-last once
        # (channels_last_filters).
        self.channels_last_filters: List[int] = []

    def add(self, expression: str, *defines: str, **facts) -> Statement:
        """Appends the statement `defines = expression` (`expression` alone where it
        defines nothing); `facts` as memory_planning.Statement takes them."""
        statement = Statement(expression, defines, **facts)
        self.statements.append(statement)
        return statement

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
        """A name for `value` as a contiguous tensor (copies only if it is a strided view;
        once per value: a wrapper's tensors are not written after they are made)."""
        name = self.name(value)
        if name in self.contiguous:
            return name
        dense_name = f"{name}_c"
        if dense_name not in self.contiguous:
            self.add(f"{name}.contiguous()", dense_name)
            self.contiguous.add(dense_name)
        return dense_name

    def emit(self, outputs: Sequence[torch.Tensor]) -> str:
        block = self.func.regions[0].blocks[0]
        arguments = []
        for position, argument in enumerate(block.arguments):
            arguments.append(self.define(argument, prefix="arg"))
            if position in self.parameter_inputs:
                self.parameter_arguments.add(arguments[-1])
            if position in self.frozen_inputs:
                self.frozen_arguments.add(arguments[-1])
                if len(_shape(argument)) == 2:
                    self.frozen_weights[arguments[-1]] = (arguments[-1], False)
        if self.pass_tensors:
            self.channels_last_filters = channels_last_filters(block,
                                                               self.channels_last_types)
            self.group_k_major_copies(block)
        else:
            self.add("_sync_threads(_get_num_threads())")
        for op in block.operations:
            self.emit_op(op.operation, outputs)
        self.drop_unread_views()
        workspace = None
        if self.plans_workspace:  # intermediates kept from call to call
            workspace = plan_workspace(self.statements)
        self.statements = release_dead_names(self.statements)
        prelude = "".join(f"_constant{i} = {line}\n" for i, line in enumerate(self.constants))
        body = "".join(f"    {statement.text}\n" for statement in self.statements)
        unpack = (f"    {', '.join(arguments)}{',' if len(arguments) == 1 else ''} = args\n"
                  if arguments else "")
        if workspace is None:
            return prelude + "def call(args):\n" + unpack + body
        views = ", ".join(f"({slot}, {tuple(shape)!r}, {dtype}"
                          + "".join(f", {extra!r}" for extra in strided) + ")"
                          for slot, shape, dtype, *strided in workspace.views)
        return (prelude
                + f"_workspace = _Workspace({workspace.slot_bytes!r}, [{views}])\n"
                + "def call(args):\n"
                + "    _ws = _workspace.acquire()\n"
                + "    try:\n"
                + "        return _planned_call(args, _ws)\n"
                + "    finally:\n"
                + "        _workspace.release(_ws)\n"
                + "def _planned_call(args, _ws):\n" + unpack + body)

    def drop_unread_views(self):
        """A view that nothing reads is not made at all: a transpose whose weight
        `_packed.linear` or `_linear_weight` took, a chain's inner views (its last view,
        `_view`, reads the buffer)."""
        for name in self.views:
            if not any(name in statement.names for statement in self.statements):
                self.statements = [statement for statement in self.statements
                                   if statement.defines != (name,)]

    def emit_op(self, op, outputs):
        from .. import ir

        kind = op.name
        if kind == "dyno.launch":
            self.emit_launch(op)
        elif kind == "dyno.contraction":
            self.emit_contraction(op)
        elif kind == "dyno.library_call":
            self.emit_library_call(op)
        elif kind in ("tensor.expand_shape", "tensor.collapse_shape"):
            source = self.name(op.operands[0])
            if self.emit_static_view(op, source, lambda layout: view_layouts.reshaped(
                    layout, _shape(op.results[0]))):
                self.views.append(self.names[self.key(op.results[0])])
            else:
                shape = self.reshaped_shape(op, source)
                name = self.define(op.results[0], contiguous=source in self.contiguous)
                self.add(f"{source}.reshape({shape})", name)
                if source in self.rows_padded and \
                        _shape(op.results[0])[-1:] == _shape(op.operands[0])[-1:]:
                    self.rows_padded.add(name)  # (a view: the rows are kept whole)
        elif kind == "tensor.from_elements":  # the shape of a host tensor.reshape
            name = self.define(op.results[0], prefix="shape")
            self.add(_tuple([self.name(v) for v in op.operands]), name, holds_memory=False)
        elif kind == "tensor.reshape":
            source = self.name(op.operands[0])
            name = self.define(op.results[0], contiguous=source in self.contiguous)
            self.add(f"{source}.reshape({self.name(op.operands[1])})", name)
        elif kind == "tensor.extract_slice":
            self.emit_slice(op)
        elif kind == "tensor.cast":  # a static/dynamic size refinement: the same tensor
            source = self.name(op.operands[0])
            name = self.define(op.results[0], contiguous=source in self.contiguous)
            self.add(source, name, view_of=source)
            if source in self.layouts:
                self.layouts[name] = self.layouts[source]
        elif kind == "tensor.pad":  # Triton: between the pieces of a split kernel
            self.emit_constant_pad(op)
        elif kind == "tensor.yield":
            return  # the padding value of a tensor.pad, read by emit_constant_pad
        elif kind == "arith.constant" and isinstance(op.results[0].type, ir.RankedTensorType):
            self.emit_constant_tensor(op)
        elif kind == "arith.constant" and isinstance(op.results[0].type, ir.FloatType):
            value = ir.FloatAttr(op.attributes["value"]).value
            name = self.define(op.results[0], prefix="c")
            self.add(f"float({str(value)!r})", name, holds_memory=False)
        elif kind == "tensor.concat":  # Triton: between the pieces of a split kernel
            parts = ", ".join(self.name(v) for v in op.operands)
            name = self.define(op.results[0], contiguous=True)
            dim = ir.IntegerAttr(op.attributes["dim"]).value
            self.add(f"torch.cat([{parts}], {dim})", name, fresh=True)
        elif kind == "linalg.transpose":
            permutation = _i64_array(op.attributes["permutation"])
            source = self.name(op.operands[0])
            rank = len(permutation)
            if self.emit_static_view(op, source, lambda layout: view_layouts.permuted(
                    layout, permutation)):
                name = self.names[self.key(op.results[0])]
            else:
                name = self.define(op.results[0])
                if rank >= 2 and permutation == list(range(rank - 2)) + [rank - 1, rank - 2]:
                    # (.mT: 1.2 us of host time on an H200 server, .permute([1, 0]) 2.6)
                    self.add(f"{source}.mT", name, view_of=source)
                else:
                    self.add(f"{source}.permute({permutation})", name, view_of=source)
            self.views.append(name)
            if permutation == [1, 0]:
                self.transposed_from[name] = source
            if source in self.frozen_weights and permutation == [1, 0]:
                argument, transposed = self.frozen_weights[source]
                self.frozen_weights[name] = (argument, not transposed)
        elif kind == "tensor.empty":
            if all(_is_view_placeholder(use) for use in op.results[0].uses):
                return  # only the `outs` of a transpose view: nothing to allocate
            self.allocate(op.results[0], [self.name(v) for v in op.operands])
        elif kind == "func.return":
            self.emit_return(op, outputs)
        elif not self.emit_scalar(op):
            raise DynoCompileError("wrapper", f"unsupported host operation {kind}")

    def emit_constant_tensor(self, op):
        """A constant tensor a kernel reads (dyno-hoist-kernel-constants puts them on the
        host): made once, when the wrapper loads, from its bytes in the source."""
        from .. import ir

        tensor_type = ir.RankedTensorType(op.results[0].type)
        try:
            data = bytes(memoryview(ir.DenseElementsAttr(op.attributes["value"])))
        except (TypeError, ValueError) as error:
            raise DynoCompileError("wrapper", f"cannot read a constant tensor: {error}") from None
        dtype = torch_dtype(tensor_type.element_type)
        shape = tuple(tensor_type.shape)
        if len(data) != math.prod(shape) * torch.empty((), dtype=dtype).element_size():
            # A splat's buffer holds one element: the kernels never take those.
            raise DynoCompileError("wrapper", f"constant tensor of {shape} has {len(data)} bytes")
        encoded = base64.b64encode(data).decode("ascii")
        line = f"_constant({encoded!r}, {dtype}, {shape})"
        if line not in self.constants:  # each distinct constant is made once
            self.constants.append(line)
        name = f"_constant{self.constants.index(line)}"
        self.names[self.key(op.results[0])] = name
        self.contiguous.add(name)

    def emit_constant_pad(self, op):
        """tensor.pad with static widths and a constant value (SplitKernelsForTriton
        leaves only those on the host) as torch.nn.functional.pad."""
        from .. import ir

        low = _i64_array(op.attributes["static_low"])
        high = _i64_array(op.attributes["static_high"])
        yielded = op.regions[0].blocks[0].operations[0].operands[0]
        widths = []
        for lo, hi in reversed(list(zip(low, high))):  # F.pad lists the last dim first
            widths += [lo, hi]
        source = self.name(op.operands[0])
        name = self.define(op.results[0], contiguous=True)
        self.add(f"torch.nn.functional.pad({source}, {widths}, value={self.name(yielded)})",
                 name, fresh=True)

    def allocate(self, value, dynamic_sizes: Sequence[str]) -> str:
        """A fresh contiguous tensor for `value`, its `?` sizes taken in order."""
        from .. import ir

        tensor_type = ir.RankedTensorType(value.type)
        sizes, rest = [], iter(dynamic_sizes)
        for size in tensor_type.shape:
            sizes.append(next(rest) if _is_dynamic(size) else str(size))
        name = self.define(value, contiguous=True)
        dtype = torch_dtype(tensor_type.element_type)
        static = not any(_is_dynamic(size) for size in tensor_type.shape)
        if static:  # (host_runtime.empty_strided: a third of torch.empty's time on the CPU)
            shape = tuple(tensor_type.shape)
            strides = view_layouts.dense_strides(shape)
            expression = (f"_empty_strided({_tuple(sizes)}, "
                          f"{_tuple([str(s) for s in strides])}, {dtype})")
        else:
            expression = f"_empty({_tuple(sizes)}, dtype={dtype})"
        statement = self.add(expression, name, fresh=True,
                             into_slot=lambda slot: f"{name} = {slot}")
        if static:
            statement.layout = (shape, dtype)  # a workspace slot can hold it
            self.layouts[name] = (name, shape, strides, 0)
        return name

    def emit_static_view(self, op, source: str, layout_of) -> bool:
        """Emits `op`'s result as `_view` of the dense buffer under `source` when
        `source`'s layout is static and `layout_of(layout)` gives the view's (None: not
        a view); False where it emitted nothing."""
        if source not in self.layouts or any(_is_dynamic(s) for s in _shape(op.results[0])):
            return False
        layout = layout_of(self.layouts[source])
        if layout is None:
            return False
        root, shape, strides, offset = layout
        name = self.define(op.results[0], contiguous=view_layouts.is_dense(shape, strides))
        self.add(f"_view({root}, {shape!r}, {strides!r}, {offset})", name, view_of=root,
                 strided=(tuple(shape), tuple(strides), offset))
        self.layouts[name] = layout
        return True

    def emit_launch(self, op):
        from .. import ir

        kernel = _kernel_name(op.attributes["callee"])
        num_args = len(op.operands) - ir.DenseI32ArrayAttr(
            op.attributes["operandSegmentSizes"])[1]
        args, dims = list(op.operands)[:num_args], list(op.operands)[num_args:]
        inputs = [self.dense(v) if isinstance(v.type, ir.RankedTensorType) else self.name(v)
                  for v in args]
        dim_names, results = iter([self.name(v) for v in dims]), []
        # A result that starts as a copy of an argument (a Triton scatter's original).
        initial = ([int(i) for i in ir.DenseI64ArrayAttr(op.attributes["initial_values"])]
                   if "initial_values" in op.attributes else [-1] * len(op.results))
        for result, source in zip(op.results, initial):
            count = sum(1 for size in _shape(result) if _is_dynamic(size))
            sizes = [next(dim_names) for _ in range(count)]
            if source >= 0:
                name = self.define(result, contiguous=True)
                self.add(f"{inputs[source]}.clone(memory_format=torch.contiguous_format)",
                         name, fresh=True)
                results.append(name)
                continue
            results.append(self.allocate(result, sizes))
        # The launch ABI (include/dyno/Dialect/Dyno/IR/LaunchAbi.h, which the targets'
        # kernels are built by): tensors (CPU: their data pointers) and scalars in place,
        # then every dynamic size of every tensor argument and result, in order.
        suffix = "" if self.pass_tensors else ".data_ptr()"
        named = list(zip(inputs, args)) + list(zip(results, op.results))
        operands = [f"{n}{suffix}" if isinstance(v.type, ir.RankedTensorType) else n
                    for n, v in named]
        for n, v in named:
            if isinstance(v.type, ir.RankedTensorType):
                operands += [f"{n}.shape[{i}]" for i, size in enumerate(_shape(v))
                             if _is_dynamic(size)]
        self.add(f"_kernels[{kernel!r}]({', '.join(operands)})")
        self.kernel_signatures[kernel] = len(operands)

    def reshaped_shape(self, op, source: str) -> str:
        """The result shape of an expand/collapse_shape, as a Python tuple expression."""
        from .. import ir

        result_shape = _shape(op.results[0])
        if not any(_is_dynamic(size) for size in result_shape):
            return str(tuple(result_shape))
        if op.name == "tensor.expand_shape":
            dynamic = iter([self.name(v) for v in list(op.operands)[1:]])
            sizes = _i64_array(op.attributes["static_output_shape"])
            return _tuple([next(dynamic) if _is_dynamic(size) else str(size) for size in sizes])
        groups = [[ir.IntegerAttr(i).value for i in ir.ArrayAttr(group)]
                  for group in ir.ArrayAttr(op.attributes["reassociation"])]
        return _tuple([" * ".join(f"{source}.shape[{i}]" for i in group) or "1"
                       for group in groups])

    def emit_scalar(self, op) -> bool:
        """Host integer computations (sizes, graph scalars); False if `op` is not one."""
        from .. import ir

        kind = op.name
        operands = [self.name(v) for v in op.operands] if kind != "arith.constant" else []
        if kind == "arith.constant":
            if not (isinstance(op.results[0].type, ir.IntegerType)
                    or isinstance(op.results[0].type, ir.IndexType)):
                return False
            expression = str(ir.IntegerAttr(op.attributes["value"]).value)
            if str(op.results[0].type) == "i1":
                expression = str(bool(int(expression) & 1))
        elif kind == "tensor.dim":
            expression = f"{operands[0]}.shape[{operands[1]}]"
        elif kind in _BINARY:
            expression = _BINARY[kind].format(a=operands[0], b=operands[1])
        elif kind in _CASTS:
            expression = operands[0]
        elif kind == "arith.cmpi":
            predicate = _PREDICATES[ir.IntegerAttr(op.attributes["predicate"]).value]
            expression = f"({operands[0]} {predicate} {operands[1]})"
        elif kind == "arith.select":
            expression = f"({operands[1]} if {operands[0]} else {operands[2]})"
        elif kind == "affine.apply":
            affine_map = ir.AffineMapAttr(op.attributes["map"]).value
            expression = _affine_expression(affine_map.results[0], operands, affine_map.n_dims)
        elif kind == "tensor.extract" and len(operands) == 1:  # a kernel-computed check
            name = self.define(op.results[0], prefix="check")
            self.add(operands[0], name, view_of=operands[0])
            self.tensor_conditions.add(name)
            return True
        elif kind == "cf.assert":
            message = ir.StringAttr(op.attributes["msg"]).value
            if operands[0] in self.tensor_conditions:  # no host sync on a GPU
                self.add(f"_check_condition({operands[0]}, {message!r})")
            else:
                self.add(f"if not {operands[0]}: raise _CheckFailed({message!r})")
            return True
        else:
            return False
        self.add(expression, self.define(op.results[0], prefix="s"), holds_memory=False)
        return True

    def emit_contraction(self, op):
        from .. import ir

        callee = str(op.attributes["name"]).strip('"')
        operands = [self.name(v) for v in op.operands]
        contiguous = True
        padded_rows = False
        fresh = True  # the result is new memory (a padded product's is a view of its own)
        layout = None  # a matmul result's static (shape, dtype): planned (`out=`)
        conv_layout = None  # a convolution result's static (shape, strides)
        dense = False  # the result is a new dense tensor (its views are static `_view`s)
        product = None  # (function, arguments) of a call that can write into a slot
        epilogue = ir_string(op.attributes["epilogue"]) \
            if "epilogue" in op.attributes else None
        low_precision = torch_dtype(ir.RankedTensorType(op.results[0].type).element_type) \
            in (torch.bfloat16, torch.float16)
        bias_vector = len(operands) == 3 and len(_shape(op.operands[2])) == 1
        padding = self.product_padding(op) if callee == "matmul" and (
            bias_vector or len(operands) == 2) else (0, 0)
        if any(padding):
            # Sizes on which cuBLAS runs slow kernels (host_runtime.PaddedProducts).
            slot = self.padded_slots
            self.padded_slots += 1
            bias = operands[2] if len(operands) == 3 else "None"
            expression = (f"_padded.mm({slot}, {operands[0]}, {operands[1]}, {bias}, "
                          f"{epilogue!r}, frozen={operands[1] in self.frozen_weights})")
            contiguous = not padding[1]  # (a view of rows padded to N')
            padded_rows = bool(padding[1])
            fresh = False
        elif callee == "matmul" and operands[1] in self.frozen_weights \
                and (bias_vector or len(operands) == 2) and not self.pass_tensors:
            # A linear layer with a frozen weight: oneDNN's linear on the weight packed
            # once (host_runtime.PackedWeights).
            argument, transposed = self.frozen_weights[operands[1]]
            slot = self.frozen_slots.setdefault((argument, transposed), len(self.frozen_slots))
            bias = operands[2] if len(operands) == 3 else "None"
            expression = (f"_packed.linear({operands[0]}, {argument}, {transposed}, {slot}, "
                          f"{bias}, {epilogue!r})")
            dense = True
        elif callee == "matmul" and (epilogue or (
                low_precision and bias_vector and not self.pass_tensors)):
            # A linear layer in bf16/f16 on the CPU (host_runtime.linear): oneDNN's
            # linear, which adds the bias (and applies the epilogue) in its accumulator.
            # (Without either, torch.mm measured 2-5% faster.) On a GPU, where linear
            # calls addmm itself, a layer without an epilogue is `_addmm`: no Python
            # frames and transposes per call, and its result is planned (`out=`) and
            # viewed statically (GPT-2's QKV split).
            bias = operands[2] if len(operands) == 3 else "None"
            if operands[1] in self.transposed_from:  # the layer's [n, k] weight itself
                expression = (f"_linear_weight({operands[0]}, "
                              f"{self.transposed_from[operands[1]]}, {bias}, {epilogue!r})")
            else:
                expression = f"_linear({operands[0]}, {operands[1]}, {bias}, {epilogue!r})"
            dense = True
        elif (callee == "matmul" and not self.pass_tensors and not low_precision
              and (bias_vector or len(operands) == 2)
              and operands[1] in self.transposed_from and self.onednn_linear_pays(op)):
            # A large float32 linear layer on a CPU where oneDNN's linear is faster than
            # torch.mm (host_runtime.onednn_linear_pays): on the layer's [n, k] weight.
            bias = operands[2] if len(operands) == 3 else "None"
            expression = (f"_linear_weight({operands[0]}, "
                          f"{self.transposed_from[operands[1]]}, {bias}, None)")
            dense = True
        elif callee == "matmul" and (bias_vector or len(operands) == 2) \
                and self.tensor_core_product(op):
            # A large float32 product on the GPU's tensor cores, three TF32 products
            # (float32_products.py of the Triton runtime; cuBLAS where the operands'
            # layout at run time is not the one measured).
            bias = operands[2] if len(operands) == 3 else "None"
            kept = ""
            group = self.k_major_copies.get(self.key(op.results[0]))
            if group is not None:  # its weight from its group's copies, made once
                copies, position, weights = group
                if copies not in self.k_major_made:
                    self.k_major_made.add(copies)
                    self.add(f"_kernels.float32_products.k_major_copies("
                             f"{', '.join(weights)})", copies, fresh=True)
                operands[1] = f"{copies}[{position}]"
            elif self.frozen_k_by_n(operands[1]):
                slot = self.k_major_slots.setdefault(operands[1], len(self.k_major_slots))
                kept = f", kept={slot}"
            product = ("_kernels.float32_products",
                       f"{operands[0]}, {operands[1]}, {bias}{kept}")
            expression = f"{product[0]}({product[1]})"
            layout = (tuple(_shape(op.results[0])), torch.float32)
        elif callee in ("matmul", "batch_matmul"):
            mm, addmm = ("_mm", "_addmm") if callee == "matmul" else ("_bmm", "_baddbmm")
            product = (addmm, f"{operands[2]}, {operands[0]}, {operands[1]}") \
                if len(operands) == 3 else (mm, f"{operands[0]}, {operands[1]}")
            expression = f"{product[0]}({product[1]})"
            shape = _shape(op.results[0])
            if not any(_is_dynamic(size) for size in shape):
                layout = (shape, torch_dtype(
                    ir.RankedTensorType(op.results[0].type).element_type))
        elif callee == "conv2d":
            bias = operands[2] if len(operands) == 3 else "None"
            stride = _i64_array(op.attributes["strides"])
            padding = _i64_array(op.attributes["padding"])
            dilation = _i64_array(op.attributes["dilations"])
            groups = ir_int(op.attributes["groups"])
            # Whether this convolution runs channels-last is the compiler's choice for
            # the graph (its neighbouring kernels read and write that order).
            element = str(ir.RankedTensorType(op.operands[0].type).element_type)
            channels_last = element in self.channels_last_types
            arguments = (f"{operands[0]}, {operands[1]}, {bias}, {stride}, {padding}, "
                         f"{dilation}, {groups}")
            expression = f"_conv2d({arguments}, channels_last={channels_last})"
            contiguous = False  # follows the input's memory format
            if operands[1] in self.parameter_arguments and channels_last \
                    and not self.pass_tensors:
                # A parameter's filter: oneDNN's convolution on the filter kept packed
                # (CPU), checked against its bytes on every call unless frozen.
                slot = self.frozen_slots.setdefault((operands[1], False),
                                                    len(self.frozen_slots))
                checked = operands[1] not in self.frozen_arguments
                expression = (f"_packed.conv2d({slot}, {arguments}, checked={checked}, "
                              f"channels_last={channels_last})")
            if not self.pass_tensors:
                # On the CPU, conv2d returns its result in the layout asked for
                # (host_runtime.conv2d): static, so the kernels' permute of it to NHWC
                # is a `_view` and their `.contiguous()` of it is not made.
                shape = tuple(_shape(op.results[0]))
                if len(shape) == 4 and not any(_is_dynamic(size) for size in shape):
                    order = (0, 2, 3, 1) if channels_last else (0, 1, 2, 3)
                    in_memory = view_layouts.dense_strides([shape[i] for i in order])
                    strides = [0] * 4
                    for position, dimension in enumerate(order):
                        strides[dimension] = in_memory[position]
                    conv_layout = (shape, tuple(strides))
                    contiguous = not channels_last
        else:
            raise DynoCompileError("wrapper", f"unknown library operation {callee}")
        name = self.define(op.results[0], contiguous=contiguous)
        if padded_rows:
            self.rows_padded.add(name)
        statement = self.add(expression, name, fresh=fresh)
        if layout is not None:  # a workspace slot can hold it (`out=`)
            function, arguments = product
            statement.layout = layout
            statement.into_slot = lambda slot: f"{name} = {function}({arguments}, out={slot})"
            self.layouts[name] = (name, layout[0], view_layouts.dense_strides(layout[0]), 0)
        elif conv_layout is not None:
            self.layouts[name] = (name, *conv_layout, 0)
        elif dense and not any(_is_dynamic(size) for size in _shape(op.results[0])):
            # (oneDNN's linear, torch.mm and addmm return dense results: the reshapes and
            # permutes of attention heads after a projection become one `_view` each,
            # not two Python calls through the dispatcher; Swin bf16 had 55 of them.)
            shape = tuple(_shape(op.results[0]))
            self.layouts[name] = (name, shape, view_layouts.dense_strides(shape), 0)
        self.extern_calls += 1

    @staticmethod
    def onednn_linear_pays(op) -> bool:
        """Whether the static product `op` runs faster as oneDNN's linear here
        (host_runtime.onednn_linear_pays)."""
        from .. import ir

        (m, k), n = _shape(op.operands[0]), _shape(op.results[0])[-1]
        if any(_is_dynamic(size) for size in (m, k, n)):
            return False
        dtype = torch_dtype(ir.RankedTensorType(op.results[0].type).element_type)
        return onednn_linear_pays(dtype, m, k, n)

    def tensor_core_product(self, op) -> bool:
        """Whether the matmul `op` is a static float32 product that runs on the tensor
        cores (host_runtime.tensor_core_float32_product), on the Triton target asked to."""
        from .. import ir

        if not (self.pass_tensors and self.tensor_core_float32):
            return False
        a_shape, result_shape = _shape(op.operands[0]), _shape(op.results[0])
        if len(a_shape) != 2 or any(_is_dynamic(size) for size in (*a_shape, *result_shape)):
            return False
        if torch_dtype(ir.RankedTensorType(op.results[0].type).element_type) != torch.float32:
            return False
        # B a transpose (a linear layer's [n, k] weight): K-major, as measured; or a
        # frozen weight stored [k, n] (GPT-2's Conv1D weights, `freezing`), of which the
        # runtime keeps a K-major copy. Any other B (stored [k, n] as far as the graph
        # says) is copied K-major in each call, which pays from enough rows of A.
        b = self.name(op.operands[1])
        copies_b = not (b in self.transposed_from or self.frozen_k_by_n(b))
        return tensor_core_float32_product(*a_shape, result_shape[1], copies_b=copies_b)

    def group_k_major_copies(self, block):
        """Groups the tensor-core products whose weight is an argument of the graph
        stored [k, n] (GPT-2's Conv1D without freezing), in order, K_MAJOR_COPIES_PER_GROUP
        weights to a group (a layer's four): the first product of a group makes the
        K-major copies of all its weights in one launch (Float32Products.k_major_copies),
        not one copy kernel per product (GPT-2 124M: 48 launches per call -> 12)."""
        arguments = {self.key(argument) for argument in block.arguments}
        products = []  # (the product's result key, its weight's name)
        for op in block.operations:
            op = op.operation
            if op.name != "dyno.contraction" or "epilogue" in op.attributes or \
                    str(op.attributes["name"]).strip('"') != "matmul":
                continue
            weight = op.operands[1]
            operands = len(op.operands)
            if (operands == 2 or (operands == 3 and len(_shape(op.operands[2])) == 1)) \
                    and self.key(weight) in arguments and len(_shape(weight)) == 2 \
                    and not self.frozen_k_by_n(self.name(weight)) \
                    and self.tensor_core_product(op):
                products.append((self.key(op.results[0]), self.name(weight)))
        weights = list(dict.fromkeys(weight for _, weight in products))
        groups = {}
        for index, weight in enumerate(weights):
            group = index // K_MAJOR_COPIES_PER_GROUP
            members = tuple(weights[group * K_MAJOR_COPIES_PER_GROUP:
                                    (group + 1) * K_MAJOR_COPIES_PER_GROUP])
            groups[weight] = (f"kmajor{group}", members.index(weight), members)
        for result, weight in products:
            self.k_major_copies[result] = groups[weight]

    def frozen_k_by_n(self, name: str) -> bool:
        """Whether `name` is a frozen weight stored [k, n] (not a transpose of one)."""
        return name in self.frozen_weights and not self.frozen_weights[name][1]

    def product_padding(self, op):
        """(K, N) padding of a static bf16/f16 matmul whose sizes make cuBLAS slow, on
        the Triton target (GPUs): host_runtime.product_padding; (0, 0) elsewhere."""
        from .. import ir

        a_shape, result_shape = _shape(op.operands[0]), _shape(op.results[0])
        if not self.pass_tensors or len(a_shape) != 2 or any(
                _is_dynamic(size) for size in (*a_shape, *result_shape)):
            return 0, 0
        dtype = torch_dtype(ir.RankedTensorType(op.results[0].type).element_type)
        return product_padding(a_shape[0], a_shape[1], result_shape[1], dtype,
                               kept=self.name(op.operands[1]) in self.frozen_weights)

    def emit_library_call(self, op):
        """torch.ops.aten.<op>.<overload>(...) with the call's tensors and constants."""
        from .. import ir

        callee = ir_string(op.attributes["name"])
        operands = iter(self.name(v) for v in op.operands)
        arguments = [_library_argument(a, operands)
                     for a in ir.ArrayAttr(op.attributes["arguments"])]
        # Keyword-only parameters by name, as the operator's schema declares them.
        overload = torch.ops
        for part in callee.split("."):
            overload = getattr(overload, part)
        parameters = overload._schema.arguments
        if len(parameters) < len(arguments):
            raise DynoCompileError("wrapper", f"{callee} takes {len(parameters)} arguments, "
                                   f"the call has {len(arguments)}")
        arguments = [f"{p.name}={a}" if p.kwarg_only else a
                     for p, a in zip(parameters, arguments)]
        runner = "_collective" if callee.startswith(COLLECTIVE_NAMESPACE + ".") \
            else "_library_call"
        call = f"{runner}(torch.ops.{callee}, {', '.join(arguments)})"
        counters.record_library_call(callee)
        self.library_calls.append(callee)
        results = [self.define(result) for result in op.results]
        self.add(call, *results, collective=runner == "_collective")
        self.extern_calls += 1

    def emit_slice(self, op):
        static = [_i64_array(op.attributes[f"static_{part}"])
                  for part in ("offsets", "sizes", "strides")]
        dynamic = iter([self.name(v) for v in list(op.operands)[1:]])
        offsets, sizes, strides = [
            [next(dynamic) if _is_dynamic(v) else v for v in values] for values in static]
        if any(isinstance(v, int) and v <= 0 for v in strides):
            raise DynoCompileError("wrapper", "a host slice needs positive strides")
        result_shape = list(_shape(op.results[0]))
        # Rank-reducing slices drop unit dimensions: index those with an integer.
        indices, kept, keeps = [], 0, []
        for offset, size, stride in zip(offsets, sizes, strides):
            keeps.append(kept < len(result_shape) and (
                size == result_shape[kept] or not isinstance(size, int)))
            if keeps[-1]:
                if isinstance(size, int) and isinstance(offset, int) and isinstance(stride, int):
                    end = offset + (size - 1) * stride + 1 if size else offset
                else:
                    end = f"{offset} + ({size} - 1) * {stride} + 1 if {size} else {offset}"
                    end = f"({end})"
                indices.append(f"{offset}:{end}:{stride}")
                kept += 1
            elif size == 1:
                indices.append(str(offset))
            else:
                raise DynoCompileError("wrapper", "unexpected rank-reducing slice")
        source = self.name(op.operands[0])
        if all(isinstance(v, int) for v in offsets + sizes + strides) and \
                self.emit_static_view(op, source, lambda layout: view_layouts.sliced(
                    layout, offsets, sizes, strides, keeps)):
            # (GPT-2's fused QKV: each slice, its heads' reshape and permute in one call)
            self.views.append(self.names[self.key(op.results[0])])
            return
        self.add(f"{source}[{', '.join(indices)}]", self.define(op.results[0]))

    def emit_return(self, op, outputs):
        values = iter([self.name(v) for v in op.operands])
        tensors = [expected for expected in outputs if isinstance(expected, torch.Tensor)]
        if len(op.operands) != len(tensors):
            raise DynoCompileError(
                "wrapper", f"graph returns {len(op.operands)} tensors, FX expects {len(tensors)}")
        results = []
        for expected in outputs:
            if expected is None:
                results.append("None")
                continue
            if not isinstance(expected, torch.Tensor):  # a size (frontend.SizeOutput)
                results.append(expected.expression)
                continue
            name = next(values)
            stride = expected.stride()
            if all(isinstance(s, int) for s in stride):
                padded = ", padded_rows=True" if name in self.rows_padded else ""
                results.append(f"_as_eager({name}, {tuple(stride)}, {expected.dtype}{padded})")
            else:  # symbolic strides: eager's dimension order, applied to this call's sizes
                order = _stride_order(stride)
                results.append(f"_as_eager({name}, _dense_strides({name}.shape, {order}), "
                               f"{expected.dtype})")
        self.add(f"return [{', '.join(results)}]", returns=True)


def _stride_order(stride) -> Tuple[int, ...]:
    """Dimensions from outermost to innermost, by the example's (hinted) strides."""
    def hint(value):
        if isinstance(value, int):
            return value
        node = value.node
        if node.hint is not None:
            return int(node.hint)
        return int(node.shape_env.size_hint(node.expr))

    hints = [hint(s) for s in stride]
    return tuple(sorted(range(len(hints)), key=lambda i: (-hints[i], i)))
