package dev.arrayd.server;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ir.Expr;
import dev.arrayd.devices.api.ir.IrKernel;
import dev.arrayd.devices.api.ir.IrModule;
import dev.arrayd.devices.api.ir.IrParam;
import dev.arrayd.devices.api.ir.IrType;
import dev.arrayd.devices.api.ir.Stmt;
import dev.arrayd.proto.v1.IrExpr;
import dev.arrayd.proto.v1.IrStmt;

import java.util.ArrayList;
import java.util.List;

/**
 * arrayd.v1 IR messages to the IR model. Structural only: an unset node becomes null (or an unset
 * operator), which {@link dev.arrayd.devices.api.ir.IrValidator} then reports with its path; only
 * what the model cannot hold at all (a parameter without dtype) is refused here, with the same paths.
 */
final class IrCodec {

    private IrCodec() {}

    static IrModule module(dev.arrayd.proto.v1.IrModule m, String at) {
        List<IrKernel> kernels = new ArrayList<>(m.getKernelsCount());
        for (int i = 0; i < m.getKernelsCount(); i++) {
            kernels.add(kernel(m.getKernels(i), at + ".kernels[" + i + "]"));
        }
        return new IrModule(kernels);
    }

    private static IrKernel kernel(dev.arrayd.proto.v1.IrKernel k, String at) {
        List<IrParam> params = new ArrayList<>();
        for (int i = 0; i < k.getParamsCount(); i++) {
            var p = k.getParams(i);
            String pat = at + ".params[" + i + "]";
            params.add(switch (p.getKindCase()) {
                case BUFFER -> new IrParam.Buffer(p.getName(), ProtoCodec.dtype(p.getBuffer().getDtype(), pat + ".buffer.dtype"),
                        ProtoCodec.access(p.getBuffer().getAccess(), pat + ".buffer.access"),
                        p.getBuffer().hasMinExtent() ? expr(p.getBuffer().getMinExtent()) : null);
                case SCALAR -> new IrParam.Scalar(p.getName(), ProtoCodec.dtype(p.getScalar().getDtype(), pat + ".scalar.dtype"),
                        p.getScalar().hasMin() ? p.getScalar().getMin() : null,
                        p.getScalar().hasMax() ? p.getScalar().getMax() : null);
                case KIND_NOT_SET -> throw ArraydException.invalid(pat + ": neither buffer nor scalar");
            });
        }
        return new IrKernel(k.getName(), params, k.getGridDims(), k.getLocalSizeList(), block(k.getBodyList()));
    }

    private static List<Stmt> block(List<IrStmt> body) {
        List<Stmt> out = new ArrayList<>(body.size());
        for (IrStmt s : body) {
            out.add(stmt(s));
        }
        return out;
    }

    private static Stmt stmt(IrStmt s) {
        return switch (s.getKindCase()) {
            case LET -> new Stmt.Let(s.getLet().getName(), expr(s.getLet().getValue(), s.getLet().hasValue()), s.getLet().getMutable());
            case ASSIGN -> new Stmt.Assign(s.getAssign().getName(), expr(s.getAssign().getValue(), s.getAssign().hasValue()));
            case STORE -> new Stmt.Store(s.getStore().getArray(), expr(s.getStore().getIndex(), s.getStore().hasIndex()),
                    expr(s.getStore().getValue(), s.getStore().hasValue()));
            case ACCUMULATE -> {
                var a = s.getAccumulate();
                Stmt.Accumulate.Op op = switch (a.getOp()) {
                    case ADD -> Stmt.Accumulate.Op.ADD;
                    case MAX -> Stmt.Accumulate.Op.MAX;
                    case MIN -> Stmt.Accumulate.Op.MIN;
                    case OP_UNSPECIFIED, UNRECOGNIZED -> null;
                };
                yield new Stmt.Accumulate(a.getTarget(), a.hasIndex() ? expr(a.getIndex()) : null, op,
                        expr(a.getValue(), a.hasValue()));
            }
            case BRANCH -> new Stmt.If(expr(s.getBranch().getCondition(), s.getBranch().hasCondition()),
                    block(s.getBranch().getThenBodyList()), block(s.getBranch().getElseBodyList()));
            case LOOP -> {
                var l = s.getLoop();
                yield new Stmt.For(l.getVar(), expr(l.getStart(), l.hasStart()), expr(l.getEnd(), l.hasEnd()),
                        l.getStep() == 0 ? 1 : l.getStep(), block(l.getBodyList()));
            }
            case LOCAL_ARRAY -> new Stmt.LocalArray(s.getLocalArray().getName(),
                    ProtoCodec.dtype(s.getLocalArray().getDtype(), "local_array.dtype"), s.getLocalArray().getSize());
            case BARRIER -> new Stmt.Barrier();
            case KIND_NOT_SET -> null;
        };
    }

