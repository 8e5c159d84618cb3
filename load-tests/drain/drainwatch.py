#!/usr/bin/env python3
"""Sends SIGTERM to one service instance and watches its shutdown from the outside (python3 standard library).

Every --poll-ms it asks, each over a fresh connection (a kept-alive one would hide a closed listener):
  - GET /health/ready on the health port      -> when readiness turned 503 (the first thing the service does);
  - can the business port still be connected? -> when the listener stopped accepting (start of the drain phase);
  - HAProxy's status for this server          -> when the load balancer took it out (fall x inter after the 503);
  - GET /metrics (every 4th poll once draining) -> the last scrape before the health listener closes holds
    shutdown_duration_seconds{phase} and authorizer_invocations_total, which the driver needs.
It stops when the process has exited (or after --timeout) and prints one JSON object.
Times are epoch milliseconds, so they line up with the load generator's per-request CSV.
"""
import argparse
import json
import os
import re
import signal
import socket
import time
import urllib.request


def now_ms():
    return time.time() * 1000


def http_get(port, path, timeout):
    """(status, body) or (None, error-name) over a fresh connection. Reads exactly Content-Length bytes: Helidon
    answers `Connection: close` with the header but keeps the socket open, so reading until EOF would hang."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(b"GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n" % path.encode())
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = s.recv(65536)
                if not chunk:
                    raise ConnectionResetError("closed inside headers")
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = re.search(rb"(?i)\r\ncontent-length:\s*(\d+)", head)
            if not length:
                raise ValueError("no Content-Length")
            while len(body) < int(length.group(1)):
                chunk = s.recv(65536)
                if not chunk:
                    raise ConnectionResetError("closed inside body")
                body += chunk
        return int(head.split(b" ", 2)[1]), body.decode("utf-8", "replace")
    except (OSError, IndexError, ValueError) as e:
        return None, type(e).__name__


def can_connect(port, timeout):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout):
            return True
    except OSError:
        return False


def haproxy_status(stats_url, server):
    try:
        with urllib.request.urlopen(stats_url, timeout=0.5) as r:
            for line in r.read().decode().splitlines():
                f = line.split(",")
                if len(f) > 17 and f[0] == "instances" and f[1] == server:
                    return f[17]
    except OSError:
        return None
    return None


def exited(pid):
    """True once the process is gone or a zombie waiting for the driver's `wait`.

    The process can be reaped between the open and the read of its stat file: the read then fails with ESRCH
    (ProcessLookupError), not ENOENT, so any error reading the file of a process that was there means it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True


METRIC = re.compile(r'^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)$')


def parse_metrics(text):
    """The few series the reports use: shutdown phase sums and counts, decided authorizations, keys released."""
    out = {"shutdown_seconds": {}, "authorizer_invocations": 0.0, "keys_released": 0.0, "in_flight": None}
    for line in text.splitlines():
        m = METRIC.match(line.strip())
        if not m:
            continue
        name, labels, value = m.group(1), m.group(2) or "", float(m.group(3))
        phase = re.search(r'phase="([^"]+)"', labels)
        if name == "shutdown_duration_seconds_sum" and phase:
            out["shutdown_seconds"][phase.group(1)] = value
        elif name == "shutdown_duration_seconds_count" and phase:
            out["shutdown_seconds"].setdefault("_count", {})[phase.group(1)] = value
        elif name == "authorizer_invocations_total" and 'outcome="unknown"' not in labels:
            out["authorizer_invocations"] += value  # decided: approved or declined
        elif name == "authorizer_invocations_total":
            out["authorizer_unknown"] = out.get("authorizer_unknown", 0.0) + value  # issuer timeout/failure
        elif name == "idempotency_keys_released_total":
            out["keys_released"] += value
        elif name == "http_in_flight_requests":
            out["in_flight"] = value
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--health-port", type=int, required=True)
    p.add_argument("--business-port", type=int, required=True)
    p.add_argument("--stats-url", required=True)
    p.add_argument("--server", required=True, help="HAProxy server name, e.g. s1")
    p.add_argument("--poll-ms", type=float, default=50)
    p.add_argument("--timeout", type=float, default=40)
    a = p.parse_args()
    poll = a.poll_ms / 1000

    status, body = http_get(a.health_port, "/metrics", 1.0)
    before = parse_metrics(body) if status == 200 else None
    signal_ms = now_ms()
    os.kill(a.pid, signal.SIGTERM)

    ev = {"signal_ms": signal_ms, "first_ready_503_ms": None, "business_closed_ms": None,
          "haproxy_down_ms": None, "health_closed_ms": None, "exited_ms": None}
    readiness = []          # (ms, status or error) on every change
    last_metrics, last_metrics_ms = None, None
    prev, polls = "start", 0
    deadline = signal_ms + a.timeout * 1000
    while now_ms() < deadline:
        t = now_ms()
        status, body = http_get(a.health_port, "/health/ready", poll * 4)
        seen = status if status is not None else body
        if seen != prev:
            readiness.append((round(t, 1), seen))
            prev = seen
        if status == 503 and ev["first_ready_503_ms"] is None:
            ev["first_ready_503_ms"] = t
        if status is None and ev["health_closed_ms"] is None and ev["first_ready_503_ms"] is not None:
            ev["health_closed_ms"] = t
        if ev["business_closed_ms"] is None and not can_connect(a.business_port, poll * 4):
            ev["business_closed_ms"] = now_ms()
        if ev["haproxy_down_ms"] is None and (haproxy_status(a.stats_url, a.server) or "").startswith("DOWN"):
            ev["haproxy_down_ms"] = now_ms()
        if status is not None and polls % 4 == 0 and ev["exited_ms"] is None:
            ms, text = http_get(a.health_port, "/metrics", 1.0)
            if ms == 200:
                last_metrics, last_metrics_ms = text, now_ms()
        if ev["exited_ms"] is None and exited(a.pid):
            ev["exited_ms"] = now_ms()
        if ev["exited_ms"] is not None and (ev["haproxy_down_ms"] is not None or now_ms() > ev["exited_ms"] + 10000):
            break
        polls += 1
        time.sleep(max(0.0, poll - (now_ms() - t) / 1000))

    rel = {k.replace("_ms", "_after_signal_ms"): (round(v - signal_ms, 1) if v else None)
           for k, v in ev.items() if k != "signal_ms"}
    print(json.dumps({
        "signal_ms": round(signal_ms, 1), **rel,
        "readiness_changes": [(round(t - signal_ms, 1), s) for t, s in readiness],
        "metrics_before_signal": before,
        "metrics_last_scrape": parse_metrics(last_metrics) if last_metrics else None,
        "metrics_last_scrape_after_signal_ms": round(last_metrics_ms - signal_ms, 1) if last_metrics_ms else None,
    }))


if __name__ == "__main__":
    main()
