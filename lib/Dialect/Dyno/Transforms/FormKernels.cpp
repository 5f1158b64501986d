//===- FormKernels.cpp - Partition graphs into kernels ----------*- C++ -*-===//
//
// Turns each graph function into a host schedule of dyno.launch (outlined kernels),
// dyno.contraction (library calls) and zero-copy view ops. See Passes.td for the rules.
//
//===----------------------------------------------------------------------===//
#include "dyno/Dialect/Dyno/IR/DynoOps.h"
#include "dyno/Dialect/Dyno/Transforms/KernelOutlining.h"
#include "dyno/Dialect/Dyno/Transforms/LibraryCalls.h"
#include "dyno/Dialect/Dyno/Transforms/LowPrecisionFloats.h"
#include "dyno/Dialect/Dyno/Transforms/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

#include <set>

#define DEBUG_TYPE "dyno-form-kernels"

namespace mlir::dyno {
#define GEN_PASS_DEF_DYNOFORMKERNELS
#include "dyno/Dialect/Dyno/Transforms/Passes.h.inc"
} // namespace mlir::dyno

using namespace mlir;
using namespace mlir::dyno;

//===----------------------------------------------------------------------===//
// Grouping
//===----------------------------------------------------------------------===//

/// Ops cloned into every kernel that uses them rather than computed once.
static bool isRematerializable(Operation *op) {
  if (isa<tensor::EmptyOp, arith::ConstantOp>(op))
    return true;
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return matchPattern(fill.getInputs()[0], m_Constant());
  // Scalar computations (e.g. an index or a tensor.extract) are cheap to repeat.
  return isMemoryEffectFree(op) && op->getNumRegions() == 0 && op->getNumResults() > 0 &&
         llvm::none_of(op->getResultTypes(), [](Type t) { return isa<ShapedType>(t); });
}

/// A result of a library call (dyno.contraction or dyno.library_call), made on the host.
static bool isLibraryResult(Value value) {
  return value.getDefiningOp<ContractionOp>() || value.getDefiningOp<LibraryCallOp>();
}

/// A size of a graph input or of a library call's result: computed on the host and
/// passed as an index, so that a kernel need not take the whole tensor for it.
static bool isHostSize(Operation *op) {
  auto dim = dyn_cast<tensor::DimOp>(op);
  if (!dim)
    return false;
  Value source = dim.getSource();
  return isa<BlockArgument>(source) || isLibraryResult(source);
}

/// A reshape with dynamic sizes of a graph input or a library call's result: a free
/// view on the host, and kernels then read a plain tensor of dynamic sizes.
static bool isDynamicReshapeOfInput(Operation *op) {
  if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::ReshapeOp>(op) ||
      cast<RankedTensorType>(op->getResult(0).getType()).hasStaticShape())
    return false;
  Value source = op->getOperand(0);
  return isa<BlockArgument>(source) || isLibraryResult(source);
}

/// Ops that the runtime performs as zero-copy views when they stay on the host.
static bool isViewOp(Operation *op) {
  if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op))
    return true;
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
    return slice.hasUnitStride() || llvm::all_of(slice.getStaticStrides(), [](int64_t s) {
             return !ShapedType::isDynamic(s) && s > 0;
           });
  return isa<linalg::TransposeOp, tensor::ReshapeOp>(op);
}

namespace {
struct UserGroups {
  std::set<int> groups;
  bool host = false;
};

class KernelFormer {
public:
  KernelFormer(func::FuncOp func, ModuleOp kernels, unsigned &counter,
               bool convolutionBiasInLibrary)
      : func(func), kernels(kernels), counter(counter),
        convolutionBiasInLibrary(convolutionBiasInLibrary) {}

