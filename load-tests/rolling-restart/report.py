#!/usr/bin/env python3
"""Turns one rolling-restart results directory into summary.json, reports/rolling-restart.md and a PNG.

    report.py RESULTS_DIR REPORTS_DIR
"""
import glob
import json
import os
import re
import sys
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import loadstats  # noqa: E402
from reporting import ENVIRONMENT_ROWS, environment_section, fmt, gatling_version, read_json, write_report  # noqa: E402
import limits  # noqa: E402  (beside this file)

# HAProxy httplog: ... backend/server Tq/Tw/Tc/Tr/Ta status bytes - - TERM ...
HAPROXY_LINE = re.compile(r'\[(\S+)\] payments instances/(\S+) \S+ (\d+) \d+ \S+ \S+ (\S{4}) ')


def read_counts(path):
    """{server: count} from a "server,count" file; {} when missing."""
    out = {}
    try:
        with open(path) as f:
            for line in f:
                if line.strip():
                    server, _, n = line.strip().partition(",")
                    out[server] = int(n or 0)
    except (OSError, ValueError):
        pass
    return out


def events(run_dir):
    out = []
    with open(os.path.join(run_dir, "events.csv")) as f:
        next(f)
        for line in f:
            ms, ev, slot, detail = line.rstrip("\n").split(",", 3)
            out.append((float(ms), ev, slot, detail))
    return out


def summary_line(run_dir, log_name):
    try:
        with open(os.path.join(run_dir, log_name)) as f:
            for line in f:
                if "Shutdown summary:" in line:
                    return line.split("Shutdown summary:", 1)[1].strip()
                if "stopping both listeners now" in line:   # the naive contender (shutdown.mode naive before)
                    return "(naive: no phases)"
    except OSError:
        pass
    return None


def loadavg(run_dir):
    """1-minute load average at the start and the end of the run, from the event log ("?" when missing)."""
    values = [detail for _, ev, _, detail in events(run_dir) if ev == "loadavg"]
    return " → ".join(values) if values else "?"


def haproxy_failures(run_dir):
    """Counter of (status, server, termination state) for every non-2xx request in HAProxy's log."""
    c = Counter()
    try:
        with open(os.path.join(run_dir, "haproxy.log")) as f:
            for line in f:
                m = HAPROXY_LINE.search(line)
                if m and not m.group(3).startswith("2"):
                    c[(m.group(3), m.group(2), m.group(4))] += 1
    except OSError:
        pass
    return c


def lifetimes(run_dir):
    """[(server, ready_ms or None for an instance running when the run began, sigterm_ms or None, exit_ms or None)]
    of every instance seen in the run's event log, in the order they started."""
    out, current = [], {}
    for ms, ev, slot, _ in events(run_dir):
        if not slot:
            continue
        server = "s" + slot
        if ev == "start":
            current[server] = [server, None, None, None]
            out.append(current[server])
        elif ev == "ready" and server in current:
            current[server][1] = ms
        elif ev in ("sigterm", "exit"):
            if server not in current:
                current[server] = [server, None, None, None]
                out.append(current[server])
            current[server][2 if ev == "sigterm" else 3] = ms
            if ev == "exit":
                del current[server]
    return [tuple(x) for x in out]


COLD_S = 60


def classify_failures(rows, lives):
    """Counter of where each failed request (non-2xx or no response) failed."""
    c = Counter()
    for r in rows:
        if 200 <= r["status"] < 300:
            continue
        if r["backend"] == "<NOSRV>":
            c["no instance UP in HAProxy (its 503)"] += 1
            continue
        if not r["backend"]:
            c["no response (client timeout)"] += 1
            continue
        life = None
        for server, start, term, exit_ in lives:
            if server == r["backend"] and (start is None or start - 5000 <= r["start_ms"]) and (
                    exit_ is None or r["start_ms"] <= exit_):
                life = (start, term, exit_)
        if life and life[1] is not None and r["end_ms"] >= life[1]:
            c["on the instance being shut down"] += 1
        elif life and life[0] is not None and r["start_ms"] - life[0] < COLD_S * 1000:
            c["on a replacement in its first %d s after ready (%s)" % (COLD_S, r["status"])] += 1
        else:
            c["on a running instance (%s)" % r["status"]] += 1
    return c


