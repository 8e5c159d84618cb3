#!/usr/bin/env python3
"""Open-model HTTP/1.1 load generator for payments-authorization (python3 standard library only).

Why not wrk or hey: both are closed-model (a fixed set of connections, each waiting for its answer before
sending the next request). When a server stalls during a deploy, a closed-model client simply sends less, and
the stall disappears from the numbers. Here request i is due at t0 + i/rate, whatever happened to the earlier
ones; latency is measured from that due time, so a stall shows up as latency (no coordinated omission).

Honesty rules, deliberately kept:
- no retries of any kind: one attempt per request, its outcome recorded as it happened;
- every POST carries a fresh Idempotency-Key that is never sent again, so "each key got at most one 201" and
  "201s seen == authorizer invocations counted by the service" are meaningful checks;
- a keep-alive connection is only reused when the previous response did not ask to close it.

Output: one CSV row per request (--out), and a one-line JSON summary on stdout.
Stops after --duration seconds, or earlier on SIGINT/SIGTERM (stop scheduling, let what is in flight finish).
"""
import argparse
import asyncio
import csv
import json
import signal
import sys
import time
import uuid

# The development key of config/dev (merchant m_123); lib.sh starts the instances with its hash.
AUTHORIZATION = "Bearer pa_dev_4Kq9Xz2Lm7Pw3Rt8Vb6Nc1Hs5Jd0Fg"
CARD_BODY = ('{{"merchantId":"m_123","reference":"{ref}","amount":{{"value":{amount},"currency":"EUR"}},'
             '"card":{{"number":"4111111111111111","expiryMonth":12,"expiryYear":2030,"cvc":"123"}}}}')


class Pool:
    """Idle keep-alive connections to one host:port; opens a new one whenever none is idle (open model)."""

    def __init__(self, host, port, max_conns):
        self.host, self.port = host, port
        self.idle = []
        # A ceiling so that a server which stops answering cannot make us open thousands of sockets; a request
        # waiting here still has its latency counted from its due time.
        self.slots = asyncio.Semaphore(max_conns)
        self.opened = 0

    async def get(self):
        await self.slots.acquire()
        while self.idle:
            reader, writer = self.idle.pop()
            if not writer.is_closing() and not reader.at_eof():
                return reader, writer, True
            writer.close()
        try:
            reader, writer = await asyncio.open_connection(self.host, self.port)
        except BaseException:
            self.slots.release()
            raise
        self.opened += 1
        return reader, writer, False

    def put(self, conn, keep):
        reader, writer = conn
        if keep:
            self.idle.append((reader, writer))
        else:
            writer.close()
        self.slots.release()



def error_name(e):
    """The `error` column for an exception raised while sending a request or reading its answer (TimeoutError and
    the connection errors are OSErrors too: the specific ones first)."""
    if isinstance(e, TimeoutError):
        return "timeout"
    if isinstance(e, asyncio.IncompleteReadError):
        return "incomplete_response"
    if isinstance(e, ConnectionRefusedError):
        return "connect_refused"
    if isinstance(e, (ConnectionResetError, BrokenPipeError)):
        return "connection_reset"
    if isinstance(e, OSError):
        return "os_error_%s" % (e.errno or type(e).__name__)
    return "bad_response"

async def read_response(reader):
    """Returns (status, headers{lower-name: value}, body bytes). Raises on a short or malformed response."""
    status_line = await reader.readline()
    if not status_line:
        raise ConnectionResetError("closed before status line")
    parts = status_line.split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
        raise ValueError("bad status line %r" % status_line[:60])
    status = int(parts[1])
    headers = {}
    while True:
        line = await reader.readline()
        if not line:
            raise ConnectionResetError("closed inside headers")
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        body = b""
        while True:
            size = int((await reader.readline()).split(b";")[0], 16)
            chunk = await reader.readexactly(size + 2)
            if size == 0:
                break
            body += chunk[:-2]
    else:
        body = await reader.read()  # delimited by close
        headers["connection"] = "close"
    return status, headers, body


