package dev.arrayd.client;

import dev.arrayd.proto.v1.IrAccumulate;
import dev.arrayd.proto.v1.IrAssign;
import dev.arrayd.proto.v1.IrBarrier;
import dev.arrayd.proto.v1.IrFor;
import dev.arrayd.proto.v1.IrIf;
import dev.arrayd.proto.v1.IrLet;
import dev.arrayd.proto.v1.IrLocalArray;
import dev.arrayd.proto.v1.IrStmt;
import dev.arrayd.proto.v1.IrStore;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/** Collects the statements of a block in order; nested blocks are filled by lambdas. */
public final class IrBlock {

    private final List<IrStmt> statements = new ArrayList<>();

    IrBlock() {}

    List<IrStmt> statements() {
        return List.copyOf(statements);
    }

    private IrBlock add(IrStmt.Builder s) {
        statements.add(s.build());
        return this;
    }

    /** {@code let name = value}; returns the variable. */
    public IrExpr let(String name, IrExpr value) {
        add(IrStmt.newBuilder().setLet(IrLet.newBuilder().setName(name).setValue(value.toProto())));
        return Ir.var(name);
    }

    /** A variable that {@link #assign} and {@link #accumulate} may change. */
    public IrExpr var(String name, IrExpr initial) {
        add(IrStmt.newBuilder().setLet(IrLet.newBuilder().setName(name).setValue(initial.toProto()).setMutable(true)));
        return Ir.var(name);
    }

    public IrBlock assign(String name, IrExpr value) {
        return add(IrStmt.newBuilder().setAssign(IrAssign.newBuilder().setName(name).setValue(value.toProto())));
    }

    /** {@code array[index] = value}. */
    public IrBlock store(String array, IrExpr index, IrExpr value) {
        return add(IrStmt.newBuilder().setStore(IrStore.newBuilder().setArray(array).setIndex(index.toProto())
                .setValue(value.toProto())));
    }

    /** {@code array[index] op= value}. */
    public IrBlock accumulate(String array, IrExpr index, Accumulate op, IrExpr value) {
        return add(IrStmt.newBuilder().setAccumulate(IrAccumulate.newBuilder().setTarget(array).setIndex(index.toProto())
                .setOp(op.proto).setValue(value.toProto())));
    }

    /** {@code variable op= value} for a variable declared with {@link #var}. */
    public IrBlock accumulate(String variable, Accumulate op, IrExpr value) {
        return add(IrStmt.newBuilder().setAccumulate(IrAccumulate.newBuilder().setTarget(variable).setOp(op.proto)
                .setValue(value.toProto())));
    }

    /** {@code if (condition) then}. */
    public IrBlock when(IrExpr condition, Consumer<IrBlock> then) {
        return when(condition, then, b -> { });
    }

    /** {@code if (condition) then else otherwise}. */
    public IrBlock when(IrExpr condition, Consumer<IrBlock> then, Consumer<IrBlock> otherwise) {
        IrBlock t = new IrBlock();
        then.accept(t);
        IrBlock e = new IrBlock();
        otherwise.accept(e);
        return add(IrStmt.newBuilder().setBranch(IrIf.newBuilder().setCondition(condition.toProto())
                .addAllThenBody(t.statements).addAllElseBody(e.statements)));
    }

    /** {@code for (var = start; var < end; var++) body}; the body gets the block and the loop variable. */
    public IrBlock loop(String var, IrExpr start, IrExpr end, BiConsumer<IrBlock, IrExpr> body) {
        return loop(var, start, end, 1, body);
    }

    public IrBlock loop(String var, IrExpr start, IrExpr end, long step, BiConsumer<IrBlock, IrExpr> body) {
        IrBlock b = new IrBlock();
        body.accept(b, Ir.var(var));
        return add(IrStmt.newBuilder().setLoop(IrFor.newBuilder().setVar(var).setStart(start.toProto())
                .setEnd(end.toProto()).setStep(step).addAllBody(b.statements)));
    }

    /** A work-group local array (top level only; the kernel needs a local size). */
    public IrBlock localArray(String name, DType dtype, long size) {
        return add(IrStmt.newBuilder().setLocalArray(IrLocalArray.newBuilder().setName(name)
                .setDtype(Protos.dtype(dtype)).setSize(size)));
    }

    public IrBlock barrier() {
        return add(IrStmt.newBuilder().setBarrier(IrBarrier.getDefaultInstance()));
    }

    /** Accumulation operators. */
    public enum Accumulate {
        ADD(IrAccumulate.Op.OP_ADD),
        MAX(IrAccumulate.Op.OP_MAX),
        MIN(IrAccumulate.Op.OP_MIN);

        private final IrAccumulate.Op proto;

        Accumulate(IrAccumulate.Op proto) {
            this.proto = proto;
        }
    }
}
