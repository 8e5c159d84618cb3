#!/usr/bin/env python3
"""The fault soak's clients: a population of payments, each retried on random replicas until it is answered
(python3 with aiohttp, Debian's python3-aiohttp: one keep-alive connection pool per replica).

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

--lifecycle (both commands): after its first 201, each authorization goes through a lifecycle plan drawn at random
(see PLANS): partial captures one after the other (then, half the time, the exact remainder and one capture
more, refused); captures racing each other with different keys and a void;
a capture then a void then a capture; a void then a capture; a capture sent after expiresAt (--validity seconds
after the authorization); nothing (left to expire); a capture of a declined one. Every capture and void has its own
Idempotency-Key, a share (--double-pct) is submitted twice at once on both replicas, and each submission retries
with the same key as above until a 201 or a definitive answer (400-422, or 409 not-capturable; a 409 in flight is
retried). A void is sent with no body or with {} at random, attempt by attempt (the same request). verify then also
replays every capture and void key that got a 201 or never got a definitive answer, GETs each capture and void id on
every replica, and keeps every authorization's GET (its current state) for the report.
"""
import argparse
import asyncio
import csv
import errno
import hashlib
import json
import os
import random
import signal
import sys
import time

import aiohttp

MERCHANT = "m_123"
# The development key of config/dev for MERCHANT; run.sh starts the replicas with its hash.
AUTHORIZATION = "Bearer pa_dev_4Kq9Xz2Lm7Pw3Rt8Vb6Nc1Hs5Jd0Fg"
# Every ninth payment declines (the issuer decides it like an approval: once per attempt id); the rest approve.
CARDS = ("4111111111111111", "5555555555554444", "4111111111111111", "5555555555554444", "4111111111111111",
         "5555555555554444", "4111111111111111", "5555555555554444", "4000000000000002")
DEFINITIVE_4XX = {400, 401, 403, 404, 405, 413, 415, 422}
RETRY_AFTER_CAP_S = 2.0
# Lifecycle plans of an approved authorization and their weights (%); a declined one gets "declined-capture" in
# DECLINED_CAPTURE_PCT % of cases.
PLANS = (("partial", 30), ("race", 25), ("capture-void", 15), ("void", 12), ("late", 10), ("none", 8))
DECLINED_CAPTURE_PCT = 50
# Captures and voids unanswered at once, at most, per --concurrency slot: enough that an authorization's plan starts
# right after its 201 (not behind a queue that outlasts the validity), bounded against a replica that stops answering.
OPS_PER_KEY_SLOT = 3


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


def error_name(e):
    """The `error` column for an exception raised while sending a request or reading its answer."""
    if isinstance(e, (TimeoutError, asyncio.TimeoutError)):
        return "timeout"
    if isinstance(e, aiohttp.ClientPayloadError):
        return "incomplete_response"
    cause = e.os_error if isinstance(e, aiohttp.ClientConnectorError) else e
    # aiohttp reports a reset while sending or reading as ClientOSError with the errno, not as ConnectionResetError
    code = getattr(cause, "errno", None)
    if isinstance(cause, ConnectionRefusedError) or code == errno.ECONNREFUSED:
        return "connect_refused"
    if (isinstance(cause, (ConnectionResetError, BrokenPipeError, aiohttp.ServerDisconnectedError))
            or code in (errno.ECONNRESET, errno.EPIPE)):
        return "connection_reset"
    if isinstance(cause, OSError):
        return "os_error_%s" % (cause.errno or type(cause).__name__)
    return "bad_response"


class Replica:
    """One replica's address and its keep-alive pool (at most max_conns connections, opened as needed)."""

    def __init__(self, index, address, max_conns):
        host, _, port = address.rpartition(":")
        if not host.startswith("127.") and host not in ("localhost", "::1"):
            sys.exit("the soak only targets loopback addresses: %s" % address)
        self.index, self.host, self.port = index, host, int(port)
        self.max_conns = max_conns
        self.session = None

    def http(self):
        """The replica's aiohttp session, made on first use (inside the running event loop)."""
        if self.session is None:
            self.session = aiohttp.ClientSession(
                "http://%s:%d" % (self.host, self.port), auto_decompress=False,
                connector=aiohttp.TCPConnector(limit=self.max_conns, force_close=False))
        return self.session


