#!/usr/bin/env python3
"""The fault soak's clients: a population of payments, each retried on random replicas until it is answered
(python3 standard library only; HTTP/1.1 over the load tests' own keep-alive pool, see ../lib/loadgen.py).

    client.py soak   --replica 127.0.0.1:P1 --replica 127.0.0.1:P2 --keys 3000 --duration 180 --out DIR
    client.py verify --replica 127.0.0.1:P1 --replica 127.0.0.1:P2 --out DIR

soak: key i is first sent at t0 + i * duration / keys (at most --concurrency keys unanswered at once). Every key is
a distinct business payment (its own Idempotency-Key and its own reference). A share of the keys (--double-pct) is
submitted twice at once, on both replicas, as a double-clicking customer or a retrying gateway would. Each submission
retries on a random replica until it gets a 201 or a definitive 4xx:
  - 409, 429, 5xx: after Retry-After (capped at 2 s, with jitter), else after a short backoff;
  - connection refused or reset, malformed answer: after a backoff of 50 ms doubling up to 1 s;
  - no answer within the attempt's timeout (--timeout; a share --short-timeout-pct of attempts gets a timeout of
    0.1-0.8 s instead, cutting requests off while the issuer call runs): at once.
It gives up on a key --key-deadline seconds after its first send. Writes attempts.csv (one row per request) and
keys.jsonl (per key: every 201's id, body and Location, the outcome of each submission).

verify (after the faults have stopped): sends every key's request once more on a random replica, with the same
retries (a replay: it must answer the same id), then GET /v1/authorizations/{id} on every replica for the id the
key was answered with. Writes verify.jsonl and adds the replays to attempts-verify.csv.
"""
import argparse
import asyncio
import csv
import hashlib
import json
import os
import random
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from loadgen import Pool, error_name, read_response  # noqa: E402

MERCHANT = "m_123"
# The development key of config/dev for MERCHANT; run.sh starts the replicas with its hash.
AUTHORIZATION = "Bearer pa_dev_4Kq9Xz2Lm7Pw3Rt8Vb6Nc1Hs5Jd0Fg"
# Every ninth payment declines (the issuer decides it like an approval: once per attempt id); the rest approve.
CARDS = ("4111111111111111", "5555555555554444", "4111111111111111", "5555555555554444", "4111111111111111",
         "5555555555554444", "4111111111111111", "5555555555554444", "4000000000000002")
DEFINITIVE_4XX = {400, 401, 403, 404, 405, 413, 415, 422}
RETRY_AFTER_CAP_S = 2.0


def payment(run_id, i):
    """(idempotency key, reference, card, amount, body bytes) of payment i of a run."""
    key = "%s-%d" % (run_id, i)
    reference = "soak-%s-%d" % (run_id, i)
    card = CARDS[i % len(CARDS)]
    amount = 100 + (i * 7919) % 90000
    body = json.dumps({"merchantId": MERCHANT, "reference": reference,
                       "amount": {"value": amount, "currency": "EUR"},
                       "card": {"number": card, "expiryMonth": 12, "expiryYear": 2030, "cvc": "123"}},
                      separators=(",", ":")).encode()
    return key, reference, card, amount, body


class Replica:
    def __init__(self, index, address, max_conns):
        host, _, port = address.rpartition(":")
        if not host.startswith("127.") and host not in ("localhost", "::1"):
            sys.exit("the soak only targets loopback addresses: %s" % address)
        self.index, self.host, self.port = index, host, int(port)
        self.pool = Pool(host, self.port, max_conns)


