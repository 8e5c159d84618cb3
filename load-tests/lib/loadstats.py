#!/usr/bin/env python3
"""Summaries of loadgen.py's per-request CSV, shared by the rolling-restart and drain reports.

    loadstats.py summarize FILE.csv          one JSON object (used by the peak search)
"""
import csv
import json
import sys
from collections import Counter


def percentile(values, q):
    """Nearest-rank percentile of an already sorted list (None when empty)."""
    if not values:
        return None
    rank = max(1, -(-len(values) * q // 100))  # ceil(n * q / 100), at least 1
    return values[int(rank) - 1]


def load(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in ("due_ms", "start_ms", "end_ms", "latency_ms"):
            r[k] = float(r[k])
        r["status"] = int(r["status"])
    return rows


def haproxy_state_changes(path):
    """[(epoch_ms, server, "UP"|"DOWN")] from a HAProxy log written with `format iso` ([] for older logs)."""
    import datetime
    import re
    pattern = re.compile(r"^(\S+) Server instances/(\S+) is (UP|DOWN)")
    out = []
    try:
        with open(path) as f:
            for line in f:
                m = pattern.match(line)
                if m:
                    out.append((datetime.datetime.fromisoformat(m.group(1)).timestamp() * 1000, m.group(2),
                                m.group(3)))
    except (OSError, ValueError):
        pass
    return out


def haproxy_down_after(path, server, signal_ms):
    """Milliseconds from signal_ms to HAProxy's own log line taking `server` DOWN, or None."""
    for ms, srv, state in haproxy_state_changes(path):
        if srv == server and state == "DOWN" and ms >= signal_ms:
            return round(ms - signal_ms, 1)
    return None


def summarize(rows):
    ok = [r for r in rows if 200 <= r["status"] < 300]
    http_errors = Counter(str(r["status"]) for r in rows if r["status"] and not 200 <= r["status"] < 300)
    conn_errors = Counter(r["error"] for r in rows if r["error"])
    posts = [r for r in rows if r["method"] == "POST"]
    created_per_key = Counter(r["key"] for r in posts if r["status"] == 201)
    sent_per_key = Counter(r["key"] for r in posts)
    latencies = sorted(r["latency_ms"] for r in ok)
    lags = sorted(r["start_ms"] - r["due_ms"] for r in rows)
    span_s = (max(r["end_ms"] for r in rows) - min(r["due_ms"] for r in rows)) / 1000 if rows else 0
    return {
        "sent": len(rows),
        "posts": len(posts),
        "pings": len(rows) - len(posts),
        "ok_2xx": len(ok),
        "created_201": sum(created_per_key.values()),
        "non_2xx": sum(http_errors.values()),
        "non_2xx_by_status": dict(http_errors),
        "connection_errors": sum(conn_errors.values()),
        "connection_errors_by_kind": dict(conn_errors),
        "keys_sent_more_than_once": sum(1 for n in sent_per_key.values() if n > 1),
        "keys_with_more_than_one_201": sum(1 for n in created_per_key.values() if n > 1),
        "replayed": sum(1 for r in posts if r["replayed"]),
        "latency_p50_ms": percentile(latencies, 50),
        "latency_p99_ms": percentile(latencies, 99),
        "latency_max_ms": latencies[-1] if latencies else None,
        "client_lag_p99_ms": round(percentile(lags, 99), 1) if lags else None,
        "throughput_rps": round(len(ok) / span_s, 1) if span_s else 0,
        "by_backend": dict(Counter(r["backend"] for r in rows)),
    }


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "summarize":
        sys.exit(__doc__)
    print(json.dumps(summarize(load(sys.argv[2]))))
