package dev.arrayd.devices.api.ir;

import dev.arrayd.devices.api.support.DigestWriter;
import java.util.List;

/**
 * A SHA-256 over an IR module by its content, written node by node ({@link DigestWriter}): two modules get
 * the same digest exactly when they are equal, up to SHA-256 collisions (every node and every field carries a
 * tag of its own, every list and string its length, so no two different modules encode to the same bytes).
 * What a compile cache keys an IR source on. It calls no generated record methods and no method handles,
 * which run slowly until the JIT has compiled them: a digest is cheap on the first compile after a daemon
 * starts too.
 *
 * <p>Enum constants are written by ordinal, so a digest is meaningful within one build of this code: a cache
 * that outlives a process keys on the code's identity too ({@link dev.arrayd.devices.api.support.CodeIdentity}).
 * Every component of every IR record is written; {@code IrDigestTest} fails when a record gains one that is
 * not.
 */
public final class IrDigest {

    private final DigestWriter out = new DigestWriter();

    private IrDigest() {}

    /** The hex SHA-256 of {@code module}. */
    public static String of(IrModule module) {
        IrDigest d = new IrDigest();
        d.out.tag('M', module.kernels().size());
        for (IrKernel k : module.kernels()) {
            d.kernel(k);
        }
        return d.out.hex();
    }

    private void kernel(IrKernel k) {
        out.text('K', k.name());
        out.tag('p', k.params().size());
        for (IrParam p : k.params()) {
            switch (p) {
                case IrParam.Buffer b -> {
                    out.text('b', b.name()).tag('t', b.dtype().ordinal()).tag('a', b.access().ordinal());
                    nullableExpr(b.minExtent());
                }
                case IrParam.Scalar s -> {
                    out.text('s', s.name()).tag('t', s.dtype().ordinal());
                    bound(s.min());
                    bound(s.max());
                }
            }
        }
        out.tag('g', k.gridDims());
        out.tag('l', k.localSize().size());
        for (Long size : k.localSize()) {
            bound(size);
        }
        out.tag('x', k.relaxedMath() ? 1 : 0);
        block(k.body());
    }

    private void bound(Long v) {
        if (v == null) {
            out.tag('N', 0);
        } else {
            out.tag('J', v);
        }
    }

    private void block(List<Stmt> body) {
        out.tag('{', body.size());
        for (Stmt s : body) {
            stmt(s);
        }
    }

    private void stmt(Stmt s) {
        switch (s) {
            case Stmt.Let l -> {
                out.text('L', l.name()).tag('m', l.mutable() ? 1 : 0);
                expr(l.value());
            }
            case Stmt.Assign a -> {
                out.text('A', a.name());
                expr(a.value());
            }
            case Stmt.Store st -> {
                out.text('S', st.array());
                expr(st.index());
                expr(st.value());
            }
            case Stmt.Accumulate a -> {
                out.text('U', a.target()).tag('o', a.op().ordinal());
                nullableExpr(a.index());
                expr(a.value());
            }
            case Stmt.If i -> {
                out.tag('I', 0);
                expr(i.condition());
                block(i.thenBody());
                block(i.elseBody());
            }
            case Stmt.For f -> {
                out.text('F', f.var()).tag('z', f.step());
                expr(f.start());
                expr(f.end());
                block(f.body());
            }
            case Stmt.LocalArray a -> out.text('R', a.name()).tag('t', a.dtype().ordinal()).tag('n', a.size());
            case Stmt.Barrier b -> out.tag('W', 0);
        }
    }

    private void nullableExpr(Expr e) {
        if (e == null) {
            out.tag('N', 0);
        } else {
            expr(e);
        }
    }

    private void expr(Expr e) {
        switch (e) {
            case Expr.Const c -> out.tag('c', c.type().ordinal()).tag('=', c.bits());
            case Expr.Param p -> out.text('P', p.name());
            case Expr.Var v -> out.text('V', v.name());
            case Expr.Builtin b -> out.tag('G', b.kind().ordinal()).tag('d', b.dim());
            case Expr.Load l -> {
                out.text('D', l.array());
                expr(l.index());
            }
            case Expr.Unary u -> {
                out.tag('1', u.op().ordinal());
                expr(u.operand());
            }
            case Expr.Binary b -> {
                out.tag('2', b.op().ordinal());
                expr(b.left());
                expr(b.right());
            }
            case Expr.Select s -> {
                out.tag('?', 0);
                expr(s.condition());
                expr(s.ifTrue());
                expr(s.ifFalse());
            }
            case Expr.Cast c -> {
                out.tag('C', c.to().ordinal());
                expr(c.operand());
            }
            case Expr.Fma f -> {
                out.tag('3', 0);
                expr(f.a());
                expr(f.b());
                expr(f.c());
            }
        }
    }
}
