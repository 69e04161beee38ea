"""Random programs over two devices with failures in them — kernels that index out of range, deadlines that pass,
commands cancelled while queued or running, and what waits on those — checked against a model of sticky failure
(docs/api.md §4.2): which commands must fail and with which root cause, and what every read gives.

A program is submitted whole (reads block, nothing else waits); the events are settled at the end, and the model
then replays the program in order with the outcomes seen: each command's outcome must be one the rules allow, and
the data it leaves is what the model computes from there. Where the rules leave data open (a cancelled command may
have run; a command behind a failed one on its device's own stream ran on what that one left), the model marks
those elements unknown and later reads compare only the known ones."""
from __future__ import annotations

import os
import re

import numpy as np
import pytest

import arrayd

import kernels as K

#: How many programs the test below runs (ARRAYD_PY_FAILURE_PROGRAMS: more for a soak).
FAILURE_PROGRAMS = int(os.environ.get("ARRAYD_PY_FAILURE_PROGRAMS", "48"))
ROOT = re.compile(r"waited on event (\d+), which failed")
BUFFERS = 4


@arrayd.kernel
def slow_add(k):
    """x += v, after ``reps`` loads of x[i]: a slow kernel, so that cancels find commands queued and running."""
    x = k.buffer("x", "f32", "read_write", extent="n")
    v = k.scalar("v", "f32")
    n = k.scalar("n", "i64", min=0)
    reps = k.scalar("reps", "i64", min=0, max=1 << 20)
    i = k.let("i", k.global_id(0))
    with k.when(i < n):
        acc = k.var("acc", 0.0)
        with k.loop("r", 0, reps):
            acc.add(x[i])
        x[i] = x[i] + v + acc * 0.0


def _program(s: arrayd.Session, seed: int, regions: bool):
    """Submits one random program (with ``regions``, about half its buffers live in shared-memory regions); returns
    what the model needs (see :func:`_check`)."""
    rng = np.random.default_rng(seed)
    k = s.compile(K.add_scalar, K.scale_into, K.vadd, K.gather, slow_add)
    streams = [s.stream("cpu:0"), s.stream("cpu:1")]
    n = int(rng.choice([64, 1000, 4096]))
    init = [rng.standard_normal(n).astype(np.float32) for _ in range(BUFFERS)]
    bufs = []
    for m in init:
        device = f"cpu:{rng.integers(0, 2)}"
        if regions and rng.integers(0, 2):
            bufs.append(s.region(4 * n).buffer(n, np.float32, device=device))
            bufs[-1].write(m)
        else:
            bufs.append(s.array(m, device=device))
    # indexes for the gather kernel: all in range, and about 2% past the end (an OUT_OF_RANGE failure)
    idx = [rng.integers(0, n, n).astype(np.int64),
           np.where(rng.random(n) < 0.02, n + 5, rng.integers(0, n, n)).astype(np.int64)]
    idx_bufs = [s.array(i) for i in idx]
    steps, commands, cancelled = [], [], set()
    for _ in range(40):
        op = int(rng.integers(0, 12))
        a, b, c = (int(x) for x in rng.choice(BUFFERS, 3, replace=False))
        where: dict = {}
        r = rng.integers(0, 4)
        if r == 0:
            where["stream"] = streams[rng.integers(0, 2)]
        elif r == 1:
            where["device"] = f"cpu:{rng.integers(0, 2)}"
        waits = [commands[rng.integers(max(0, len(commands) - 8), len(commands))]] if commands and \
            rng.integers(0, 3) == 0 else []
        deadline = float(rng.choice([-1.0, 0.0002, 0.002])) if rng.integers(0, 6) == 0 else None
        launch = dict(where, wait_for=waits, deadline=deadline)
        data_cmd = {kk: v for kk, v in where.items() if kk != "device"}
        data_cmd["wait_for"] = waits
        if op == 0:
            v = float(rng.integers(-3, 4))
            e, what = k["add_scalar"](n, bufs[a], v, n, **launch), ("add", a, v)
        elif op == 1:
            v = float(rng.integers(-3, 4))
            e, what = k["slow_add"](n, bufs[a], v, n, int(rng.choice([100, 2000, 8000])), **launch), ("add", a, v)
        elif op == 2:
            e, what = k["scale_into"](n, bufs[a], bufs[b], -1.0, n, **launch), ("neg", a, b)
        elif op == 3:
            e, what = k["vadd"](n, bufs[a], bufs[b], bufs[c], n, **launch), ("vadd", a, b, c)
        elif op == 4:
            bad = int(rng.integers(0, 3) == 0)
            e, what = k["gather"](n, bufs[a], idx_bufs[bad], bufs[b], n, **launch), ("gather", a, b, bad)
        elif op == 5:
            cnt = int(rng.integers(1, n + 1))
            so, do = int(rng.integers(0, n - cnt + 1)), int(rng.integers(0, n - cnt + 1))
            e = s.copy(bufs[a], bufs[b], src_offset_bytes=4 * so, dst_offset_bytes=4 * do, size_bytes=4 * cnt,
                       **data_cmd)
            what = ("copy", a, b, so, do, cnt)
        elif op == 6:
            off = int(rng.integers(0, n))
            data = rng.standard_normal(int(rng.integers(1, n - off + 1))).astype(np.float32)
            e, what = s.upload(bufs[a], data, offset_bytes=4 * off, **data_cmd), ("put", a, off, data)
        elif op == 7:
            v = float(rng.integers(-9, 9))
            e, what = s.fill(bufs[a], v, **data_cmd), ("put", a, 0, np.full(n, v, np.float32))
        elif op == 8:
            data = rng.standard_normal(n).astype(np.float32)
            try:
                e, what = bufs[a].write(data, wait_for=waits), ("put", a, 0, data)
            except arrayd.ArraydError:  # a region buffer's write waits for wait_for here: it failed, nothing written
                assert bufs[a]._region is not None and any(w.failed() for w in waits)
                continue
        elif op == 9 and commands:
            victim = commands[rng.integers(max(0, len(commands) - 6), len(commands))]
            s.cancel(victim)
            cancelled.add(victim.id)
            continue
        else:
            try:
                got = bufs[a].numpy(wait_for=waits).copy()  # (of a region buffer: a view of the region)
            except arrayd.ArraydError as ex:
                got = ex
            steps.append(("read", None, (a, waits, got)))
            continue
        commands.append(e)
        steps.append(("command", e, (what, waits, deadline if op <= 4 else None)))
    outcome = {}
    for e in commands:
        try:
            e.wait(60)
            outcome[e.id] = None
        except arrayd.ArraydError as ex:
            outcome[e.id] = ex
    finals = []
    for buf in bufs:
        try:
            finals.append(buf.numpy().copy())
        except arrayd.ArraydError as ex:
            finals.append(ex)
    return n, init, idx, steps, outcome, finals, cancelled