def analyse_run(run_dir):
    rows = loadstats.load(os.path.join(run_dir, "requests.csv"))
    s = loadstats.summarize(rows)
    s["run"] = read_json(os.path.join(run_dir, "run.json"), {})
    s["run"].setdefault("variant", s["run"].get("mode"))
    baseline = read_counts(os.path.join(run_dir, "invocations-baseline.csv"))
    shutdowns = []
    authorized, lower_bound = 0, False
    seen_servers = set()
    for d in sorted((read_json(p) for p in glob.glob(os.path.join(run_dir, "shutdown-*.json"))),
                    key=lambda d: d["signal_ms"]):
        server, sig = d["server"], d["signal_ms"]
        started = max([ms for ms, ev, slot, _ in events(run_dir) if ev == "start" and "s" + slot == server
                       and ms < sig] or [float("-inf")])
        ended = sig + (d.get("exited_after_signal_ms") or 60000) + 1000   # this instance, not a later one in its slot
        mine = [r for r in rows if r["backend"] == server and started <= r["start_ms"] <= ended]
        after = [r for r in mine if r["start_ms"] >= sig]
        answered = [r for r in mine if r["status"] and r["end_ms"] >= sig]
        d["requests_routed_after_signal"] = len(after)
        logged_down = loadstats.haproxy_down_after(os.path.join(run_dir, "haproxy.log"), server, sig)
        if logged_down is not None:  # HAProxy's own timestamp beats drainwatch's 50 ms poll
            d["haproxy_down_after_signal_ms"] = logged_down
        d["failed_on_it"] = sum(1 for r in mine if not 200 <= r["status"] < 300 and r["end_ms"] >= sig)
        d["last_response_after_signal_ms"] = round(max(r["end_ms"] for r in answered) - sig, 1) if answered else None
        d["summary_line"] = summary_line(run_dir, d["log"])
        # Decided authorizations during this run: last scrape minus what it had decided before the run. A naive
        # instance closes its health listener at the signal, so its last scrape may miss the requests it finished
        # after it: a lower bound.
        # Final only if scraped after the shutdown sequence recorded its total (during the metrics linger). The
        # phase series exist from startup (value 0), so the sign is the total's count, not its presence: the
        # timer's _count{phase="total"} turns 1 when the sequence ends. A naive instance has no sequence (and closes
        # its health listener at the signal): its last scrape is never final.
        last = d.get("metrics_last_scrape") or d.get("metrics_before_signal")
        d["final_scrape"] = bool(last and last["shutdown_seconds"].get("_count", {}).get("total", 0) >= 1)
        if not d["final_scrape"]:
            lower_bound = True
        if last:
            # the baseline belongs to the instance that ran in this slot when the run began: its first shutdown;
            # a later one in the same slot was started during the run (from 0)
            authorized += last["authorizer_invocations"] - (0 if server in seen_servers else baseline.get(server, 0))
        seen_servers.add(server)
        shutdowns.append(d)
    survivors = read_counts(os.path.join(run_dir, "invocations-survivors.csv"))
    if not survivors:
        lower_bound = True
    s["authorized_by_service"] = int(authorized + sum(survivors.values()))
    s["authorized_is_lower_bound"] = lower_bound
    s["authorized_but_not_acknowledged"] = (None if lower_bound
                                            else s["authorized_by_service"] - s["created_201"])
    # Requests that may have reached the service but got no answer from it: a caller cannot tell whether they
    # were authorized (a 503 from HAProxy with SC, connection refused, never reached it).
    s["outcome_unknown"] = (s["connection_errors"] + s["non_2xx_by_status"].get("502", 0)
                            + s["non_2xx_by_status"].get("504", 0))
    s["shutdowns"] = shutdowns
    s["failures_by_place"] = dict(classify_failures(rows, lifetimes(run_dir)).most_common())
    # From the first SIGTERM to the end of the load: what the rolls and the steady state after them saw, without the
    # client's own start (on a saturated box its first seconds release a backlog that no service setting explains).
    if shutdowns:
        tail = [r for r in rows if r["due_ms"] >= min(d["signal_ms"] for d in shutdowns)]
        ts = loadstats.summarize(tail) if tail else {}
        s["from_first_sigterm"] = {"requests": len(tail), "failed": ts.get("non_2xx", 0) + ts.get(
            "connection_errors", 0), "p99_ms": ts.get("latency_p99_ms"), "lag_p99_ms": ts.get("client_lag_p99_ms")}
    s["loadavg"] = loadavg(run_dir)
    s["throttling"] = limits.throttling(run_dir)
    # Steady state vs roll: requests due from the first replacement's start until 2 s after the last old instance
    # exited are "during the roll"; the others are steady state, except the first skip s (the client's own JIT
    # warm-up, judged nowhere).
    evs = events(run_dir)
    windows = []  # (kind, from_ms, to_ms) of each roll, to 2 s after its last old instance exited
    for ms, ev, _, detail in evs:
        if ev == "roll-start":
            windows.append([detail or "roll", ms, None])
        elif ev == "roll-done" and windows:
            windows[-1][2] = ms + 2000
    windows = [w for w in windows if w[2] is not None]
    skip_ms = float(s["run"].get("skip_s", 3)) * 1000
    s["rolls"] = len(windows)
    if rows and windows:
        t0 = min(r["due_ms"] for r in rows)
        last_due = max(r["due_ms"] for r in rows)
        s["roll_s"] = [round((to - 2000 - fr) / 1000, 1) for _, fr, to in windows]
        s["roll_after_load_end"] = any(to - 2000 > last_due for _, _, to in windows)
        bounds = [(t0, t0 + skip_ms)] + [(fr, to) for _, fr, to in windows]
        steady = [r for r in rows if not any(fr <= r["due_ms"] < to for fr, to in bounds)]
        parts = [("steady", steady)]
        for kind in sorted({k for k, _, _ in windows}):
            parts.append(("roll " + kind, [r for r in rows if any(k == kind and fr <= r["due_ms"] < to
                                                                  for k, fr, to in windows)]))
        s["windows"] = []
        for name, part in parts:
            ps = loadstats.summarize(part) if part else {}
            s["windows"].append({"name": name, "requests": len(part), "failed": ps.get("non_2xx", 0)
                                 + ps.get("connection_errors", 0), "p50_ms": ps.get("latency_p50_ms"),
                                 "p99_ms": ps.get("latency_p99_ms"), "lag_p99_ms": ps.get("client_lag_p99_ms"),
                                 "rolls": sum(1 for k, _, _ in windows if "roll " + k == name)})
    lag_limit = float(s["run"].get("lag_limit_ms", 100))
    s["valid"] = s["client_lag_p99_ms"] is not None and s["client_lag_p99_ms"] <= lag_limit
    s["haproxy_failures"] = [{"status": k[0], "server": k[1], "termination": k[2], "count": n}
                             for k, n in haproxy_failures(run_dir).most_common()]
    return s, rows


