"""IR kernels the tests share (parameters in launch order)."""
import arrayd
from arrayd import ir


@arrayd.kernel
def vadd(k):
    """c = a + b."""
    a = k.buffer("a", "f32", "read", extent="n")
    b = k.buffer("b", "f32", "read", extent="n")
    c = k.buffer("c", "f32", "write", extent="n")
    n = k.scalar("n", "i64", min=0)
    i = k.let("i", k.global_id(0))
    with k.when(i < n):
        c[i] = a[i] + b[i]


@arrayd.kernel
def saxpy(k):
    """y = a * x + y."""
    a = k.scalar("a", "f32")
    x = k.buffer("x", "f32", "read", extent="n")
    y = k.buffer("y", "f32", "read_write", extent="n")
    n = k.scalar("n", "i64", min=0)
    i = k.let("i", k.global_id(0))
    with k.when(i < n):
        y[i] = a * x[i] + y[i]


@arrayd.kernel
def add_scalar(k):
    """x += v, in place."""
    x = k.buffer("x", "f32", "read_write", extent="n")
    v = k.scalar("v", "f32")
    n = k.scalar("n", "i64", min=0)
    i = k.let("i", k.global_id(0))
    with k.when(i < n):
        x[i] = x[i] + v


@arrayd.kernel
def scale_into(k):
    """out = x * f."""
    x = k.buffer("x", "f32", "read", extent="n")
    out = k.buffer("out", "f32", "write", extent="n")
    f = k.scalar("f", "f32")
    n = k.scalar("n", "i64", min=0)
    i = k.let("i", k.global_id(0))
    with k.when(i < n):
        out[i] = x[i] * f


@arrayd.kernel(local_size=(64,))
def group_sum(k):
    """partial[g] = the sum of x over work-group g (64 items), through local memory and barriers."""
    x = k.buffer("x", "f32", "read")
    partial = k.buffer("partial", "f32", "write")
    n = k.scalar("n", "i64", min=0)
    tile = k.local("tile", "f32", 64)
    i = k.let("i", k.global_id(0))
    l = k.let("l", k.local_id(0))
    tile[l] = ir.select(i < n, x[i], 0.0)
    k.barrier()
    with k.loop("level", 0, 6) as level:
        stride = k.let("stride", ir.i64(32) >> level)
        with k.when(l < stride):
            tile.accumulate(l, tile[l + stride])
        k.barrier()
    with k.when(l.eq(0)):
        partial[k.group_id(0)] = tile[0]


def _row_sums(k):
    """out[r] = |sum of row r| of a (rows x cols) matrix: a loop, a mutable variable, a branch with an else."""
    m = k.buffer("m", "f32", "read", extent=ir.param("rows") * ir.param("cols"))
    out = k.buffer("out", "f32", "write", extent="rows")
    rows = k.scalar("rows", "i64", min=0, max=1 << 20)
    cols = k.scalar("cols", "i64", min=0, max=1 << 20)
    r = k.let("r", k.global_id(0))
    with k.when(r < rows):
        acc = k.var("acc", 0.0)
        with k.loop("c", 0, cols) as c:
            acc.add(m[r * cols + c])
        with k.when(acc < 0.0):
            out[r] = -acc
        with k.otherwise():
            out[r] = acc


row_sums = arrayd.kernel(_row_sums, name="row_sums")
# the same kernel allowed to add in any order (relaxed floating point)
relaxed_row_sums = arrayd.kernel(_row_sums, name="relaxed_row_sums", relaxed_math=True)


@arrayd.kernel
def gather(k):
    """out[i] = x[idx[i]]: idx comes from memory, so the load of x keeps its guard."""
    x = k.buffer("x", "f32", "read")
    idx = k.buffer("idx", "i64", "read", extent="n")
    out = k.buffer("out", "f32", "write", extent="n")
    n = k.scalar("n", "i64", min=0)
    i = k.let("i", k.global_id(0))
    with k.when(i < n):
        out[i] = x[idx[i]]