class Client:
    """Sends requests to the replicas and keeps one CSV row per request."""

    ROW = ["phase", "key", "submission", "attempt", "replica", "start_ms", "end_ms", "latency_ms", "timeout_s",
           "status", "error", "replayed", "id", "body_sha256", "retry_after"]

    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.replicas = [Replica(i + 1, a, args.concurrency * 2 + 8) for i, a in enumerate(args.replica)]
        self.rows = []
        self.offset = time.time() - time.monotonic()

    def epoch_ms(self, mono):
        return round((mono + self.offset) * 1000, 1)

    async def request(self, replica, raw, timeout):
        """One request: (status, headers, body bytes, error kind). Status 0 when there was no answer."""
        conn, keep = None, False
        status, headers, body, error = 0, {}, b"", ""
        try:
            async with asyncio.timeout(timeout):
                reader, writer, _ = await replica.pool.get()
                conn = (reader, writer)
                writer.write(raw)
                await writer.drain()
                status, headers, body = await read_response(reader)
                keep = headers.get("connection", "").lower() != "close"
        except (OSError, asyncio.IncompleteReadError, ValueError) as e:
            error = error_name(e)
        finally:
            if conn is not None:
                replica.pool.put(conn, keep and not error)
        return status, headers, body, error

    def post_bytes(self, replica, key, body):
        head = ("POST /v1/authorizations HTTP/1.1\r\nHost: %s:%d\r\nAuthorization: %s\r\n"
                "Content-Type: application/json\r\nIdempotency-Key: \"%s\"\r\nContent-Length: %d\r\n\r\n"
                % (replica.host, replica.port, AUTHORIZATION, key, len(body)))
        return head.encode() + body

    async def submit(self, phase, p, submission, deadline, first_replica=None):
        """Retries one payment until a 201 or a definitive 4xx; records every 201 in p. Returns the outcome."""
        attempt = 0
        failures = 0
        while True:
            attempt += 1
            replica = first_replica if attempt == 1 and first_replica else self.rng.choice(self.replicas)
            timeout = self.args.timeout
            if self.rng.random() * 100 < self.args.short_timeout_pct:
                timeout = round(self.rng.uniform(0.1, 0.8), 3)
            start = time.monotonic()
            status, headers, body, error = await self.request(
                replica, self.post_bytes(replica, p["key"], p["body"]), timeout)
            end = time.monotonic()
            auth_id, sha = "", ""
            if status == 201:
                sha = hashlib.sha256(body).hexdigest()[:16]
                try:
                    auth_id = json.loads(body)["id"]
                except (ValueError, KeyError, TypeError):
                    auth_id = "unparsable"
                p["created"].append({"phase": phase, "submission": submission, "attempt": attempt,
                                     "replica": replica.index, "at_ms": self.epoch_ms(end), "id": auth_id,
                                     "body": body.decode("utf-8", "replace"),
                                     "location": headers.get("location", ""),
                                     "replayed": headers.get("idempotent-replayed", "")})
            self.rows.append((phase, p["key"], submission, attempt, replica.index, self.epoch_ms(start),
                              self.epoch_ms(end), round((end - start) * 1000, 1), timeout, status, error,
                              headers.get("idempotent-replayed", ""), auth_id, sha, headers.get("retry-after", "")))
            if status == 201:
                return "created"
            if status in DEFINITIVE_4XX:
                p["rejections"].append({"status": status, "body": body.decode("utf-8", "replace")[:300]})
                return "rejected-%d" % status
            if time.monotonic() >= deadline:
                return "gave-up"
            if error == "timeout":
                delay = self.rng.uniform(0, 0.05)
            elif status:
                failures = 0
                try:
                    delay = min(float(headers.get("retry-after", "")), RETRY_AFTER_CAP_S)
                except ValueError:
                    delay = 0.2
                delay *= self.rng.uniform(0.5, 1.0)
            else:
                delay = min(0.05 * 2 ** failures, 1.0) * self.rng.uniform(0.5, 1.5)
                failures += 1
            await asyncio.sleep(min(delay, max(0.0, deadline - time.monotonic())))

    def new_payment(self, i):
        key, reference, card, amount, body = payment(self.args.run_id, i)
        return {"index": i, "key": key, "reference": reference, "card_last4": card[-4:], "amount": amount,
                "body": body, "created": [], "rejections": [], "outcomes": [], "double": False}

    def write_attempts(self, path):
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(self.ROW)
            w.writerows(self.rows)

    def close(self):
        for r in self.replicas:
            for _, writer in r.pool.idle:
                writer.close()