def _root(event_id: int, ex: arrayd.ArraydError) -> int:
    """The root cause's event: the one the message names, else the command itself."""
    m = ROOT.search(ex.message)
    return int(m.group(1)) if m else event_id


def _check(seed: int, n, init, idx, steps, outcome, finals, cancelled) -> None:
    value = [m.copy() for m in init]
    known = [np.ones(n, bool) for _ in range(BUFFERS)]
    poison: list[int | None] = [None] * BUFFERS  # the root cause of the failed last writer, while there is one
    # roots of the failures since the last write that succeeded: a part write keeps the rest of the buffer, and
    # the command that was to bring it to the device may have failed with any of them
    history: list[set[int]] = [set() for _ in range(BUFFERS)]
    codes: dict[int, object] = {}  # root event -> its code
    roots: dict[int, int] = {}  # failed event -> its root
    for step, (kind, e, info) in enumerate(steps):
        at = f"seed {seed} step {step}"
        if kind == "read":
            a, waits, got = info
            expected = {roots[w.id] for w in waits if w.id in roots} | ({poison[a]} if poison[a] is not None else set())
            if isinstance(got, arrayd.ArraydError):
                r = _root(-1, got)
                assert r in expected and got.code == codes[r], f"{at}: read of {a} failed: {got} (roots {expected})"
            else:
                assert not expected, f"{at}: read of {a} succeeded though {expected} failed"
                wrong = known[a] & (got != value[a])
                assert not wrong.any(), f"{at}: read of {a}: at {np.flatnonzero(wrong)[:5]} {got[wrong][:5]}, " \
                                        f"expected {value[a][wrong][:5]}"
            continue
        (op, *args), waits, deadline = info
        reads, writes = {"add": ([0], [0]), "neg": ([0], [1]), "vadd": ([0, 1], [2]), "gather": ([0], [1]),
                         "copy": ([0], [1]), "put": ([], [0])}[op]
        reads, writes = [args[i] for i in reads], [args[i] for i in writes]
        dependencies = {roots[w.id] for w in waits if w.id in roots} | {poison[r] for r in reads if poison[r] is not None}
        kept = set().union(*({poison[w]} | history[w] for w in writes if poison[w] is not None))
        ex = outcome[e.id]
        own = set()  # what the command may fail with by itself
        if e.id in cancelled:
            own.add("CANCELLED")
        if deadline is not None:
            own.add("DEADLINE_EXCEEDED")
        if op == "gather" and args[2] and (idx[1] >= n).any():
            own.add("OUT_OF_RANGE")
        what = f"{op}{[x for x in args[:3] if not isinstance(x, np.ndarray)]} (event {e.id})"
        if ex is None:
            assert not dependencies, f"{at}: {what} succeeded though {dependencies} failed"
            if op == "add":
                value[args[0]] = value[args[0]] + np.float32(args[1])
            elif op == "neg":
                value[args[1]], known[args[1]] = -value[args[0]], known[args[0]].copy()
            elif op == "vadd":
                value[args[2]] = value[args[0]] + value[args[1]]
                known[args[2]] = known[args[0]] & known[args[1]]
            elif op == "gather":
                i = idx[args[2]]
                assert (i < n).all(), f"{at}: {what}: a gather past the end succeeded"
                value[args[1]], known[args[1]] = value[args[0]][i], known[args[0]][i]
            elif op == "copy":
                _, dst, so, do, cnt = args
                value[dst], known[dst] = value[dst].copy(), known[dst].copy()
                value[dst][do:do + cnt] = value[args[0]][so:so + cnt]
                known[dst][do:do + cnt] = known[args[0]][so:so + cnt]
            else:
                dst, off, data = args
                value[dst], known[dst] = value[dst].copy(), known[dst].copy()
                value[dst][off:off + len(data)] = data
                known[dst][off:off + len(data)] = True
            for w in writes:
                poison[w] = None
                history[w] = set()
            continue
        r = _root(e.id, ex)
        roots[e.id] = r
        if r == e.id:
            codes[r] = ex.code
            assert ex.code.name in own, f"{at}: {what} failed by itself: {ex} (it may: {own or 'not'})"
        else:
            assert r in dependencies | kept and ex.code == codes[r], \
                f"{at}: {what} failed with root {r}: {ex} (its dependencies' roots {dependencies}, kept {kept})"
        # it may have run: cancelled while running, stopped by an index out of range, or queued on its device's
        # stream behind the failed command it waited for; a deadline that passed means it never started
        ran = ex.code.name != "DEADLINE_EXCEEDED" or r != e.id
        for w in writes:
            if ran:
                known[w] = known[w].copy()
                if op == "put":
                    known[w][args[1]:args[1] + len(args[2])] = False
                elif op == "copy":
                    known[w][args[3]:args[3] + args[4]] = False
                else:
                    known[w][:] = False
            poison[w] = r
            history[w].add(r)
    for i, got in enumerate(finals):
        if isinstance(got, arrayd.ArraydError):
            assert poison[i] is not None and _root(-1, got) == poison[i], f"seed {seed}: buffer {i} at the end: {got}"
        else:
            assert poison[i] is None, f"seed {seed}: buffer {i} read at the end, though {poison[i]} failed it"
            wrong = known[i] & (got != value[i])
            assert not wrong.any(), f"seed {seed}: buffer {i} at the end: at {np.flatnonzero(wrong)[:5]} " \
                                    f"{got[wrong][:5]}, expected {value[i][wrong][:5]}"


@pytest.mark.parametrize("seed", range(FAILURE_PROGRAMS))
def test_random_programs_with_failures_follow_the_sticky_failure_rules(session, seed):
    """Every command fails exactly when the rules say it must or may, with the right root cause, and every read
    gives what the commands that ran left: never data that did not come from this buffer's own writes."""
    _check(seed, *_program(session, seed, regions=False))


@pytest.mark.parametrize("seed", range(FAILURE_PROGRAMS // 2))
def test_random_programs_with_failures_over_region_buffers_follow_the_sticky_failure_rules(unix_session, seed):
    """The same over the Unix socket, about half the buffers living in regions: their reads and writes go through
    the region's bytes (a download into them, a write in place and host-written), and a read that fails by its own
    waits leaves the buffer readable."""
    _check(seed, *_program(unix_session, 1000 + seed, regions=True))