    private static Expr expr(IrExpr e, boolean present) {
        return present ? expr(e) : null;
    }

    static Expr expr(IrExpr e) {
        return switch (e.getKindCase()) {
            case CONSTANT -> {
                var c = e.getConstant();
                yield switch (c.getValueCase()) {
                    case BOOL -> Expr.Const.bool(c.getBool());
                    case U8 -> new Expr.Const(IrType.U8, Integer.toUnsignedLong(c.getU8()));
                    case I32 -> Expr.Const.i32(c.getI32());
                    case I64 -> Expr.Const.i64(c.getI64());
                    case F32 -> Expr.Const.f32(c.getF32());
                    case F64 -> Expr.Const.f64(c.getF64());
                    case VALUE_NOT_SET -> new Expr.Const(null, 0);
                };
            }
            case PARAM -> new Expr.Param(e.getParam());
            case VAR -> new Expr.Var(e.getVar());
            case BUILTIN -> new Expr.Builtin(switch (e.getBuiltin().getKind()) {
                case GLOBAL_ID -> Expr.Builtin.Kind.GLOBAL_ID;
                case GLOBAL_SIZE -> Expr.Builtin.Kind.GLOBAL_SIZE;
                case LOCAL_ID -> Expr.Builtin.Kind.LOCAL_ID;
                case LOCAL_SIZE -> Expr.Builtin.Kind.LOCAL_SIZE;
                case GROUP_ID -> Expr.Builtin.Kind.GROUP_ID;
                case NUM_GROUPS -> Expr.Builtin.Kind.NUM_GROUPS;
                case KIND_UNSPECIFIED, UNRECOGNIZED -> null;
            }, e.getBuiltin().getDim());
            case LOAD -> new Expr.Load(e.getLoad().getArray(), expr(e.getLoad().getIndex(), e.getLoad().hasIndex()));
            case UNARY -> new Expr.Unary(e.getUnary().getOp() == dev.arrayd.proto.v1.IrUnary.Op.OP_UNSPECIFIED
                    || e.getUnary().getOp() == dev.arrayd.proto.v1.IrUnary.Op.UNRECOGNIZED ? null
                    : Expr.Unary.Op.valueOf(e.getUnary().getOp().name()), expr(e.getUnary().getOperand(), e.getUnary().hasOperand()));
            case BINARY -> new Expr.Binary(e.getBinary().getOp() == dev.arrayd.proto.v1.IrBinary.Op.OP_UNSPECIFIED
                    || e.getBinary().getOp() == dev.arrayd.proto.v1.IrBinary.Op.UNRECOGNIZED ? null
                    : Expr.Binary.Op.valueOf(e.getBinary().getOp().name()),
                    expr(e.getBinary().getLeft(), e.getBinary().hasLeft()), expr(e.getBinary().getRight(), e.getBinary().hasRight()));
            case SELECT -> new Expr.Select(expr(e.getSelect().getCondition(), e.getSelect().hasCondition()),
                    expr(e.getSelect().getIfTrue(), e.getSelect().hasIfTrue()),
                    expr(e.getSelect().getIfFalse(), e.getSelect().hasIfFalse()));
            case CAST -> {
                var c = e.getCast();
                IrType to = c.getToBool() ? IrType.BOOL
                        : c.getDtype() == dev.arrayd.proto.v1.DType.DTYPE_UNSPECIFIED ? null
                        : IrType.ofScalar(ProtoCodec.dtype(c.getDtype(), "cast.dtype"));
                yield new Expr.Cast(to, expr(c.getOperand(), c.hasOperand()));
            }
            case FMA -> new Expr.Fma(expr(e.getFma().getA(), e.getFma().hasA()), expr(e.getFma().getB(), e.getFma().hasB()),
                    expr(e.getFma().getC(), e.getFma().hasC()));
            case KIND_NOT_SET -> null;
        };
    }
}