class Run:
    def __init__(self, args):
        self.args = args
        self.pool = Pool(args.host, args.port, args.max_conns)
        self.rows = []
        self.stopping = False
        self.run_id = args.key_prefix or uuid.uuid4().hex[:12]
        # epoch = monotonic + offset: rows carry wall-clock milliseconds so they line up with the driver's events
        self.offset = time.time() - time.monotonic()

    def request_bytes(self, seq):
        if self.args.ping_every and seq % self.args.ping_every == 0:
            return "GET", "", (b"GET /ping HTTP/1.1\r\nHost: %b\r\n\r\n" % self.args.host.encode())
        key = "%s-%d" % (self.run_id, seq)
        body = CARD_BODY.format(ref="load-%d" % seq, amount=100 + seq % 9000).encode()
        head = ("POST /v1/authorizations HTTP/1.1\r\nHost: %s\r\nAuthorization: %s\r\n"
                "Content-Type: application/json\r\nIdempotency-Key: \"%s\"\r\nContent-Length: %d\r\n\r\n"
                % (self.args.host, AUTHORIZATION, key, len(body)))
        return "POST", key, head.encode() + body

    async def one(self, seq, due):
        method, key, payload = self.request_bytes(seq)
        start = time.monotonic()
        status, error, backend, replayed, reused = 0, "", "", "", ""
        conn = None
        keep = False
        try:
            async with asyncio.timeout(self.args.timeout):
                reader, writer, was_reused = await self.pool.get()
                conn = (reader, writer)
                reused = int(was_reused)
                writer.write(payload)
                await writer.drain()
                status, headers, _ = await read_response(reader)
                backend = headers.get("x-backend", "")
                replayed = headers.get("idempotent-replayed", "")
                keep = headers.get("connection", "").lower() != "close"
        except (OSError, asyncio.IncompleteReadError, ValueError) as e:
            error = error_name(e)
        finally:
            if conn is not None:
                self.pool.put(conn, keep and not error)
        end = time.monotonic()
        o = self.offset
        self.rows.append((seq, method, key, round((due + o) * 1000, 1), round((start + o) * 1000, 1),
                          round((end + o) * 1000, 1), round((end - due) * 1000, 2), status, error, backend,
                          replayed, reused))

    async def main(self):
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.stop)
        total = int(self.args.rate * self.args.duration)
        t0 = time.monotonic() + 0.05
        tasks = set()
        seq = 0
        while seq < total and not self.stopping:
            due = t0 + seq / self.args.rate
            delay = due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            # Fire every request that is due now; when we fall behind they go out back to back, and the lag is
            # recorded (start - due) so a client that cannot keep up is visible in the results.
            now = time.monotonic()
            while seq < total and t0 + seq / self.args.rate <= now and not self.stopping:
                task = asyncio.create_task(self.one(seq, t0 + seq / self.args.rate))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
                seq += 1
        if tasks:
            await asyncio.wait(tasks, timeout=self.args.timeout + 1)
        for reader, writer in self.pool.idle:
            writer.close()
        return seq

    def stop(self):
        self.stopping = True

    def write(self, sent, elapsed):
        with open(self.args.out, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["seq", "method", "key", "due_ms", "start_ms", "end_ms", "latency_ms", "status", "error",
                        "backend", "replayed", "reused_conn"])
            w.writerows(sorted(self.rows))
        ok = sum(1 for r in self.rows if 200 <= r[7] < 300)
        lags = sorted(r[4] - r[3] for r in self.rows)
        lag_p99 = lags[int(0.99 * (len(lags) - 1))] if lags else 0
        print(json.dumps({"offered_rps": self.args.rate, "sent": sent, "completed": len(self.rows), "ok": ok,
                          "not_ok": len(self.rows) - ok, "elapsed_s": round(elapsed, 2),
                          "client_lag_p99_ms": round(lag_p99, 1), "connections_opened": self.pool.opened}))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--rate", type=float, required=True, help="requests per second (constant arrival rate)")
    p.add_argument("--duration", type=float, required=True, help="upper bound in seconds")
    p.add_argument("--ping-every", type=int, default=10, help="every Nth request is GET /ping (0: none)")
    p.add_argument("--timeout", type=float, default=20.0, help="per request, seconds")
    p.add_argument("--max-conns", type=int, default=2000)
    p.add_argument("--key-prefix", default="", help="idempotency keys are <prefix>-<seq>; default random")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    if not args.host.startswith("127.") and args.host not in ("localhost", "::1"):
        sys.exit("loadgen only targets loopback addresses")
    run = Run(args)
    started = time.monotonic()
    sent = asyncio.run(run.main())
    run.write(sent, time.monotonic() - started)


if __name__ == "__main__":
    main()