class Client:
    """Sends requests to the replicas and keeps one CSV row per request."""

    ROW = ["phase", "key", "submission", "attempt", "replica", "start_ms", "end_ms", "latency_ms", "timeout_s",
           "status", "error", "replayed", "id", "body_sha256", "retry_after"]

    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        # With a lifecycle the captures and voids run beside the authorizations (up to OPS_PER_KEY_SLOT x as many).
        conns = args.concurrency * (2 + 2 * OPS_PER_KEY_SLOT if args.lifecycle else 2) + 8
        self.replicas = [Replica(i + 1, a, conns) for i, a in enumerate(args.replica)]
        self.rows = []
        self.offset = time.time() - time.monotonic()

    def epoch_ms(self, mono):
        return round((mono + self.offset) * 1000, 1)

    async def request(self, replica, req, timeout):
        """One request, req = (method, path, headers, body bytes or None): (status, headers with lower-case names,
        body bytes, error kind). Status 0 when there was no answer within timeout (s)."""
        method, path, headers, data = req
        try:
            async with asyncio.timeout(timeout):
                # data None, not b"": aiohttp would give an empty body a Content-Type of its own
                async with replica.http().request(method, path, headers=headers, data=data or None,
                                                  allow_redirects=False) as response:
                    body = await response.read()
                    return (response.status, {k.lower(): v for k, v in response.headers.items()}, body, "")
        except (OSError, asyncio.TimeoutError, aiohttp.ClientError) as e:
            return 0, {}, b"", error_name(e)

    def post_request(self, key, body):
        return ("POST", "/v1/authorizations", {"Authorization": AUTHORIZATION, "Content-Type": "application/json",
                                               "Idempotency-Key": '"%s"' % key}, body)

    def op_request(self, op):
        """A capture's or a void's POST; a void without a body or with {} at random (the same request)."""
        path = "/v1/authorizations/%s/%s" % (op["authorization_id"], "captures" if op["kind"] == "capture" else "voids")
        if op["kind"] == "capture":
            body = json.dumps({"amount": {"value": op["amount"], "currency": "EUR"}}, separators=(",", ":")).encode()
        else:
            body = b"{}" if self.rng.random() < 0.5 else b""
        headers = {"Authorization": AUTHORIZATION, "Idempotency-Key": '"%s"' % op["key"]}
        if body:
            headers["Content-Type"] = "application/json"
        return "POST", path, headers, body

    async def submit(self, phase, p, submission, deadline, first_replica=None):
        """Retries one payment until a 201 or a definitive 4xx; records every 201 in p. Returns the outcome."""
        return await self.send(phase, p, submission, deadline, first_replica,
                               lambda: self.post_request(p["key"], p["body"]))

    async def send(self, phase, p, submission, deadline, first_replica, build):
        """Retries one request (an authorization, a capture or a void) until a 201 or a definitive answer."""
        attempt = 0
        failures = 0
        while True:
            attempt += 1
            replica = first_replica if attempt == 1 and first_replica else self.rng.choice(self.replicas)
            timeout = self.args.timeout
            if self.rng.random() * 100 < self.args.short_timeout_pct:
                timeout = round(self.rng.uniform(0.1, 0.8), 3)
            start = time.monotonic()
            status, headers, body, error = await self.request(replica, build(), timeout)
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
            # A lifecycle refusal (409 not-capturable) is an answer; a 409 in flight (Retry-After) is retried.
            if status in DEFINITIVE_4XX or (status == 409 and b"not-capturable" in body):
                p["rejections"].append({"status": status, "at_ms": self.epoch_ms(end),
                                        "body": body.decode("utf-8", "replace")[:300]})
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

    async def close(self):
        for r in self.replicas:
            if r.session is not None:
                await r.session.close()