def variant_order(v):
    return {"graceful": 0, "graceful-nowarmup": 1, "naive": 2}.get(v, 3), v


def plot(results, rows_by_run, out_png):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    modes = sorted({r["run"]["variant"] for r in results}, key=variant_order)
    levels = sorted({r["run"]["level_pct"] for r in results})
    fig, axes = plt.subplots(len(levels), len(modes), figsize=(6.5 * len(modes), 2.6 * len(levels)),
                             squeeze=False, sharex=False)
    for r in results:
        ax = axes[levels.index(r["run"]["level_pct"])][modes.index(r["run"]["variant"])]
        rows = rows_by_run[r["name"]]
        t0 = min(x["due_ms"] for x in rows)
        bins = {}
        for x in rows:
            b = int((x["end_ms"] - t0) // 250)
            ok = 200 <= x["status"] < 300
            bins.setdefault(b, [0, 0])[0 if ok else 1] += 1
        xs = list(range(min(bins), max(bins) + 1))  # empty bins are 0, not skipped: a stall must show
        for b in xs:
            bins.setdefault(b, [0, 0])
        ax.plot([b / 4 for b in xs], [bins[b][0] * 4 for b in xs], color="tab:green", lw=1, label="2xx /s")
        ax.bar([b / 4 for b in xs], [bins[b][1] * 4 for b in xs], width=0.25, color="tab:red",
               label="failed /s")
        top = max([v[0] * 4 for v in bins.values()] + [1])
        for ms, ev, slot, _ in events(r["dir"]):
            if ev == "start":  # a run's own events only start replacements
                ax.axvline((ms - t0) / 1000, color="tab:blue", ls=":", lw=1)
                ax.text((ms - t0) / 1000, top * 0.80, " start s" + slot, fontsize=7, color="tab:blue")
        for d in r["shutdowns"]:
            ax.axvline((d["signal_ms"] - t0) / 1000, color="black", ls="--", lw=1)
            ax.text((d["signal_ms"] - t0) / 1000, top * 0.92, " TERM " + d["server"], fontsize=7)
        ax.set_title("%s, %d%% of peak (%d rps): %d failed of %d" % (
            r["run"]["variant"], r["run"]["level_pct"], r["run"]["rate_rps"],
            r["non_2xx"] + r["connection_errors"], r["sent"]), fontsize=9)
        ax.set_xlabel("seconds since load start (dotted: replacement starts, dashed: SIGTERM to the old one)", fontsize=7)
        ax.set_ylabel("responses per second", fontsize=7)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=7, loc="lower left", framealpha=0.9)
    fig.tight_layout()
    fig.savefig(out_png, dpi=110)
    return True


