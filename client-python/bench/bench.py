"""One round of the Python client's figures against their anchors on the same daemon (``bin/arrayd bench python``
runs it in rounds beside the Java client and writes the table and plot):

- launch: an empty kernel's round trip (launch, wait) through the client vs a raw grpcio echo on the same channel;
- throughput: empty launches pipelined with at most ``--window`` unanswered, and this process's CPU time per launch
  meanwhile (``--part launches`` measures these two,
  ``--part transfers`` the rest: the Java side measures client-java's rate around the first);
- transfer: ``--mib`` MiB up (``Buffer.write``) and down (``Buffer.numpy``, into a new array, then again into that
  array with ``out=``) over TCP vs raw grpcio byte streaming of the same bytes (DiagnosticsService.Sink / Source, into
  a new array, then into that one), timed after 64 MiB each way untimed;
- same host (``--unix``): the same arrays through the session's staging region (the download into a new array, from
  the session's pool of regions once the size has been read twice untimed, and again into that array:
  ``numpy(out=)``), a region's upload / download (timed after one of each), and a NumPy memcpy of the same size.

Each transfer figure but a region's is the median of ``PAIRS`` transfers alternating with its anchor's (a new array
each time, the one before freed first).

Progress goes to stderr; the last line of stdout is a JSON object of the figures.
"""
from __future__ import annotations

import argparse
import json
import queue
import statistics
import sys
import time

import numpy as np

import arrayd
from arrayd import _session, _stream
from arrayd.v1 import diagnostics_pb2 as diag


@arrayd.kernel(name="empty", grid_dims=1)
def empty_kernel(k) -> None:
    """The empty kernel every launch-cost figure measures, in the portable IR (what a default daemon runs)."""


#: The chunk DiagnosticsService.Source sends: the size of the pieces the client's downloads arrive in (its
#: completions messages' limit), so that both sides read messages of one size.
SOURCE_CHUNK = _stream.ATTACH_MAX_RECEIVE


def progress(text: str) -> None:
    print(f"bench python: {text}", file=sys.stderr, flush=True)


def cpu_device(client: arrayd.Client) -> str:
    return next(d.id for d in client.devices() if d.backend == "cpu")


class RawEcho:
    """DiagnosticsService.Echo on the client's own channel, fed the way the session stream is (a queue)."""

    def __init__(self, client: arrayd.Client):
        self._q: queue.SimpleQueue = queue.SimpleQueue()

        def requests():
            while True:
                item = self._q.get()
                if item is None:
                    return
                yield item

        call = client._channel.stream_stream("/arrayd.v1.DiagnosticsService/Echo",
                                             request_serializer=diag.EchoRequest.SerializeToString,
                                             response_deserializer=diag.EchoResponse.FromString)
        self._responses = iter(call(requests(), metadata=client._metadata))

    def round_trip(self, seq: int) -> None:
        self._q.put(diag.EchoRequest(seq=seq))
        next(self._responses)

    def close(self) -> None:
        self._q.put(None)


