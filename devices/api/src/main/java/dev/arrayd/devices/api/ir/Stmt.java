package dev.arrayd.devices.api.ir;

import dev.arrayd.devices.api.DType;

import java.util.List;

/** An IR statement; every work-item runs the kernel body's statements in order. */
public sealed interface Stmt {

    /** Declares a variable for the rest of the block; only a {@code mutable} one may be assigned. */
    record Let(String name, Expr value, boolean mutable) implements Stmt {}

    record Assign(String name, Expr value) implements Stmt {}

    /** {@code array[index] = value}. */
    record Store(String array, Expr index, Expr value) implements Stmt {}

    /** {@code target[index] op= value}, or {@code target op= value} for a mutable variable when {@code index} is null. */
    record Accumulate(String target, Expr index, Op op, Expr value) implements Stmt {
        public enum Op { ADD, MAX, MIN }
    }

    record If(Expr condition, List<Stmt> thenBody, List<Stmt> elseBody) implements Stmt {
        public If {
            thenBody = List.copyOf(thenBody);
            elseBody = List.copyOf(elseBody);
        }
    }

    /** {@code for (var = start; var < end; var += step)}; {@code step} is a positive constant. */
    record For(String var, Expr start, Expr end, long step, List<Stmt> body) implements Stmt {
        public For {
            body = List.copyOf(body);
        }
    }

    /** An array shared by the work-items of a group, {@code size} elements of {@code dtype}. */
    record LocalArray(String name, DType dtype, long size) implements Stmt {}

    record Barrier() implements Stmt {}
}
