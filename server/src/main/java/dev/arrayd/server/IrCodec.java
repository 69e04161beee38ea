package dev.arrayd.server;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Quote;
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
 * arrayd.v1 IR messages to the IR model, strictly: every node must be complete. An unset oneof, an enum left
 * at 0 or set to a number the protos do not define, a missing operand, a uint beyond its range and nesting
 * deeper than {@value #MAX_DEPTH} are INVALID_ARGUMENT naming the node by its path
 * ({@code modules[0].ir.kernels[0].body[2].store.value: unset (expected: an expression)}). The model built
 * here is then type-checked and range-checked by {@link dev.arrayd.devices.api.ir.IrValidator}, with the same
 * paths.
 */
public final class IrCodec {

    /**
     * Deepest nesting of statements and expressions in a kernel: each statement inside a statement's body and
     * each expression inside an expression (or inside a statement) is one level deeper. A sum of 200 terms
     * written as {@code ((a + b) + c) + …} is 200 levels deep.
     */
    static final int MAX_DEPTH = 256;

    private static final String EXPR_KINDS = "constant, param, var, builtin, load, unary, binary, select, cast or fma";
    private static final String STMT_KINDS = "let, assign, store, accumulate, branch, loop, local_array or barrier";

    private IrCodec() {}

    /**
     * The IR module a request carries, as the daemon reads it (bounded depth, every field checked; INVALID_ARGUMENT
     * naming the field under {@code at}). Public for in-process tools that run a client's IR without a daemon.
     */
    public static IrModule module(dev.arrayd.proto.v1.IrModule m, String at) {
        List<IrKernel> kernels = new ArrayList<>(m.getKernelsCount());
        for (int i = 0; i < m.getKernelsCount(); i++) {
            kernels.add(kernel(m.getKernels(i), at + ".kernels[" + i + "]"));
        }
        return new IrModule(kernels);
    }

    private static IrKernel kernel(dev.arrayd.proto.v1.IrKernel k, String at) {
        List<IrParam> params = new ArrayList<>(k.getParamsCount());
        for (int i = 0; i < k.getParamsCount(); i++) {
            params.add(param(k.getParams(i), at + ".params[" + i + "]"));
        }
        if (Integer.compareUnsigned(k.getGridDims(), 3) > 0) {
            throw ArraydException.invalid(at + ".grid_dims: " + Quote.unsigned(k.getGridDims()) + " (expected: 1, 2 or 3)");
        }
        List<Long> local = k.getLocalSizeList();
        for (int i = 0; i < local.size(); i++) {
            if (local.get(i) < 0) {
                throw ArraydException.invalid(at + ".local_size[" + i + "]: " + Quote.unsigned(local.get(i))
                        + " (expected: at most 1024)");
            }
        }
        return new IrKernel(k.getName(), params, k.getGridDims(), local, block(k.getBodyList(), at + ".body", 1),
                k.getRelaxedMath());
    }

    private static IrParam param(dev.arrayd.proto.v1.IrParam p, String at) {
        return switch (p.getKindCase()) {
            case BUFFER -> {
                var b = p.getBuffer();
                yield new IrParam.Buffer(p.getName(), ProtoCodec.dtype(b.getDtype(), at + ".buffer.dtype"),
                        ProtoCodec.access(b.getAccess(), at + ".buffer.access"),
                        b.hasMinExtent() ? expr(b.getMinExtent(), at + ".buffer.min_extent", 1) : null);
            }
            case SCALAR -> {
                var s = p.getScalar();
                yield new IrParam.Scalar(p.getName(), ProtoCodec.dtype(s.getDtype(), at + ".scalar.dtype"),
                        s.hasMin() ? s.getMin() : null, s.hasMax() ? s.getMax() : null);
            }
            case KIND_NOT_SET -> throw ArraydException.invalid(at + ": unset (expected: buffer or scalar)");
        };
    }

    private static List<Stmt> block(List<IrStmt> body, String at, int depth) {
        List<Stmt> out = new ArrayList<>(body.size());
        for (int i = 0; i < body.size(); i++) {
            out.add(stmt(body.get(i), at + "[" + i + "]", depth));
        }
        return out;
    }

    private static Stmt stmt(IrStmt s, String at, int depth) {
        checkDepth(at, depth);
        int d = depth + 1;
        return switch (s.getKindCase()) {
            case LET -> {
                var l = s.getLet();
                yield new Stmt.Let(l.getName(), operand(l.hasValue(), l.getValue(), at + ".let.value", d), l.getMutable());
            }
            case ASSIGN -> {
                var a = s.getAssign();
                yield new Stmt.Assign(a.getName(), operand(a.hasValue(), a.getValue(), at + ".assign.value", d));
            }
            case STORE -> {
                var st = s.getStore();
                yield new Stmt.Store(st.getArray(), operand(st.hasIndex(), st.getIndex(), at + ".store.index", d),
                        operand(st.hasValue(), st.getValue(), at + ".store.value", d));
            }
            case ACCUMULATE -> {
                var a = s.getAccumulate();
                Stmt.Accumulate.Op op = switch (a.getOp()) {
                    case OP_ADD -> Stmt.Accumulate.Op.ADD;
                    case OP_MAX -> Stmt.Accumulate.Op.MAX;
                    case OP_MIN -> Stmt.Accumulate.Op.MIN;
                    case OP_UNSPECIFIED, UNRECOGNIZED -> throw badEnum(at + ".accumulate.op", a.getOpValue(), "OP_ADD, OP_MAX or OP_MIN");
                };
                yield new Stmt.Accumulate(a.getTarget(), a.hasIndex() ? expr(a.getIndex(), at + ".accumulate.index", d) : null,
                        op, operand(a.hasValue(), a.getValue(), at + ".accumulate.value", d));
            }
            case BRANCH -> {
                var b = s.getBranch();
                yield new Stmt.If(operand(b.hasCondition(), b.getCondition(), at + ".branch.condition", d),
                        block(b.getThenBodyList(), at + ".branch.then_body", d),
                        block(b.getElseBodyList(), at + ".branch.else_body", d));
            }
            case LOOP -> {
                var l = s.getLoop();
                if (l.getStep() < 0) {
                    throw ArraydException.invalid(at + ".loop.step: " + l.getStep() + " (expected: a positive constant, or 0 for 1)");
                }
                yield new Stmt.For(l.getVar(), operand(l.hasStart(), l.getStart(), at + ".loop.start", d),
                        operand(l.hasEnd(), l.getEnd(), at + ".loop.end", d), l.getStep() == 0 ? 1 : l.getStep(),
                        block(l.getBodyList(), at + ".loop.body", d));
            }
            case LOCAL_ARRAY -> {
                var la = s.getLocalArray();
                if (la.getSize() < 0) {
                    throw ArraydException.invalid(at + ".local_array.size: " + Quote.unsigned(la.getSize())
                            + " (expected: at least 1, and at most 48 KiB of elements)");
                }
                yield new Stmt.LocalArray(la.getName(), ProtoCodec.dtype(la.getDtype(), at + ".local_array.dtype"), la.getSize());
            }
            case BARRIER -> new Stmt.Barrier();
            case KIND_NOT_SET -> throw ArraydException.invalid(at + ": unset (expected: one of " + STMT_KINDS + ")");
        };
    }

    /** A required operand: INVALID_ARGUMENT {@code at: unset} when absent. */
    private static Expr operand(boolean present, IrExpr e, String at, int depth) {
        if (!present) {
            throw ArraydException.invalid(at + ": unset (expected: an expression)");
        }
        return expr(e, at, depth);
    }

    static Expr expr(IrExpr e, String at, int depth) {
        checkDepth(at, depth);
        int d = depth + 1;
        return switch (e.getKindCase()) {
            case CONSTANT -> constant(e.getConstant(), at + ".constant");
            case PARAM -> new Expr.Param(e.getParam());
            case VAR -> new Expr.Var(e.getVar());
            case BUILTIN -> {
                var b = e.getBuiltin();
                Expr.Builtin.Kind kind = switch (b.getKind()) {
                    case KIND_GLOBAL_ID -> Expr.Builtin.Kind.GLOBAL_ID;
                    case KIND_GLOBAL_SIZE -> Expr.Builtin.Kind.GLOBAL_SIZE;
                    case KIND_LOCAL_ID -> Expr.Builtin.Kind.LOCAL_ID;
                    case KIND_LOCAL_SIZE -> Expr.Builtin.Kind.LOCAL_SIZE;
                    case KIND_GROUP_ID -> Expr.Builtin.Kind.GROUP_ID;
                    case KIND_NUM_GROUPS -> Expr.Builtin.Kind.NUM_GROUPS;
                    case KIND_UNSPECIFIED, UNRECOGNIZED -> throw badEnum(at + ".builtin.kind", b.getKindValue(),
                            "KIND_GLOBAL_ID, KIND_GLOBAL_SIZE, KIND_LOCAL_ID, KIND_LOCAL_SIZE, KIND_GROUP_ID or KIND_NUM_GROUPS");
                };
                if (Integer.compareUnsigned(b.getDim(), 2) > 0) {
                    throw ArraydException.invalid(at + ".builtin.dim: " + Quote.unsigned(b.getDim())
                            + " (expected: 0, 1 or 2, below the kernel's grid_dims)");
                }
                yield new Expr.Builtin(kind, b.getDim());
            }
            case LOAD -> {
                var l = e.getLoad();
                yield new Expr.Load(l.getArray(), operand(l.hasIndex(), l.getIndex(), at + ".load.index", d));
            }
            case UNARY -> {
                var u = e.getUnary();
                if (u.getOp() == dev.arrayd.proto.v1.IrUnary.Op.OP_UNSPECIFIED
                        || u.getOp() == dev.arrayd.proto.v1.IrUnary.Op.UNRECOGNIZED) {
                    throw badEnum(at + ".unary.op", u.getOpValue(), "one of " + opNames(Expr.Unary.Op.values()));
                }
                yield new Expr.Unary(Expr.Unary.Op.valueOf(ProtoCodec.unprefixed(u.getOp(), "OP_")),
                        operand(u.hasOperand(), u.getOperand(), at + ".unary.operand", d));
            }
            case BINARY -> {
                var b = e.getBinary();
                if (b.getOp() == dev.arrayd.proto.v1.IrBinary.Op.OP_UNSPECIFIED
                        || b.getOp() == dev.arrayd.proto.v1.IrBinary.Op.UNRECOGNIZED) {
                    throw badEnum(at + ".binary.op", b.getOpValue(), "one of " + opNames(Expr.Binary.Op.values()));
                }
                yield new Expr.Binary(Expr.Binary.Op.valueOf(ProtoCodec.unprefixed(b.getOp(), "OP_")),
                        operand(b.hasLeft(), b.getLeft(), at + ".binary.left", d),
                        operand(b.hasRight(), b.getRight(), at + ".binary.right", d));
            }
            case SELECT -> {
                var s = e.getSelect();
                yield new Expr.Select(operand(s.hasCondition(), s.getCondition(), at + ".select.condition", d),
                        operand(s.hasIfTrue(), s.getIfTrue(), at + ".select.if_true", d),
                        operand(s.hasIfFalse(), s.getIfFalse(), at + ".select.if_false", d));
            }
            case CAST -> {
                var c = e.getCast();
                yield new Expr.Cast(castType(c, at + ".cast"), operand(c.hasOperand(), c.getOperand(), at + ".cast.operand", d));
            }
            case FMA -> {
                var f = e.getFma();
                yield new Expr.Fma(operand(f.hasA(), f.getA(), at + ".fma.a", d), operand(f.hasB(), f.getB(), at + ".fma.b", d),
                        operand(f.hasC(), f.getC(), at + ".fma.c", d));
            }
            case KIND_NOT_SET -> throw ArraydException.invalid(at + ": unset (expected: one of " + EXPR_KINDS + ")");
        };
    }

    private static Expr constant(dev.arrayd.proto.v1.IrConst c, String at) {
        return switch (c.getValueCase()) {
            case BOOL -> Expr.Const.bool(c.getBool());
            case U8 -> {
                if (Integer.compareUnsigned(c.getU8(), 255) > 0) {
                    throw ArraydException.invalid(at + ".u8: " + Quote.unsigned(c.getU8()) + " (expected: 0..255)");
                }
                yield Expr.Const.u8(c.getU8());
            }
            case I32 -> Expr.Const.i32(c.getI32());
            case I64 -> Expr.Const.i64(c.getI64());
            case F32 -> Expr.Const.f32(c.getF32());
            case F64 -> Expr.Const.f64(c.getF64());
            case VALUE_NOT_SET -> throw ArraydException.invalid(at + ": no value set (expected: one of bool, u8, i32, i64, "
                    + "f32 or f64)");
        };
    }

    /** The target type of a cast: {@code to_bool}, or one of the value dtypes. */
    private static IrType castType(dev.arrayd.proto.v1.IrCast c, String at) {
        if (c.getToBool()) {
            if (c.getDtype() != dev.arrayd.proto.v1.DataType.DATA_TYPE_UNSPECIFIED) {
                throw ArraydException.invalid(at + ".dtype: " + dtypeName(c.getDtypeValue())
                        + " (expected: DATA_TYPE_UNSPECIFIED when to_bool is set)");
            }
            return IrType.BOOL;
        }
        String expected = " (expected: DATA_TYPE_U8, I32, I64, F32 or F64, or to_bool; f16 and bf16 are storage types only)";
        return switch (c.getDtype()) {
            case DATA_TYPE_U8, DATA_TYPE_I32, DATA_TYPE_I64, DATA_TYPE_F32, DATA_TYPE_F64 -> IrType.ofScalar(ProtoCodec.dtype(c.getDtype(), at + ".dtype"));
            case DATA_TYPE_F16, DATA_TYPE_BF16, DATA_TYPE_UNSPECIFIED, UNRECOGNIZED ->
                    throw ArraydException.invalid(at + ".dtype: " + dtypeName(c.getDtypeValue()) + expected);
        };
    }

    /** The wire names of domain operators: OP_ADD for ADD. */
    private static List<String> opNames(Enum<?>[] ops) {
        return java.util.Arrays.stream(ops).map(o -> "OP_" + o.name()).toList();
    }

    private static String dtypeName(int number) {
        var d = dev.arrayd.proto.v1.DataType.forNumber(number);
        return d == null ? Integer.toString(number) : d.name();
    }

    private static ArraydException badEnum(String at, int number, String expected) {
        return ArraydException.invalid(at + ": " + (number == 0 ? "unset" : Integer.toString(number))
                + " (expected: " + expected + ")");
    }

    private static void checkDepth(String at, int depth) {
        if (depth > MAX_DEPTH) {
            // the path of so deep a node is thousands of characters: its head and tail say where it is
            String shown = at.length() <= 240 ? at : at.substring(0, 160) + "…" + at.substring(at.length() - 60);
            throw ArraydException.invalid(shown + ": nested " + depth + " levels deep (expected: at most " + MAX_DEPTH
                    + " levels of statements and expressions)");
        }
    }
}