async def soak(args):
    client = Client(args)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stopping.set)
    in_flight = asyncio.Semaphore(args.concurrency)
    payments = []
    tasks = []
    lags = []

    async def one(p, due):
        async with in_flight:
            start = time.monotonic()
            lags.append(start - due)
            p["first_sent_ms"] = client.epoch_ms(start)
            deadline = start + args.key_deadline
            if p["double"]:
                first, second = client.rng.sample(client.replicas, 2)
                p["outcomes"] = list(await asyncio.gather(client.submit("soak", p, 1, deadline, first),
                                                          client.submit("soak", p, 2, deadline, second)))
            else:
                p["outcomes"] = [await client.submit("soak", p, 1, deadline)]
            p["done_ms"] = client.epoch_ms(time.monotonic())

    t0 = time.monotonic() + 0.05
    for i in range(args.keys):
        due = t0 + i * args.duration / args.keys
        delay = due - time.monotonic()
        if delay > 0:
            try:
                await asyncio.wait_for(stopping.wait(), delay)
            except TimeoutError:
                pass
        if stopping.is_set():
            break
        p = client.new_payment(i)
        p["double"] = client.rng.random() * 100 < args.double_pct and len(client.replicas) > 1
        payments.append(p)
        tasks.append(asyncio.create_task(one(p, due)))
    await asyncio.wait(tasks, timeout=args.duration + args.key_deadline + 30) if tasks else None
    client.close()
    client.write_attempts(os.path.join(args.out, "attempts.csv"))
    with open(os.path.join(args.out, "keys.jsonl"), "w") as f:
        for p in payments:
            p = dict(p, body=p["body"].decode())
            f.write(json.dumps(p) + "\n")
    outcomes = {}
    for p in payments:
        for o in p["outcomes"] or ["unfinished"]:
            outcomes[o] = outcomes.get(o, 0) + 1
    lags.sort()
    print(json.dumps({"keys": len(payments), "requests": len(client.rows), "outcomes": outcomes,
                      "start_lag_p99_ms": round(lags[int(0.99 * (len(lags) - 1))] * 1000, 1) if lags else None}))


async def verify(args):
    """Replays every key once (random replica, same retries), then GETs its id on every replica."""
    client = Client(args)
    with open(os.path.join(args.out, "keys.jsonl")) as f:
        payments = [json.loads(line) for line in f]
    limit = asyncio.Semaphore(args.concurrency)
    results = []

    async def get(replica, auth_id):
        raw = ("GET /v1/authorizations/%s HTTP/1.1\r\nHost: %s:%d\r\nAuthorization: %s\r\n\r\n"
               % (auth_id, replica.host, replica.port, AUTHORIZATION)).encode()
        for attempt in range(10):
            status, _, body, error = await client.request(replica, raw, args.timeout)
            if status and status < 500:
                return status, body.decode("utf-8", "replace")
            await asyncio.sleep(0.2 * (attempt + 1))
        return status, error

    async def one(p):
        async with limit:
            p["body"] = p["body"].encode()
            before = len(p["created"])
            outcome = await client.submit("verify", p, 0, time.monotonic() + args.key_deadline)
            replay = p["created"][before] if len(p["created"]) > before else None
            ids = [c["id"] for c in p["created"]]
            last_id = ids[-1] if ids else None
            gets = {}
            if last_id:
                for replica in client.replicas:
                    status, body = await get(replica, last_id)
                    gets[str(replica.index)] = {"status": status, "body": body}
            results.append({"key": p["key"], "reference": p["reference"], "replay_outcome": outcome,
                            "replay": replay, "id": last_id, "gets": gets})

    await asyncio.gather(*(one(p) for p in payments))
    client.close()
    client.write_attempts(os.path.join(args.out, "attempts-verify.csv"))
    with open(os.path.join(args.out, "verify.jsonl"), "w") as f:
        for r in sorted(results, key=lambda r: r["key"]):
            f.write(json.dumps(r) + "\n")
    print(json.dumps({"keys": len(results), "requests": len(client.rows)}))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=("soak", "verify"))
    p.add_argument("--replica", action="append", required=True, help="host:port of a business listener")
    p.add_argument("--out", required=True, help="results directory")
    p.add_argument("--run-id", default="", help="prefix of keys and references (soak); default random")
    p.add_argument("--keys", type=int, default=3000)
    p.add_argument("--duration", type=float, default=180.0, help="seconds over which first sends are spread")
    p.add_argument("--concurrency", type=int, default=32, help="keys unanswered at once, at most")
    p.add_argument("--double-pct", type=float, default=20.0, help="%% of keys submitted twice at once")
    p.add_argument("--timeout", type=float, default=3.0, help="seconds an attempt waits for its answer")
    p.add_argument("--short-timeout-pct", type=float, default=10.0, help="%% of attempts with a 0.1-0.8 s timeout")
    p.add_argument("--key-deadline", type=float, default=90.0, help="seconds after its first send a key gives up")
    p.add_argument("--seed", type=int, default=None)
    args = p.parse_args()
    if not args.run_id:
        args.run_id = "%x" % random.getrandbits(40)
    asyncio.run(soak(args) if args.command == "soak" else verify(args))


if __name__ == "__main__":
    main()
