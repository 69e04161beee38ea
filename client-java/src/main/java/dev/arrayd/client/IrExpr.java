package dev.arrayd.client;

import dev.arrayd.proto.v1.IrBinary;
import dev.arrayd.proto.v1.IrCast;
import dev.arrayd.proto.v1.IrUnary;

import java.util.Objects;

/**
 * An expression of an IR kernel, built fluently: {@code a.mul(x.at(i)).add(y.at(i))}. Immutable;
 * every method returns a new expression. Types are checked by the daemon when the module is
 * compiled (strictly: both operands of {@code add} have the same type; {@link #toI64()} and friends
 * convert). Factories for leaves are in {@link Ir}.
 */
public final class IrExpr {

    private final dev.arrayd.proto.v1.IrExpr proto;

    IrExpr(dev.arrayd.proto.v1.IrExpr proto) {
        this.proto = Objects.requireNonNull(proto, "proto");
    }

    /** The wire form. */
    public dev.arrayd.proto.v1.IrExpr toProto() {
        return proto;
    }

    private IrExpr binary(IrBinary.Op op, IrExpr right) {
        return new IrExpr(dev.arrayd.proto.v1.IrExpr.newBuilder()
                .setBinary(IrBinary.newBuilder().setOp(op).setLeft(proto).setRight(right.proto)).build());
    }

    private IrExpr unary(IrUnary.Op op) {
        return new IrExpr(dev.arrayd.proto.v1.IrExpr.newBuilder()
                .setUnary(IrUnary.newBuilder().setOp(op).setOperand(proto)).build());
    }

    public IrExpr add(IrExpr o) { return binary(IrBinary.Op.OP_ADD, o); }
    public IrExpr sub(IrExpr o) { return binary(IrBinary.Op.OP_SUB, o); }
    public IrExpr mul(IrExpr o) { return binary(IrBinary.Op.OP_MUL, o); }
    public IrExpr div(IrExpr o) { return binary(IrBinary.Op.OP_DIV, o); }
    public IrExpr rem(IrExpr o) { return binary(IrBinary.Op.OP_REM, o); }
    public IrExpr min(IrExpr o) { return binary(IrBinary.Op.OP_MIN, o); }
    public IrExpr max(IrExpr o) { return binary(IrBinary.Op.OP_MAX, o); }
    public IrExpr pow(IrExpr o) { return binary(IrBinary.Op.OP_POW, o); }
    public IrExpr and(IrExpr o) { return binary(IrBinary.Op.OP_AND, o); }
    public IrExpr or(IrExpr o) { return binary(IrBinary.Op.OP_OR, o); }
    public IrExpr xor(IrExpr o) { return binary(IrBinary.Op.OP_XOR, o); }
    public IrExpr shl(IrExpr o) { return binary(IrBinary.Op.OP_SHL, o); }
    public IrExpr shr(IrExpr o) { return binary(IrBinary.Op.OP_SHR, o); }
    public IrExpr eq(IrExpr o) { return binary(IrBinary.Op.OP_EQ, o); }
    public IrExpr ne(IrExpr o) { return binary(IrBinary.Op.OP_NE, o); }
    public IrExpr lt(IrExpr o) { return binary(IrBinary.Op.OP_LT, o); }
    public IrExpr le(IrExpr o) { return binary(IrBinary.Op.OP_LE, o); }
    public IrExpr gt(IrExpr o) { return binary(IrBinary.Op.OP_GT, o); }
    public IrExpr ge(IrExpr o) { return binary(IrBinary.Op.OP_GE, o); }
    /** Short-circuit and: {@code o} is evaluated only when this is true (and may index what this bounds). */
    public IrExpr andThen(IrExpr o) { return binary(IrBinary.Op.OP_LOGICAL_AND, o); }
    /** Short-circuit or. */
    public IrExpr orElse(IrExpr o) { return binary(IrBinary.Op.OP_LOGICAL_OR, o); }

    public IrExpr neg() { return unary(IrUnary.Op.OP_NEG); }
    public IrExpr not() { return unary(IrUnary.Op.OP_NOT); }
    public IrExpr abs() { return unary(IrUnary.Op.OP_ABS); }
    public IrExpr sqrt() { return unary(IrUnary.Op.OP_SQRT); }
    public IrExpr exp() { return unary(IrUnary.Op.OP_EXP); }
    public IrExpr log() { return unary(IrUnary.Op.OP_LOG); }
    public IrExpr tanh() { return unary(IrUnary.Op.OP_TANH); }
    public IrExpr floor() { return unary(IrUnary.Op.OP_FLOOR); }
    public IrExpr ceil() { return unary(IrUnary.Op.OP_CEIL); }

    /** Converts to {@code dtype} (f32, f64, i32, i64 or u8). */
    public IrExpr to(DType dtype) {
        return new IrExpr(dev.arrayd.proto.v1.IrExpr.newBuilder()
                .setCast(IrCast.newBuilder().setDtype(Protos.dtype(dtype)).setOperand(proto)).build());
    }

    public IrExpr toI32() { return to(DType.I32); }
    public IrExpr toI64() { return to(DType.I64); }
    public IrExpr toF32() { return to(DType.F32); }
    public IrExpr toF64() { return to(DType.F64); }

    /** {@code != 0} as a bool. */
    public IrExpr toBool() {
        return new IrExpr(dev.arrayd.proto.v1.IrExpr.newBuilder()
                .setCast(IrCast.newBuilder().setToBool(true).setOperand(proto)).build());
    }

    @Override
    public String toString() {
        return proto.toString();
    }
}