def latency(client: arrayd.Client, s: arrayd.Session, n: int) -> dict:
    dev = cpu_device(client)
    empty = s.compile(empty_kernel, backend="cpu")["empty"]
    echo = RawEcho(client)
    launch_us, echo_us = [], []
    for i in range(n // 4):  # warm-up
        empty(1, device=dev).wait()
        echo.round_trip(i)
    for i in range(n):
        t0 = time.perf_counter_ns()
        empty(1, device=dev).wait()
        t1 = time.perf_counter_ns()
        echo.round_trip(i)
        t2 = time.perf_counter_ns()
        launch_us.append((t1 - t0) / 1e3)
        echo_us.append((t2 - t1) / 1e3)
    echo.close()
    return {"launch_us": statistics.median(launch_us), "echo_us": statistics.median(echo_us)}


def throughput(client: arrayd.Client, s: arrayd.Session, n: int, window: int) -> dict:
    dev = cpu_device(client)
    empty = s.compile(empty_kernel, backend="cpu")["empty"]

    def run(count: int) -> float:
        ring: list = [None] * window
        t0 = time.perf_counter()
        for i in range(count):
            slot = i % window
            if ring[slot] is not None:
                ring[slot].wait()
            ring[slot] = empty(1, device=dev)
        for e in ring:
            if e is not None:
                e.wait()
        return count / (time.perf_counter() - t0)

    run(max(1, n // 4))
    cpu0 = time.process_time()  # (every thread of this process: the program's, the request generator's, gRPC's)
    rate = run(n)
    return {"launches_per_s": rate, "launch_cpu_us": (time.process_time() - cpu0) / n * 1e6}


#: Each transfer figure is the median of this many transfers, alternating with its anchor's (the VM's speed,
#: and the cost of first touching a new array's pages, move by up to 3x from one transfer to the next).
PAIRS = 3


def alternate(size: int, first, second, pairs: int = PAIRS, second_rates: list | None = None) -> tuple[float, float]:
    """Times ``first`` and ``second`` (each moving ``size`` bytes) ``pairs`` times each, alternating which goes
    first (first, second; second, first; ...): the median rate of each in MB/s (``second``'s rates are also
    added to ``second_rates``)."""
    rates: tuple[list, list] = ([], [])
    for i in range(pairs):
        for which in ((0, 1) if i % 2 == 0 else (1, 0)):
            t0 = time.perf_counter()
            (first, second)[which]()
            rates[which].append(size / (time.perf_counter() - t0) / 1e6)
    if second_rates is not None:
        second_rates.extend(rates[1])
    return statistics.median(rates[0]), statistics.median(rates[1])


def transfer_tcp(client: arrayd.Client, s: arrayd.Session, mib: int) -> dict:
    size = mib << 20
    data = np.random.default_rng(0).integers(0, 256, size, dtype=np.uint8)
    buf = s.empty(size, np.uint8, device=cpu_device(client))
    sink = client._channel.stream_unary("/arrayd.v1.DiagnosticsService/Sink",
                                        request_serializer=diag.SinkRequest.SerializeToString,
                                        response_deserializer=diag.SinkResponse.FromString)
    source = client._channel.unary_stream("/arrayd.v1.DiagnosticsService/Source",
                                          request_serializer=diag.SourceRequest.SerializeToString,
                                          response_deserializer=diag.SourceResponse.FromString)
    view = memoryview(data)

    def chunks():
        for start in range(0, size, _session.UPLOAD_CHUNK):
            yield diag.SinkRequest(data=view[start:start + _session.UPLOAD_CHUNK].tobytes())

    def source_into(target: np.ndarray) -> None:
        offset = 0
        for r in source(diag.SourceRequest(total_bytes=size, chunk_bytes=SOURCE_CHUNK), metadata=client._metadata):
            chunk = np.frombuffer(r.data, dtype=np.uint8)
            target[offset:offset + len(chunk)] = chunk
            offset += len(chunk)

    # 64 MiB each way first, untimed: a process's first large transfer each way grows its allocators and the
    # daemon's (a first download also fills the arrays the daemon keeps for downloads), whichever side comes first.
    # (Not the whole size: more memory churned here slows the new arrays of the same-host figures after it.)
    warm = min(size, 64 << 20)
    s.upload(buf, data[:warm]).wait()
    sink((diag.SinkRequest(data=view[start:start + _session.UPLOAD_CHUNK].tobytes())
          for start in range(0, warm, _session.UPLOAD_CHUNK)), metadata=client._metadata)
    for e in s.download(buf, size_bytes=warm):
        e.wait()
    for _ in source(diag.SourceRequest(total_bytes=warm, chunk_bytes=SOURCE_CHUNK), metadata=client._metadata):
        pass
    out = {}
    arrays: dict = {}

    def download_new() -> None:
        arrays.pop("back", None)  # the one before is freed first, as in a loop that reads into new arrays
        arrays["back"] = buf.numpy()

    def source_new() -> None:
        arrays.pop("target", None)
        arrays["target"] = np.empty(size, dtype=np.uint8)
        source_into(arrays["target"])

    out["upload_MBps"], out["sink_MBps"] = alternate(size, lambda: buf.write(data).wait(),
                                                     lambda: sink(chunks(), metadata=client._metadata))
    out["download_MBps"], out["source_MBps"] = alternate(size, download_new, source_new)
    back, target = arrays["back"], arrays["target"]
    if not np.array_equal(back, data):
        raise SystemExit("the download differs from the upload")
    # the same again into the arrays that exist now (their pages touched): what a loop reading into one array pays
    out["download_out_MBps"], out["source_out_MBps"] = alternate(size, lambda: buf.numpy(out=back),
                                                                 lambda: source_into(target))
    if not np.array_equal(back, data):
        raise SystemExit("the download into an existing array differs from the upload")
    s.destroy(buf)
    return out


def same_host(unix_target: str, mib: int) -> dict:
    size = mib << 20
    data = np.random.default_rng(1).integers(0, 256, size, dtype=np.uint8)
    out = {}
    dst = np.empty_like(data)
    np.copyto(dst, data)  # first touch of the memcpy anchor's pages
    memcpy_rates: list = []

    def memcpy() -> None:
        np.copyto(dst, data)

    with arrayd.connect(unix_target) as client, client.session("bench-python-shm") as s:
        buf = s.empty(size, np.uint8, device=cpu_device(client))
        buf.write(data).wait()  # warm-up: the session maps its staging region on its first large transfer
        # and reads the size twice: the second read has the session's pool make a region for new arrays of it,
        # which the reads into new arrays below take, as in a loop that reads into new arrays
        buf.numpy(), buf.numpy()
        if s._pool is not None:
            s._pool.settle()
        arrays: dict = {}

        def download_new() -> None:
            arrays.pop("back", None)  # the one before is freed first, as in a loop that reads into new arrays
            arrays["back"] = buf.numpy()

        out["staged_upload_MBps"] = alternate(size, lambda: buf.write(data).wait(), memcpy,
                                              second_rates=memcpy_rates)[0]
        out["staged_download_MBps"] = alternate(size, download_new, memcpy, second_rates=memcpy_rates)[0]
        back = arrays["back"]
        if not np.array_equal(back, data):
            raise SystemExit("the staged download differs from the upload")
        back[:] = 0  # read again into the same array (its pages touched, as the memcpy anchor's are)
        out["staged_download_out_MBps"] = alternate(size, lambda: buf.numpy(out=back), memcpy,
                                                    second_rates=memcpy_rates)[0]
        if not np.array_equal(back, data):
            raise SystemExit("the staged download into an existing array differs from the upload")
        with s.region(size) as r:
            r.ndarray(np.uint8, (size,))[:] = data  # the application's own write: not timed
            # one transfer each way first, untimed: the first touch of a new region's pages costs more than the
            # copy (as the memcpy anchor's destination, the region is then memory the daemon has touched)
            r.upload(buf).wait()
            r.download(buf).wait()
            t0 = time.perf_counter()
            r.upload(buf).wait()
            out["region_upload_MBps"] = size / (time.perf_counter() - t0) / 1e6
            t0 = time.perf_counter()
            r.download(buf).wait()
            out["region_download_MBps"] = size / (time.perf_counter() - t0) / 1e6
        s.destroy(buf)
    out["memcpy_MBps"] = statistics.median(memcpy_rates)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description="One round of the Python client's figures (see the module's doc).")
    p.add_argument("--target", required=True, help="the daemon over TCP, host:port")
    p.add_argument("--unix", help="the daemon's unix:// target (same-host figures)")
    p.add_argument("--latency", type=int, default=2000, help="round trips timed")
    p.add_argument("--launches", type=int, default=50000, help="pipelined launches timed")
    p.add_argument("--window", type=int, default=1024, help="most launches unanswered at a time")
    p.add_argument("--mib", type=int, default=256, help="MiB per transfer")
    p.add_argument("--part", choices=("all", "launches", "transfers"), default="all",
                   help="the pipelined launches and round trips, the transfers (with --unix, also the same-host "
                        "ones), or all of them")
    args = p.parse_args()
    figures: dict = {}
    with arrayd.connect(args.target) as client, client.session("bench-python") as s:
        if args.part in ("all", "launches"):
            progress(f"throughput: {args.launches} pipelined launches")
            figures.update(throughput(client, s, args.launches, args.window))
            progress(f"latency: {args.latency} round trips")
            figures.update(latency(client, s, args.latency))
        if args.part in ("all", "transfers"):
            progress(f"transfer: {args.mib} MiB over TCP")
            figures.update(transfer_tcp(client, s, args.mib))
    if args.unix and args.part in ("all", "transfers"):
        progress(f"same host: {args.mib} MiB through shared memory")
        figures.update(same_host(args.unix, args.mib))
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
