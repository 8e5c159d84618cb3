#!/usr/bin/env python3
"""Summaries of the open-model client's per-request CSV (lib/gatling), shared by the rolling-restart and drain reports.

    loadstats.py summarize FILE.csv          one JSON object
    loadstats.py rebase FILE.csv             Gatling CSVs: puts the schedule's origin where no request started early
    loadstats.py judge FILE.csv RATE SKIP_S P99_MS LAG_MS MIN_THROUGHPUT_PCT ATTEMPT [MAX_ERRORS]
                                             one peak-search step's verdict (see lt_measure_peak in lib.sh)
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
        # a run cut short can leave a half-written last line: keep whole rows only
        rows = [r for r in csv.DictReader(f) if r.get("reused_conn") is not None]
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


def window(rows, from_ms=None, to_ms=None):
    """Rows whose due time lies in [from_ms, to_ms) (either bound None: open)."""
    return [r for r in rows if (from_ms is None or r["due_ms"] >= from_ms) and (to_ms is None or r["due_ms"] < to_ms)]


def judge(rows, rate, skip_s, p99_max_ms, lag_max_ms, min_throughput_pct, max_errors=0):
    """Verdict of one peak-search step: outcome "pass", "fail" (the service missed a criterion while the client kept
    its schedule, or answered with more than max_errors errors) or "invalid" (the client fell behind: the step says
    nothing about the service). The first skip_s seconds (the client's own JIT warm-up) are not judged."""
    t0 = min(r["due_ms"] for r in rows) if rows else 0
    judged = window(rows, t0 + skip_s * 1000)
    s = summarize(judged)
    service, client = [], []
    failed = s["non_2xx"] + s["connection_errors"]
    if failed > max_errors:
        service.append("errors: %s" % dict(s["non_2xx_by_status"], **s["connection_errors_by_kind"]))
    if s["latency_p99_ms"] is None or s["latency_p99_ms"] > p99_max_ms:
        service.append("p99 %s ms > %s" % (s["latency_p99_ms"], p99_max_ms))
    if s["throughput_rps"] < rate * min_throughput_pct / 100:
        service.append("2xx throughput %s rps < %s%% of %s" % (s["throughput_rps"], min_throughput_pct, rate))
    if (s["client_lag_p99_ms"] or 0) > lag_max_ms:
        client.append("client send lag p99 %s ms > %s" % (s["client_lag_p99_ms"], lag_max_ms))
    errors = failed > max_errors
    outcome = "pass" if not service and not client else ("invalid" if client and not errors else "fail")
    return {"rate": rate, "outcome": outcome, "pass": outcome == "pass", "reasons": service + client,
            **{k: s[k] for k in ("sent", "ok_2xx", "non_2xx", "connection_errors", "latency_p50_ms", "latency_p99_ms",
                                 "client_lag_p99_ms", "throughput_rps")}}


def rebase(path):
    """A Gatling run knows each user's place on the schedule (seq / rate) but not the injector's own origin; the
    simulation guesses it (the first user's start). Rewrites due_ms and latency_ms so that the origin is the latest
    one with no user started before its due time: lag >= 0 everywhere, and 0 for the most punctual user. Returns
    the shift in ms (>= 0: due times only move earlier, so lag and latency only grow)."""
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        rows = [r for r in reader if len(r) == len(header)]   # a half-written last row (a killed client) goes
    i_due, i_start, i_end, i_lat = (header.index(k) for k in ("due_ms", "start_ms", "end_ms", "latency_ms"))
    shift = max([0.0] + [float(r[i_due]) - float(r[i_start]) for r in rows])
    if shift > 0:
        for r in rows:
            r[i_due] = "%.1f" % (float(r[i_due]) - shift)
            r[i_lat] = "%.2f" % (float(r[i_end]) - float(r[i_due]))
        rows.sort(key=lambda r: int(r[0]))
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(header)
            w.writerows(rows)
    return round(shift, 1)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "rebase":
        print(json.dumps({"rebased_by_ms": rebase(sys.argv[2])}))
        sys.exit(0)
    if len(sys.argv) == 3 and sys.argv[1] == "summarize":
        print(json.dumps(summarize(load(sys.argv[2]))))
    elif len(sys.argv) in (9, 10) and sys.argv[1] == "judge":
        v = judge(load(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6]),
                  float(sys.argv[7]), int(sys.argv[9]) if len(sys.argv) == 10 else 0)
        v["attempt"] = int(sys.argv[8])
        v["loadavg"] = open("/proc/loadavg").read().split()[0]
        print(json.dumps(v))
    else:
        sys.exit(__doc__)
