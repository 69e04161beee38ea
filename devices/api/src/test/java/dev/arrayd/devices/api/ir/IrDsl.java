package dev.arrayd.devices.api.ir;

import java.util.List;

/** Terse constructors for IR trees in tests (clients use client-java's builder instead). */
public final class IrDsl {

    private IrDsl() {}

    public static Expr i32(int v) {
        return Expr.Const.i32(v);
    }

    public static Expr i64(long v) {
        return Expr.Const.i64(v);
    }

    public static Expr f32(float v) {
        return Expr.Const.f32(v);
    }

    public static Expr param(String n) {
        return new Expr.Param(n);
    }

    public static Expr var(String n) {
        return new Expr.Var(n);
    }

    public static Expr gid(int d) {
        return new Expr.Builtin(Expr.Builtin.Kind.GLOBAL_ID, d);
    }

    public static Expr lid(int d) {
        return new Expr.Builtin(Expr.Builtin.Kind.LOCAL_ID, d);
    }

    public static Expr group(int d) {
        return new Expr.Builtin(Expr.Builtin.Kind.GROUP_ID, d);
    }

    public static Expr load(String a, Expr i) {
        return new Expr.Load(a, i);
    }

    public static Expr bin(Expr.Binary.Op op, Expr a, Expr b) {
        return new Expr.Binary(op, a, b);
    }

    public static Expr add(Expr a, Expr b) {
        return bin(Expr.Binary.Op.ADD, a, b);
    }

    public static Expr sub(Expr a, Expr b) {
        return bin(Expr.Binary.Op.SUB, a, b);
    }

    public static Expr mul(Expr a, Expr b) {
        return bin(Expr.Binary.Op.MUL, a, b);
    }

    public static Expr lt(Expr a, Expr b) {
        return bin(Expr.Binary.Op.LT, a, b);
    }

    public static Expr and(Expr a, Expr b) {
        return bin(Expr.Binary.Op.LOGICAL_AND, a, b);
    }

    public static Expr cast(IrType t, Expr e) {
        return new Expr.Cast(t, e);
    }

    public static Stmt let(String n, Expr v) {
        return new Stmt.Let(n, v, false);
    }

    public static Stmt mut(String n, Expr v) {
        return new Stmt.Let(n, v, true);
    }

    public static Stmt store(String a, Expr i, Expr v) {
        return new Stmt.Store(a, i, v);
    }

    public static Stmt when(Expr c, Stmt... then) {
        return new Stmt.If(c, List.of(then), List.of());
    }

    public static Stmt loop(String v, Expr start, Expr end, Stmt... body) {
        return new Stmt.For(v, start, end, 1, List.of(body));
    }

    public static Stmt accVar(String v, Stmt.Accumulate.Op op, Expr value) {
        return new Stmt.Accumulate(v, null, op, value);
    }
}