  LogicalResult run() {
    formLibraryCalls(func, convolutionBiasInLibrary);
    eraseDeadPureOps();
    hoistShapeChecks();
    assignGroups();
    for (SmallVector<Operation *> &members : groups) {
      llvm::sort(members, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
      if (failed(outline(members)))
        return failure();
    }
    eraseDeadPureOps();
    return success();
  }

private:
  /// Moves each host shape check (`cf.assert` on sizes of the graph's inputs) with the
  /// size arithmetic it needs to the start of the graph: a check must run before any
  /// kernel relies on what it checks, whatever order fusion left the ops in.
  void hoistShapeChecks() {
    Block &body = func.getBody().front();
    Operation *insertionPoint = &body.front();
    DenseSet<Operation *> moved; // already at the top, before later checks' ops
    for (auto check : llvm::make_early_inc_range(body.getOps<cf::AssertOp>())) {
      SetVector<Operation *> slice;
      bool movable = true;
      std::function<void(Value)> collect = [&](Value value) {
        Operation *def = value.getDefiningOp();
        if (!def || slice.contains(def) || moved.contains(def) || !movable)
          return;
        bool sizeOfInput = isa<tensor::DimOp>(def) && isa<BlockArgument>(def->getOperand(0));
        if (!sizeOfInput && (!isMemoryEffectFree(def) || def->getNumRegions() ||
                             llvm::any_of(def->getOperandTypes(), llvm::IsaPred<ShapedType>) ||
                             llvm::any_of(def->getResultTypes(), llvm::IsaPred<ShapedType>))) {
          movable = false;
          return;
        }
        for (Value operand : def->getOperands())
          if (!isa<ShapedType>(operand.getType()))
            collect(operand);
        slice.insert(def);
      };
      collect(check.getArg());
      if (!movable)
        continue;
      if (llvm::is_contained(slice, insertionPoint) || check == insertionPoint)
        continue; // already first
      for (Operation *op : slice) {
        op->moveBefore(insertionPoint);
        moved.insert(op);
      }
      check->moveBefore(insertionPoint);
      moved.insert(check);
    }
  }

  /// A scalar read from a computed tensor only for host assertions
  /// (dyno-hoist-kernel-assertions): stays on the host.
  static bool isHostCheckedValue(Operation *op) {
    auto extract = dyn_cast<tensor::ExtractOp>(op);
    return extract && extract.getIndices().empty() && !op->use_empty() &&
           llvm::all_of(op->getUsers(), llvm::IsaPred<cf::AssertOp>);
  }

  void eraseDeadPureOps() {
    Block &body = func.getBody().front();
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
      if (op.use_empty() && isMemoryEffectFree(&op) && !op.hasTrait<OpTrait::IsTerminator>())
        op.erase();
  }

  UserGroups userGroupsOf(Operation *op) {
    UserGroups result;
    for (Operation *user : op->getUsers()) {
      if (auto it = rematUsers.find(user); it != rematUsers.end()) {
        result.groups.insert(it->second.groups.begin(), it->second.groups.end());
        result.host |= it->second.host;
      } else if (auto it = groupOf.find(user); it != groupOf.end()) {
        result.groups.insert(it->second);
      } else {
        result.host = true;
      }
    }
    return result;
  }

  void assignGroups() {
    Block &body = func.getBody().front();
    for (Operation &opRef : llvm::reverse(body)) {
      Operation *op = &opRef;
      // Shape checks (torch-mlir's `cf.assert`s on sizes) stay on the host, where a
      // failure raises an error instead of aborting in a kernel.
      if (op->hasTrait<OpTrait::IsTerminator>() ||
          isa<ContractionOp, LibraryCallOp, cf::AssertOp>(op) ||
          isHostSize(op) || isHostCheckedValue(op))
        continue;
      // The shape of a reshape that stays on the host: a tuple of host integers.
      if (isa<tensor::FromElementsOp>(op) &&
          llvm::all_of(op->getUsers(), [&](Operation *user) {
            return isa<tensor::ReshapeOp>(user) && !groupOf.count(user);
          }))
        continue;
      UserGroups users = userGroupsOf(op);
      bool scalarOnly = llvm::none_of(op->getResultTypes(),
                                      [](Type t) { return isa<ShapedType>(t); });
      // An empty tensor on the host is only ever a placeholder (the `outs` of a view).
      if (isRematerializable(op) &&
          (!users.host || scalarOnly || isa<tensor::EmptyOp>(op))) {
        rematUsers[op] = users;
        continue;
      }
      bool oneKernelUses = !users.host && users.groups.size() == 1;
      if (isViewOp(op) && (!oneKernelUses || isDynamicReshapeOfInput(op)))
        continue; // stays on the host as a view
      if (oneKernelUses) {
        int group = *users.groups.begin();
        groupOf[op] = group;
        groups[group].push_back(op);
        continue;
      }
      groupOf[op] = groups.size();
      groups.push_back({op});
    }
  }

  bool isInternalUse(Operation *user, int group) {
    if (auto it = groupOf.find(user); it != groupOf.end())
      return it->second == group;
    if (auto it = rematUsers.find(user); it != rematUsers.end())
      return !it->second.host && it->second.groups.size() == 1 &&
             *it->second.groups.begin() == group;
    return false;
  }

  LogicalResult outline(ArrayRef<Operation *> members) {
    MLIRContext *ctx = func.getContext();
    Operation *root = members.back();
    int group = groupOf.lookup(root);
    std::string name = "kernel_" + std::to_string(counter++);

    OpBuilder moduleBuilder = OpBuilder::atBlockEnd(kernels.getBody());
    auto kernel = func::FuncOp::create(moduleBuilder, root->getLoc(), name,
                                       FunctionType::get(ctx, {}, {}));
    Block *entry = kernel.addEntryBlock();
    OpBuilder builder = OpBuilder::atBlockEnd(entry);
    IRMapping mapping;
    SmallVector<Value> launchArgs;
    cloneIntoKernel(members, entry, mapping, launchArgs,
                    [&](Operation *def) { return rematUsers.count(def) != 0; });
    builder.setInsertionPointToEnd(entry);

    SmallVector<Value> exported;
    for (Operation *op : members)
      for (Value result : op->getResults())
        if (llvm::any_of(result.getUsers(),
                         [&](Operation *user) { return !isInternalUse(user, group); }))
          exported.push_back(result);

    SmallVector<Value> returned;
    SmallVector<Type> resultTypes;
    for (Value value : exported) {
      auto type = dyn_cast<RankedTensorType>(value.getType());
      if (!type)
        return root->emitError("a kernel result must be a ranked tensor, got ")
               << value.getType();
      returned.push_back(mapping.lookup(value));
      resultTypes.push_back(type);
    }
    for (Value arg : launchArgs)
      if (!isa<RankedTensorType, IntegerType, IndexType>(arg.getType()))
        return root->emitError("a kernel argument must be a ranked tensor, an integer or "
                               "an index, got ")
               << arg.getType();
    func::ReturnOp::create(builder, root->getLoc(), returned);
    kernel.setFunctionType(FunctionType::get(ctx, entry->getArgumentTypes(), resultTypes));
    // Kernel inputs are the caller's tensors (graph inputs, parameters): never written.
    for (unsigned i = 0, e = kernel.getNumArguments(); i < e; ++i)
      if (isa<TensorType>(kernel.getArgument(i).getType()))
        kernel.setArgAttr(i, "bufferization.writable", BoolAttr::get(ctx, false));

    OpBuilder hostBuilder(root);
    // Host values for the results' dynamic sizes (the runtime allocates from them).
    SmallVector<Value> dims = resolvedDynamicSizes(hostBuilder, exported);
    // A size that still needs a value the kernel computes is data-dependent.
    SetVector<Operation *> computed(members.begin(), members.end());
    for (unsigned i = 0; i < computed.size(); ++i)
      for (Operation *user : computed[i]->getUsers())
        computed.insert(user);
    for (Value dim : dims)
      if (Operation *def = dim.getDefiningOp(); def && computed.contains(def))
        return root->emitError("the size of a kernel result depends on values the kernel "
                               "computes (a data-dependent shape)");
    auto callee = SymbolRefAttr::get(ctx, kKernelsModuleName,
                                     {FlatSymbolRefAttr::get(ctx, name)});
    auto launch =
        LaunchOp::create(hostBuilder, root->getLoc(), resultTypes, callee, launchArgs, dims,
                         /*initial_values=*/DenseI64ArrayAttr());
    for (auto [value, replacement] : llvm::zip(exported, launch.getResults()))
      value.replaceUsesWithIf(replacement, [&](OpOperand &use) {
        return !isInternalUse(use.getOwner(), group);
      });
    // Everything left using the members is internal to the kernel: the members and the
    // host copies of rematerialized ops computed from them. Erase all of it.
    SetVector<Operation *> dead(members.begin(), members.end());
    for (unsigned i = 0; i < dead.size(); ++i)
      for (Operation *user : dead[i]->getUsers())
        dead.insert(user);
    // Forget them before erasing: new ops may reuse their addresses.
    for (Operation *op : dead) {
      groupOf.erase(op);
      rematUsers.erase(op);
      op->dropAllUses();
    }
    for (Operation *op : dead)
      op->erase();
    return success();
  }

  func::FuncOp func;
  ModuleOp kernels;
  unsigned &counter;
  bool convolutionBiasInLibrary;
  DenseMap<Operation *, int> groupOf;
  DenseMap<Operation *, UserGroups> rematUsers;
  SmallVector<SmallVector<Operation *>> groups;
};

struct FormKernelsPass : mlir::dyno::impl::DynoFormKernelsBase<FormKernelsPass> {
  using DynoFormKernelsBase::DynoFormKernelsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> graphs(module.getOps<func::FuncOp>());
    if (graphs.empty())
      return;
    ModuleOp kernels;
    for (auto nested : module.getOps<ModuleOp>())
      if (nested.getSymName() == kKernelsModuleName)
        kernels = nested;
    if (!kernels) {
      OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
      kernels = ModuleOp::create(builder, module.getLoc(), kKernelsModuleName);
    }
    unsigned counter = std::distance(kernels.getOps<func::FuncOp>().begin(),
                                     kernels.getOps<func::FuncOp>().end());
    for (func::FuncOp graph : graphs) {
      if (graph.isExternal())
        continue;
      if (!llvm::hasSingleElement(graph.getBody())) {
        graph.emitError("dyno-form-kernels expects a single-block graph function");
        return signalPassFailure();
      }
      if (failed(KernelFormer(graph, kernels, counter, convolutionBiasInLibrary).run()))
        return signalPassFailure();
    }
  }
};
} // namespace