def main():
    results_dir, reports_dir = sys.argv[1], sys.argv[2]
    env = read_json(os.path.join(results_dir, "environment.json"), {})
    env["gatling"] = gatling_version()
    peak = read_json(os.path.join(results_dir, "peak.json"), {})
    setup = limits.load_setup(results_dir)
    results, rows_by_run = [], {}
    for run_dir in sorted(glob.glob(os.path.join(results_dir, "*-*/"))):
        if not os.path.exists(os.path.join(run_dir, "run.json")):
            continue
        s, rows = analyse_run(run_dir)
        s["name"] = os.path.basename(run_dir.rstrip("/"))
        s["dir"] = run_dir
        results.append(s)
        rows_by_run[s["name"]] = rows
    results.sort(key=lambda r: (variant_order(r["run"]["variant"]), r["run"]["level_pct"]))
    with open(os.path.join(results_dir, "summary.json"), "w") as f:
        json.dump({"environment": env, "setup": setup, "peak": peak, "runs": results}, f, indent=1, default=str)

    os.makedirs(reports_dir, exist_ok=True)
    png = os.path.join(reports_dir, "rolling-restart.png")
    has_plot = plot(results, rows_by_run, png)
    run0 = results[0]["run"] if results else {}
    L = []
    w = L.append
    w("# Rolling restart under load: graceful vs naive shutdown")
    w("")
    w("Generated by `load-tests/rolling-restart/run.sh` from results `%s` (git-ignored). Every number below was "
      "measured in that run; nothing is edited by hand." % os.path.basename(results_dir.rstrip("/")))
    w("")
    if setup:
        w("**Store `%s`; CPU limits: %s** (details under Setup)." % (setup.get("store"), (
            "instances %s CPU each, %scgroup %s" % (
                limits.fmt_cpus(setup.get("instance_cpu")), "" if setup.get("store") == "memory"
                else "store %s CPU, " % limits.fmt_cpus(setup.get("store_cpu")), setup.get("cgroups")))
            if str(setup.get("cgroups", "")).startswith("v") else setup.get("cgroups")))
        w("")
    environment_section(w, env, [key for key, _ in ENVIRONMENT_ROWS])
    w("Everything runs on this one machine: the load generator, HAProxy and every service instance share its CPUs "
      "(and so do other people's processes when the load average above is not near 0).")
    w("")
    w("## Setup")
    w("")
    w("- **Topology**: %s, open model (`constantUsersPerSec`: virtual user *i* starts at *t0 + i/rate* and sends one "
      "request, whatever happened to the earlier ones; shared keep-alive pool; 1 in 10 is `GET /ping`, the rest "
      "`POST /v1/authorizations` with a fresh `Idempotency-Key`; no retries) → HAProxy on 127.0.0.1 "
      "(`balance roundrobin`, `retries 0`, no `option redispatch`) → %s instances. Each request's outcome is one "
      "CSV row (`OpenModelSimulation`). Latency is measured from the request's *due* time (no coordinated "
      "omission); *client lag* = start − due, the client's own delay against its schedule." % (
          env.get("gatling"), run0.get("instances", "?")))
    w("- **Endpoint removal emulated by HAProxy active checks**: `GET /health/ready` on each instance's health port "
      "every %s ms (timeout %s ms), `fall %s` / `rise %s`: a readiness 503 takes an instance out after at most "
      "~%d ms, a new instance joins ~%d ms after it turns ready. Service `shutdown.pre-drain-delay` = %s, longer "
      "than that." % (
          run0.get("check_inter_ms"), run0.get("check_timeout_ms"), run0.get("check_fall"), run0.get("check_rise"),
          (run0.get("check_inter_ms") or 0) * (run0.get("check_fall") or 0),
          (run0.get("check_inter_ms") or 0) * (run0.get("check_rise") or 0), run0.get("pre_drain_delay")))
    w("- **Service**: `authorizer.simulated-latency` %s + jitter %s (each POST is in flight 50-200 ms), "
      "`shutdown.pre-drain-delay` %s, `drain-timeout` %s, `cleanup-timeout` %s, `metrics-linger` %s, "
      "`hard-deadline` %s; otherwise the load tests' local settings (development API key, loopback)." % (
          run0.get("simulated_latency"), run0.get("simulated_jitter"), run0.get("pre_drain_delay"),
          run0.get("drain_timeout", "PT10S"), run0.get("cleanup_timeout", "PT3S"), run0.get("metrics_linger", "PT1S"),
          run0.get("hard_deadline", "PT30S")))
    limits.setup_section(w, setup, run0)
    w("- **Rolling restart** (maxSurge 1, maxUnavailable 0, minReadySeconds %s): for each old instance, start the "
      "replacement, wait for its `/health/ready` 200 and then minReadySeconds while it serves beside the old one, "
      "send SIGTERM to the old one, wait for its exit. Each level is one load run of "
      "%s s (long enough for >= 100,000 requests, and for the roll): %s s of steady state, then the roll, then "
      "steady state again until the planned end. One cluster per variant, warmed up off the record (%s s at "
      "%s rps) before its first level%s; the replacements are fresh JVMs, as in a real deploy." % (
          run0.get("min_ready_s", 0), run0.get("duration_s", "?"), run0.get("warmup_s", "?"),
          setup.get("cluster_warmup_s", 8), setup.get("cluster_warmup_rps", 100),
          ", then %s s at the level's own rate before each level" % run0["level_warmup_s"]
          if run0.get("level_warmup_s") else ""))
    w("- **Variants**: *graceful* = the service's shutdown sequence, with its warm-up before ready at its "
      "default (`warm-up.requests` 500); *graceful-nowarmup* = the same with `warm-up.requests=0` (cold "
      "replacements take traffic as soon as ready); *naive* = see below.")
    w("- **naive** = the naive contender (`NaiveShutdownMain`, test code from the test-tools jar, on the same "
      "service): both listeners stop at the signal (Helidon's own stop, 0.5 s grace), "
      "the way a plain Helidon app behaves.")
    w("")
    w("### Peak")
    w("")
    if peak.get("given"):
        w("Peak given by the caller: %s rps (not measured in this run)." % peak.get("peak_rps"))
    else:
        w("Climbed from %s rps, x%s per step of %s s (a fresh client run each; its first %s s, the client's JIT "
          "warm-up, not judged), on %s graceful instances, until the **service** failed: a step *fails* on more "
          "than %s errors, p99 > %s ms, or 2xx throughput < %s%% of the offered rate while the client kept its "
          "schedule; it is *invalid* when the client's send lag p99 exceeded %s ms with no errors (the client was "
          "the limit, so the step says nothing about the service). A failing or invalid step is tried once more. "
          "No step list and no ceiling but `LT_PEAK_MAX_RPS`; then %s more step(s) halve the gap between the last "
          "rate that held and the first that did not." % (
              peak.get("start_rps"), peak.get("factor"), peak.get("step_seconds"), peak.get("skip_seconds"),
              peak.get("instances"), peak.get("max_errors", 0), peak.get("p99_limit_ms"),
              peak.get("min_throughput_pct"), peak.get("client_lag_limit_ms"), peak.get("refine_steps", 0)))
        w("")
        peak_dir = os.path.join(results_dir, "peak")
        w("| offered rps | attempt | sent | achieved 2xx rps | errors | p50 ms | p99 ms | client lag p99 ms | "
          "throttled periods: instances / store | machine busy | load avg | verdict |")
        w("|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---|")
        for st in peak.get("steps", []):
            thr = limits.peak_step_throttling(peak_dir, st["rate"], st.get("attempt", 1))
            w("| %d | %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s |" % (
                st["rate"], st.get("attempt", 1), st.get("sent", "?"), st["throughput_rps"],
                st["non_2xx"] + st["connection_errors"], fmt(st["latency_p50_ms"]), fmt(st["latency_p99_ms"]),
                fmt(st["client_lag_p99_ms"]),
                "–" if not thr else "%s%% / %s%%" % (fmt(thr[0], 1), fmt(thr[1], 1)),
                "–" if not thr or thr[2] is None else fmt(thr[2]) + "%", st.get("loadavg", "?"),
                st.get("outcome", "pass" if st["pass"] else "fail") + (": " + "; ".join(st["reasons"])
                                                                      if st["reasons"] else "")))
        w("")
        first = peak.get("first_failure")
        if first:
            w("**What failed first**: at %d rps (attempt %s): %s." % (
                first["rate"], first.get("attempt", "?"), "; ".join(first["reasons"])))
            w("")
        limited = peak.get("limited_by")
        w("**Peak = %s rps, %s.** Load levels below are percentages of it." % (
            peak.get("peak_rps"),
            "service-limited (the next step failed on the service's side)" if limited == "service" else
            "NOT service-limited: the next step's last attempt was invalid (the client could not keep its "
            "schedule; the table shows each attempt), so the service's peak is at least this" if limited == "client" else "search stopped by the %s" % limited))
    w("")
    limits.goals_section(w, results)
    w("## Results")
    w("")
    w("| variant | load | rps | s | requests sent | 2xx | non-2xx | connection errors | outcome unknown | keys "
      "with >1 201 | 201 seen by client | authorized by service | authorized, answer lost | p50 ms | p99 ms | "
      "max ms | client lag p99 ms | valid | load avg |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for r in results:
        lost = r["authorized_but_not_acknowledged"]
        w("| %s | %d%% | %d | %s | %d | %d | %d | %d | %d | %d | %d | %s%d | %s | %s | %s | %s | %s | %s | %s |" % (
            r["run"]["variant"], r["run"]["level_pct"], r["run"]["rate_rps"], r["run"].get("duration_s", "?"),
            r["sent"], r["ok_2xx"], r["non_2xx"],
            r["connection_errors"], r["outcome_unknown"], r["keys_with_more_than_one_201"], r["created_201"],
            "≥ " if r["authorized_is_lower_bound"] else "", r["authorized_by_service"],
            "n/a" if lost is None else lost, fmt(r["latency_p50_ms"]), fmt(r["latency_p99_ms"]),
            fmt(r["latency_max_ms"]), fmt(r["client_lag_p99_ms"]),
            "yes" if r["valid"] else "**no** (client lagged)", r["loadavg"]))
    w("")
    w("### Where the failed requests failed")
    w("")
    w("Each failed request (non-2xx or no response) by where it failed: on an old instance after its SIGTERM (the "
      "shutdown's own losses), on a replacement in its first %d s after it turned ready (a cold JVM overloaded), on another running "
      "instance, HAProxy's 503 when no instance was UP (both had failed their readiness checks), or no response "
      "before the client's 20 s timeout." % COLD_S)
    w("")
    w("| variant | load | failed | from the first SIGTERM to the end: requests / failed / p99 ms / client lag p99 ms "
      "| where |")
    w("|---|---:|---:|---|---|")
    for r in results:
        t = r.get("from_first_sigterm") or {}
        w("| %s | %d%% | %d | %s / %s / %s / %s | %s |" % (
            r["run"]["variant"], r["run"]["level_pct"], r["non_2xx"] + r["connection_errors"],
            t.get("requests", "–"), t.get("failed", "–"), fmt(t.get("p99_ms")), fmt(t.get("lag_p99_ms")), "; ".join(
                                           "%s: %d" % (k, n) for k, n in r["failures_by_place"].items()) or "–"))
    w("")
    w("### p99 during the rolls vs steady state")
    w("")
    w("Each level runs several rolls (*graceful* and *naive*: every replacement with the service's warm-up before "
      "ready, `warmup`; *graceful-nowarmup*: without it, `nowarmup`). *roll* windows: requests due from a roll's first "
      "replacement start "
      "until 2 s after its last old instance exited; *steady*: all other requests, except the client's first %s s. "
      "Latency p99 over 2xx responses from the due time; the ratio is to the same run's steady p99." % (
          run0.get("skip_s", 3)))
    w("")
    w("| variant | load | window | rolls | roll durations s | requests | failed | p50 ms | p99 ms | client lag p99 ms "
      "| p99 / steady p99 |")
    w("|---|---:|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        steady_p99 = next((x["p99_ms"] for x in r.get("windows", []) if x["name"] == "steady"), None)
        for x in r.get("windows", []):
            ratio = x["p99_ms"] / steady_p99 if x["p99_ms"] and steady_p99 else None
            w("| %s | %d%% | %s | %s | %s | %d | %d | %s | %s | %s | %s |" % (
                r["run"]["variant"], r["run"]["level_pct"], x["name"], x["rolls"] or "",
                ", ".join(str(v) for v in r.get("roll_s", [])) if x["name"] == "steady" else "",
                x["requests"], x["failed"], fmt(x["p50_ms"]), fmt(x["p99_ms"]), fmt(x["lag_p99_ms"]),
                (fmt(ratio, 2) + "x") if ratio and x["name"] != "steady" else ""))
    w("")
    limits.throttling_section(w, results)
    late = [r for r in results if r.get("roll_after_load_end")]
    if late:
        w("")
        w("The roll outlasted the load in: %s (raise ROLL_S)." % ", ".join(
            "%s at %d%%" % (r["run"]["variant"], r["run"]["level_pct"]) for r in late))
    skipped = []
    try:
        with open(os.path.join(results_dir, "skipped.txt")) as f:
            skipped = [line.strip() for line in f if line.strip()]
    except OSError:
        pass
    if skipped:
        w("")
        w("Skipped (time budget `LT_BUDGET_S` used up): %s." % ", ".join(skipped))
    w("")
    w("- *non-2xx* and *connection errors* are what the client got: HAProxy's own 502/503 when the instance "
      "refused or dropped the connection, or a reset with no response at all. Latency percentiles are over "
      "2xx responses, measured from each request's due time. *client lag*: how late the load generator sent "
      "requests against its schedule (p99); *valid* = no when it exceeded the run's limit (%s ms): there the "
      "client, not the service, set the pace and latency/throughput say nothing reliable about the service "
      "(failure counts are still exact). *load avg*: 1-minute load "
      "average at the start and end of the run; on 2 CPUs anything well above 2 means other processes competed." % (
          run0.get("lag_limit_ms", "?")))
    w("- *keys with >1 201*: every key is sent exactly once, so any value above 0 would mean a proxy or client "
      "retried a POST.")
    w("- *outcome unknown*: connection resets, timeouts, 502 and 504: the request may have reached the service "
      "and the caller cannot tell whether the payment was authorized, so it will retry. (HAProxy's 503 after a "
      "refused connection never reached the service.)")
    w("- *authorized by service*: decided authorizations (`authorizer_invocations_total`, outcome approved or "
      "declined) during the run, over every instance: old instances scraped during their metrics linger (after "
      "the drain) minus their count at the start of the run, replacements at the end. *authorized, answer lost* "
      "= that minus the 201s the client saw: payments authorized whose caller got an error instead. Retried on "
      "another replica with the per-instance in-memory store, each would be authorized twice; with the shared "
      "Redis store the retry replays. `≥` / n/a: an old instance's last scrape is final only when it shows the "
      "shutdown sequence's end (`shutdown_duration_seconds_count{phase=\"total\"}` = 1; the series exists from "
      "startup with count 0, so its mere presence proves nothing). A naive instance has no sequence and closes its "
      "health listener at the signal, so its last scrape misses what it completed after it: the count is a lower "
      "bound and the difference is not known (*outcome unknown* is then the number to read).")
    w("")
    for r in results:
        failures = r["haproxy_failures"]
        if not failures and not r["connection_errors"]:
            continue
        w("**%s at %d%%**: client saw %s; HAProxy logged for non-2xx: %s." % (
            r["run"]["variant"], r["run"]["level_pct"],
            ", ".join("%s × %s" % (n, k) for k, n in {**r["non_2xx_by_status"],
                                                          **r["connection_errors_by_kind"]}.items()),
            ", ".join("%d × %s from %s (%s)" % (f["count"], f["status"], f["server"], f["termination"])
                      for f in failures) or "nothing"))
        w("")
    w("HAProxy termination states: `SC` = the server refused the connection (listener closed), `SH` / `SD` = "
      "the server closed it while HAProxy waited for or read the response, `CD` = the client went away.")
    w("")
    w("## Each shutdown, seen from outside")
    w("")
    w("Milliseconds after the SIGTERM. *routed after signal*: requests HAProxy still sent to the instance after "
      "the signal (served during the pre-drain delay in graceful mode). *last response*: when the last request "
      "that instance answered completed.")
    w("")
    w("| variant | load | instance | readiness 503 | HAProxy DOWN | business listener closed | routed after signal "
      "| failed on it after the signal | last response | exited | exit status | service's summary line |")
    w("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in results:
        for d in r["shutdowns"]:
            w("| %s | %d%% | %s | %s | %s | %s | %d | %d | %s | %s | %d | %s |" % (
                r["run"]["variant"], r["run"]["level_pct"], d["server"], fmt(d["first_ready_503_after_signal_ms"]),
                fmt(d["haproxy_down_after_signal_ms"]), fmt(d["business_closed_after_signal_ms"]),
                d["requests_routed_after_signal"], d["failed_on_it"], fmt(d["last_response_after_signal_ms"]),
                fmt(d["exited_after_signal_ms"]), d["exit_status"], d["summary_line"] or "–"))
    w("")
    if has_plot:
        w("![responses per second during each run](rolling-restart.png)")
        w("")
    w("## What this can and cannot show")
    w("")
    w("- Loopback on one small machine: no network latency, no packet loss, and the load generator, HAProxy, up "
      "to three JVMs (one of them starting, which is CPU-heavy) and anything else running compete for the same "
      "CPUs. Absolute rates and latencies say little about production; the *difference* between the modes and "
      "the zero/non-zero failure counts are the result.")
    lagging = [r for r in results if not r["valid"]]
    if lagging:
        w("- **Invalid levels** (client send lag p99 above %s ms): %s. There the client, not the service, set the "
          "pace: the client, HAProxy, two to three service JVMs (a replacement starting is CPU-heavy: class "
          "loading, JIT, warm-up) and everything else on the machine share its CPUs (see the load averages), and "
          "a client that starts requests late also measures them late. Latencies and the peak there describe a "
          "saturated shared box, not the service; in a cluster the new pod brings its own CPU. The failure counts "
          "and the authorized/acknowledged reconciliation are exact either way." % (
              run0.get("lag_limit_ms", "?"), ", ".join(
                  "%s at %d%% (lag p99 %s ms)" % (r["run"]["variant"], r["run"]["level_pct"],
                                                  fmt(r["client_lag_p99_ms"])) for r in lagging)))
    w("- One HAProxy with active checks emulates readiness-driven endpoint removal with a known, short delay "
      "(fall × inter). In Kubernetes a terminating pod is also removed from its EndpointSlices when it is "
      "deleted, and that removal reaches each node's kube-proxy after a variable delay (often ~1 s, more on a "
      "busy control plane); the preStop sleep plus pre-drain delay must cover it. The grace values here do not "
      "prove a cluster's propagation delay; measure that in the cluster.")
    w("- No retries anywhere (client or proxy), so every failure the service caused is visible. Real callers of "
      "a payment API do retry; with the shared idempotency store that retry is safe, with per-instance in-memory "
      "stores it is not (see *authorized, answer lost*).")
    w("- A few runs per setting: a single naive run can get lucky or unlucky; graceful runs with 0 failures show "
      "the sequence works at these rates, not that it never fails.")
    write_report(os.path.join(reports_dir, "rolling-restart.md"), L)


if __name__ == "__main__":
    main()