class Lifecycle:
    """The captures and voids of the soak's authorizations (--lifecycle)."""

    def __init__(self, client, args):
        self.client, self.args = client, args
        self.rng = client.rng
        self.limit = asyncio.Semaphore(args.concurrency * OPS_PER_KEY_SLOT)

    def plan(self, p):
        first = json.loads(p["created"][0]["body"])
        if first.get("status") != "APPROVED":
            return "declined-capture" if self.rng.random() * 100 < DECLINED_CAPTURE_PCT else "none"
        r, total = self.rng.random() * 100, 0
        for name, weight in PLANS:
            total += weight
            if r < total:
                return name
        return "none"

    def new_op(self, p, kind, amount=0):
        op = {"key": "%s-%s%d" % (p["key"], kind[0], len(p["ops"]) + 1), "kind": kind, "amount": amount,
              "authorization_id": p["authorization_id"], "created": [], "rejections": [], "outcomes": [],
              "double": self.rng.random() * 100 < self.args.double_pct and len(self.client.replicas) > 1}
        p["ops"].append(op)
        return op

    async def run_op(self, op, delay=0.0):
        """Sends one capture or void (twice at once for a double) until answered; returns its first 201 or None."""
        if delay:
            await asyncio.sleep(delay)
        client = self.client
        async with self.limit:
            start = time.monotonic()
            op["first_sent_ms"] = client.epoch_ms(start)
            deadline = start + self.args.key_deadline
            build = lambda: client.op_request(op)  # noqa: E731
            if op["double"]:
                first, second = self.rng.sample(client.replicas, 2)
                op["outcomes"] = list(await asyncio.gather(
                    client.send("soak", op, 1, deadline, first, build),
                    client.send("soak", op, 2, deadline, second, build)))
            else:
                op["outcomes"] = [await client.send("soak", op, 1, deadline, None, build)]
            op["done_ms"] = client.epoch_ms(time.monotonic())
        return json.loads(op["created"][0]["body"]) if op["created"] else None

    def part(self, amount, low, high):
        return max(1, -(-amount * self.rng.randint(low, high) // 100))

    async def run(self, p):
        """The plan of one authorization, once its POST was answered."""
        p["ops"] = []
        if not p["created"]:
            p["plan"] = "unanswered"
            return
        p["authorization_id"] = p["created"][0]["id"]
        plan = p["plan"] = self.plan(p)
        amount = p["amount"]
        if plan == "partial":           # 2-4 partial captures one after the other, the last ones maybe too much;
            captured = 0                # half the time then the exact remainder (CAPTURED) and 1 more (refused)
            for _ in range(self.rng.randint(2, 4)):
                answer = await self.run_op(self.new_op(p, "capture", self.part(amount, 15, 45)))
                captured += answer["amount"]["value"] if answer and answer.get("status") == "SUCCEEDED" else 0
            if captured < amount and self.rng.random() < 0.5:
                await self.run_op(self.new_op(p, "capture", amount - captured))
                await self.run_op(self.new_op(p, "capture", 1))
        elif plan == "race":            # 3-5 captures of 30-50 % each and a void, all at once (skewed 0-0.3 s)
            ops = [self.new_op(p, "capture", self.part(amount, 30, 50)) for _ in range(self.rng.randint(3, 5))]
            ops.append(self.new_op(p, "void"))
            await asyncio.gather(*(self.run_op(op, self.rng.uniform(0, 0.3)) for op in ops))
        elif plan == "capture-void":    # a partial capture, a void, then a capture that must be refused
            await self.run_op(self.new_op(p, "capture", self.part(amount, 20, 60)))
            await self.run_op(self.new_op(p, "void"))
            await self.run_op(self.new_op(p, "capture", 1))
        elif plan == "void":            # a void, then a capture that must be refused
            await self.run_op(self.new_op(p, "void"))
            await self.run_op(self.new_op(p, "capture", self.part(amount, 10, 100)))
        elif plan == "late":            # a capture after expiresAt: must be refused
            expires = json.loads(p["created"][0]["body"]).get("expiresAt")
            wait = self.args.validity + self.rng.uniform(0.3, 2.0)
            p["late_wait_s"] = wait
            first_201 = min(c["at_ms"] for c in p["created"]) / 1000
            await asyncio.sleep(max(0.0, first_201 + wait - time.time()))
            p["late_expires_at"] = expires
            await self.run_op(self.new_op(p, "capture", self.part(amount, 10, 100)))
        elif plan == "declined-capture":
            await self.run_op(self.new_op(p, "capture", 1))


async def soak(args):
    client = Client(args)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stopping.set)
    in_flight = asyncio.Semaphore(args.concurrency)
    lifecycle = Lifecycle(client, args) if args.lifecycle else None
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
        if lifecycle:
            await lifecycle.run(p)

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
    # A lifecycle adds at most a few keys' deadlines after the authorization's, and a late capture the validity.
    budget = args.duration + args.key_deadline + 30 + (3 * args.key_deadline + args.validity if args.lifecycle else 0)
    await asyncio.wait(tasks, timeout=budget) if tasks else None
    await client.close()
    client.write_attempts(os.path.join(args.out, "attempts.csv"))
    with open(os.path.join(args.out, "keys.jsonl"), "w") as f:
        for p in payments:
            p = dict(p, body=p["body"].decode())
            f.write(json.dumps(p) + "\n")
    outcomes = {}
    for p in payments:
        for o in p["outcomes"] or ["unfinished"]:
            outcomes[o] = outcomes.get(o, 0) + 1
        for op in p.get("ops", []):
            for o in op["outcomes"] or ["unfinished"]:
                outcomes[op["kind"] + " " + o] = outcomes.get(op["kind"] + " " + o, 0) + 1
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
        req = ("GET", "/v1/authorizations/%s" % auth_id, {"Authorization": AUTHORIZATION}, None)
        for attempt in range(10):
            status, _, body, error = await client.request(replica, req, args.timeout)
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
            ops = []
            for op in p.get("ops", []) if args.lifecycle else []:
                ops.append(await verify_op(op))
            gets = {}
            if last_id:
                for replica in client.replicas:
                    status, body = await get(replica, last_id)
                    gets[str(replica.index)] = {"status": status, "body": body}
            results.append({"key": p["key"], "reference": p["reference"], "replay_outcome": outcome,
                            "replay": replay, "id": last_id, "gets": gets, "ops": ops})

    async def verify_op(op):
        """A capture's or a void's replay (when it got a 201 or no definitive answer), then GET of its id."""
        build = lambda: client.op_request(op)  # noqa: E731
        replay, outcome = None, None
        if op["created"] or not op["rejections"]:
            before = len(op["created"])
            outcome = await client.send("verify", op, 0, time.monotonic() + args.key_deadline, None, build)
            replay = op["created"][before] if len(op["created"]) > before else None
        ids = [c["id"] for c in op["created"]]
        gets = {}
        if ids:
            for replica in client.replicas:
                status, body = await get(replica, "%s/%s/%s" % (
                    op["authorization_id"], "captures" if op["kind"] == "capture" else "voids", ids[-1]))
                gets[str(replica.index)] = {"status": status, "body": body}
        return {"key": op["key"], "replay_outcome": outcome, "replay": replay, "id": ids[-1] if ids else None,
                "gets": gets}

    await asyncio.gather(*(one(p) for p in payments))
    await client.close()
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
    p.add_argument("--lifecycle", action="store_true", help="capture or void each authorization (see above)")
    p.add_argument("--validity", type=float, default=604800.0,
                   help="seconds an authorization is capturable (the service's authorization.validity)")
    args = p.parse_args()
    if not args.run_id:
        args.run_id = "%x" % random.getrandbits(40)
    asyncio.run(soak(args) if args.command == "soak" else verify(args))


if __name__ == "__main__":
    main()
