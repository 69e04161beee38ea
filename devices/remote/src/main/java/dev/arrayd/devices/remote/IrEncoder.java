package dev.arrayd.devices.remote;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.ir.Expr;
import dev.arrayd.devices.api.ir.IrKernel;
import dev.arrayd.devices.api.ir.IrParam;
import dev.arrayd.devices.api.ir.IrType;
import dev.arrayd.devices.api.ir.Stmt;
import dev.arrayd.proto.v1.DataType;
import dev.arrayd.proto.v1.IrBinary;
import dev.arrayd.proto.v1.IrBuiltin;
import dev.arrayd.proto.v1.IrConst;
import dev.arrayd.proto.v1.IrExpr;
import dev.arrayd.proto.v1.IrStmt;
import dev.arrayd.proto.v1.IrUnary;
import java.util.List;

/**
 * The wire form of an IR kernel this daemon has already decoded and validated: what it sends a peer to compile
 * (the inverse of the server's decoder; a kernel round-trips unchanged).
 */
final class IrEncoder {

    private IrEncoder() {}

    static dev.arrayd.proto.v1.IrKernel kernel(IrKernel k) {
        var b = dev.arrayd.proto.v1.IrKernel.newBuilder().setName(k.name()).setGridDims(k.gridDims())
                .addAllLocalSize(k.localSize()).setRelaxedMath(k.relaxedMath());
        for (IrParam p : k.params()) {
            b.addParams(param(p));
        }
        for (Stmt s : k.body()) {
            b.addBody(stmt(s));
        }
        return b.build();
    }

    private static dev.arrayd.proto.v1.IrParam param(IrParam p) {
        var b = dev.arrayd.proto.v1.IrParam.newBuilder();
        switch (p) {
            case IrParam.Buffer buf -> {
                var pb = dev.arrayd.proto.v1.IrBufferParam.newBuilder().setDtype(dtype(buf.dtype()))
                        .setAccess(access(buf.access()));
                if (buf.minExtent() != null) {
                    pb.setMinExtent(expr(buf.minExtent()));
                }
                b.setName(buf.name()).setBuffer(pb);
            }
            case IrParam.Scalar sc -> {
                var sb = dev.arrayd.proto.v1.IrScalarParam.newBuilder().setDtype(dtype(sc.dtype()));
                if (sc.min() != null) {
                    sb.setMin(sc.min());
                }
                if (sc.max() != null) {
                    sb.setMax(sc.max());
                }
                b.setName(sc.name()).setScalar(sb);
            }
        }
        return b.build();
    }

    private static IrStmt stmt(Stmt s) {
        var b = IrStmt.newBuilder();
        switch (s) {
            case Stmt.Let l -> b.setLet(dev.arrayd.proto.v1.IrLet.newBuilder().setName(l.name()).setValue(expr(l.value()))
                    .setMutable(l.mutable()));
            case Stmt.Assign a -> b.setAssign(dev.arrayd.proto.v1.IrAssign.newBuilder().setName(a.name())
                    .setValue(expr(a.value())));
            case Stmt.Store st -> b.setStore(dev.arrayd.proto.v1.IrStore.newBuilder().setArray(st.array())
                    .setIndex(expr(st.index())).setValue(expr(st.value())));
            case Stmt.Accumulate a -> {
                var ab = dev.arrayd.proto.v1.IrAccumulate.newBuilder().setTarget(a.target()).setValue(expr(a.value()))
                        .setOp(switch (a.op()) {
                            case ADD -> dev.arrayd.proto.v1.IrAccumulate.Op.OP_ADD;
                            case MAX -> dev.arrayd.proto.v1.IrAccumulate.Op.OP_MAX;
                            case MIN -> dev.arrayd.proto.v1.IrAccumulate.Op.OP_MIN;
                        });
                if (a.index() != null) {
                    ab.setIndex(expr(a.index()));
                }
                b.setAccumulate(ab);
            }
            case Stmt.If i -> b.setBranch(dev.arrayd.proto.v1.IrIf.newBuilder().setCondition(expr(i.condition()))
                    .addAllThenBody(block(i.thenBody())).addAllElseBody(block(i.elseBody())));
            case Stmt.For f -> b.setLoop(dev.arrayd.proto.v1.IrFor.newBuilder().setVar(f.var()).setStart(expr(f.start()))
                    .setEnd(expr(f.end())).setStep(f.step()).addAllBody(block(f.body())));
            case Stmt.LocalArray la -> b.setLocalArray(dev.arrayd.proto.v1.IrLocalArray.newBuilder().setName(la.name())
                    .setDtype(dtype(la.dtype())).setSize(la.size()));
            case Stmt.Barrier bar -> b.setBarrier(dev.arrayd.proto.v1.IrBarrier.getDefaultInstance());
        }
        return b.build();
    }

    private static List<IrStmt> block(List<Stmt> body) {
        return body.stream().map(IrEncoder::stmt).toList();
    }

    static IrExpr expr(Expr e) {
        var b = IrExpr.newBuilder();
        switch (e) {
            case Expr.Const c -> b.setConstant(constant(c));
            case Expr.Param p -> b.setParam(p.name());
            case Expr.Var v -> b.setVar(v.name());
            case Expr.Builtin bi -> b.setBuiltin(IrBuiltin.newBuilder().setDim(bi.dim())
                    .setKind(IrBuiltin.Kind.valueOf("KIND_" + bi.kind().name())));
            case Expr.Load l -> b.setLoad(dev.arrayd.proto.v1.IrLoad.newBuilder().setArray(l.array()).setIndex(expr(l.index())));
            case Expr.Unary u -> b.setUnary(IrUnary.newBuilder().setOp(IrUnary.Op.valueOf("OP_" + u.op().name()))
                    .setOperand(expr(u.operand())));
            case Expr.Binary bin -> b.setBinary(IrBinary.newBuilder().setOp(IrBinary.Op.valueOf("OP_" + bin.op().name()))
                    .setLeft(expr(bin.left())).setRight(expr(bin.right())));
            case Expr.Select s -> b.setSelect(dev.arrayd.proto.v1.IrSelect.newBuilder().setCondition(expr(s.condition()))
                    .setIfTrue(expr(s.ifTrue())).setIfFalse(expr(s.ifFalse())));
            case Expr.Cast c -> {
                var cb = dev.arrayd.proto.v1.IrCast.newBuilder().setOperand(expr(c.operand()));
                if (c.to() == IrType.BOOL) {
                    cb.setToBool(true);
                } else {
                    cb.setDtype(DataType.valueOf("DATA_TYPE_" + c.to().name()));
                }
                b.setCast(cb);
            }
            case Expr.Fma f -> b.setFma(dev.arrayd.proto.v1.IrFma.newBuilder().setA(expr(f.a())).setB(expr(f.b()))
                    .setC(expr(f.c())));
        }
        return b.build();
    }

    private static IrConst constant(Expr.Const c) {
        var b = IrConst.newBuilder();
        long v = c.bits();
        switch (c.type()) {
            case BOOL -> b.setBool(v != 0);
            case U8 -> b.setU8((int) v);
            case I32 -> b.setI32((int) v);
            case I64 -> b.setI64(v);
            case F32 -> b.setF32(Float.intBitsToFloat((int) v));
            case F64 -> b.setF64(Double.longBitsToDouble(v));
        }
        return b.build();
    }

    static DataType dtype(DType d) {
        return DataType.valueOf("DATA_TYPE_" + d.name());
    }

    private static dev.arrayd.proto.v1.Access access(Access a) {
        return dev.arrayd.proto.v1.Access.valueOf("ACCESS_" + a.name());
    }
}
