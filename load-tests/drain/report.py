#!/usr/bin/env python3
"""Turns one drain results directory into summary.json, reports/drain.md and a PNG.

    report.py RESULTS_DIR REPORTS_DIR        (PRESTOP_S in the environment: the preStop sleep to add, default 5)
"""
import glob
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import loadstats  # noqa: E402
from reporting import environment_section, fmt, gatling_version, read_json, write_report  # noqa: E402

PHASE = re.compile(r"([a-z-]+)=(\d+) ms")


def summary_phases(log_path):
    """Phase durations (ms) from the service's `Shutdown summary:` line, plus the cut-off count."""
    try:
        with open(log_path) as f:
            for line in f:
                if "Shutdown summary:" in line:
                    text = line.split("Shutdown summary:", 1)[1]
                    phases = {k: int(v) for k, v in PHASE.findall(text.split(";")[0])}
                    cut = re.search(r"cut off by the drain timeout: (\d+)", text)
                    phases["cut_off"] = int(cut.group(1)) if cut else None
                    return phases
    except OSError:
        pass
    return {}


def logged_signal_ms(log_path):
    """Wall-clock epoch ms of the service's `SIGTERM received` line (same machine, same clock, local time)."""
    import datetime
    try:
        with open(log_path) as f:
            for line in f:
                if "SIGTERM received" in line:
                    stamp = line.split(" ", 1)[0]
                    return datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%f").timestamp() * 1000
    except (OSError, ValueError):
        pass
    return None


HAPROXY_REQ = re.compile(r'\[(\d+/\w+/\d+:\d+:\d+:\d+\.\d+)\] payments instances/(\S+) -?\d+/-?\d+/-?\d+/-?\d+/(\d+) ')


def haproxy_last_done_ms(run_dir, server):
    """Epoch ms when the last request HAProxy sent to `server` completed: request date + Ta, from HAProxy's log
    (HAProxy is not starved the way the client can be, so this is the better clock under heavy load)."""
    import datetime
    last = None
    try:
        with open(os.path.join(run_dir, "haproxy.log")) as f:
            for line in f:
                m = HAPROXY_REQ.search(line)
                if m and m.group(2) == server:
                    t = datetime.datetime.strptime(m.group(1), "%d/%b/%Y:%H:%M:%S.%f").timestamp() * 1000
                    end = t + int(m.group(3))
                    last = end if last is None or end > last else last
    except OSError:
        pass
    return last


def analyse(run_dir):
    run = read_json(os.path.join(run_dir, "run.json"))
    d = read_json(os.path.join(run_dir, "shutdown.json"))
    rows = loadstats.load(os.path.join(run_dir, "requests.csv"))
    s = loadstats.summarize(rows)
    sig, server = d["signal_ms"], d["server"]
    mine = [r for r in rows if r["backend"] == server]
    in_flight = [r for r in mine if r["start_ms"] <= sig < r["end_ms"]]
    answered_after = [r for r in mine if r["end_ms"] >= sig and r["status"]]
    phases = summary_phases(os.path.join(run_dir, d["log"]))
    last = d.get("metrics_last_scrape") or {}
    logged = logged_signal_ms(os.path.join(run_dir, d["log"]))
    lb_done = haproxy_last_done_ms(run_dir, server)
    accounted = sum(phases.get(k, 0) for k in ("pre-drain", "drain", "key-release", "cleanup"))
    metric_phases = {k: round(v * 1000) for k, v in (last.get("shutdown_seconds") or {}).items() if k != "_count"}
    with open(os.path.join(run_dir, "events.csv")) as f:
        load = [line.rstrip("\n").split(",", 3)[3] for line in f if ",loadavg," in line]
    return {
        "loadavg": " → ".join(load) or "?",
        "name": os.path.basename(run_dir.rstrip("/")),
        "level_pct": run["level_pct"], "run": run["run"], "rate_rps": run["rate_rps"], "server": server,
        "in_flight_at_signal": len(in_flight),
        "routed_after_signal": sum(1 for r in mine if r["start_ms"] >= sig),
        "first_ready_503_ms": d["first_ready_503_after_signal_ms"],
        "signal_logged_ms": round(logged - sig, 1) if logged else None,
        "unaccounted_ms": phases["total"] - accounted if "total" in phases else None,
        # HAProxy's own log line when it has one (format iso); else what drainwatch's poll of the stats page saw
        "haproxy_down_ms": loadstats.haproxy_down_after(os.path.join(run_dir, "haproxy.log"), server, sig)
        or d["haproxy_down_after_signal_ms"],
        "last_request_done_ms": round(max(r["end_ms"] for r in answered_after) - sig, 1) if answered_after else None,
        "last_request_done_haproxy_ms": round(lb_done - sig, 1) if lb_done and lb_done >= sig else None,
        "business_closed_ms": d["business_closed_after_signal_ms"],
        "exited_ms": d["exited_after_signal_ms"],
        "exit_status": d["exit_status"],
        "log_phases_ms": phases,
        "metric_phases_ms": metric_phases,
        "errors": s["non_2xx"] + s["connection_errors"],
        # failures on the instance being drained, vs HAProxy finding no instance UP at all (the other one failed
        # its checks), vs anything else
        "errors_on_victim": sum(1 for r in mine if r["error"] or not 200 <= r["status"] < 300),
        "errors_no_server": sum(1 for r in rows if r["backend"] == "<NOSRV>"),
        "errors_by_kind": {**s["non_2xx_by_status"], **s["connection_errors_by_kind"]},
        "sent": s["sent"], "latency_p99_ms": s["latency_p99_ms"],
    }


def stats(values):
    v = sorted(x for x in values if x is not None)
    return {"n": len(v), "p50": loadstats.percentile(v, 50), "p99": loadstats.percentile(v, 99),
            "max": v[-1] if v else None}


def plot(runs, out_png):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(9, 0.32 * len(runs) + 1.6))
    marks = (("first_ready_503_ms", "readiness 503", "tab:orange", "o"),
             ("haproxy_down_ms", "HAProxy DOWN", "tab:red", "v"),
             ("last_request_done_haproxy_ms", "last request done (HAProxy log)", "tab:green", "s"),
             ("business_closed_ms", "listener closed", "tab:purple", "D"),
             ("exited_ms", "process exited", "black", "x"))
    labels = []
    for i, r in enumerate(runs):
        total = r["log_phases_ms"].get("total")
        if total is not None:
            ax.barh(i, total / 1000, color="lightgray", height=0.6, label="shutdown total (log)" if i == 0 else None)
        for key, label, color, marker in marks:
            if r[key] is not None:
                ax.plot(r[key] / 1000, i, marker=marker, color=color, ls="", ms=5, label=label if i == 0 else None)
        labels.append("%d%% #%d" % (r["level_pct"], r["run"]))
    ax.set_yticks(range(len(runs)))
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("seconds after SIGTERM", fontsize=8)
    ax.set_title("Drain under load: one SIGTERM per row (load level and run)", fontsize=9)
    ax.grid(axis="x", ls=":", lw=0.5)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(out_png, dpi=110)
    return True


def main():
    results_dir, reports_dir = sys.argv[1], sys.argv[2]
    prestop = float(os.environ.get("PRESTOP_S", "5"))
    env = read_json(os.path.join(results_dir, "environment.json"), {})
    peak = read_json(os.path.join(results_dir, "peak.json"), {})
    runs = []
    for run_dir in glob.glob(os.path.join(results_dir, "*-*/")):
        if os.path.exists(os.path.join(run_dir, "shutdown.json")):
            runs.append(analyse(run_dir))
    runs.sort(key=lambda r: (r["level_pct"], r["run"]))
    first = read_json(os.path.join(results_dir, runs[0]["name"], "run.json")) if runs else {}
    levels = sorted({r["level_pct"] for r in runs})
    agg = {}
    for lv in levels + ["all"]:
        rs = [r for r in runs if lv == "all" or r["level_pct"] == lv]
        agg[str(lv)] = {
            "runs": len(rs), "rate_rps": rs[0]["rate_rps"] if lv != "all" else None,
            "errors": sum(r["errors"] for r in rs),
            "errors_on_victim": sum(r["errors_on_victim"] for r in rs),
            "errors_no_server": sum(r["errors_no_server"] for r in rs),
            "nonzero_exits": sum(1 for r in rs if r["exit_status"] != 0),
            "ready_503": stats(r["first_ready_503_ms"] for r in rs),
            "haproxy_down": stats(r["haproxy_down_ms"] for r in rs),
            "last_request_done": stats(r["last_request_done_ms"] for r in rs),
            "last_request_done_haproxy": stats(r["last_request_done_haproxy_ms"] for r in rs),
            "drain": stats(r["log_phases_ms"].get("drain") for r in rs),
            "total": stats(r["log_phases_ms"].get("total") for r in rs),
            "signal_logged": stats(r["signal_logged_ms"] for r in rs),
            "unaccounted": stats(r["unaccounted_ms"] for r in rs),
            "exited": stats(r["exited_ms"] for r in rs),
        }
    all_total_p99 = agg["all"]["total"]["p99"] or 0
    all_exit_p99 = agg["all"]["exited"]["p99"] or 0
    grace_total = prestop + math.ceil(all_total_p99 * 1.5 / 1000)
    grace_exit = prestop + math.ceil(all_exit_p99 * 1.5 / 1000)
    with open(os.path.join(results_dir, "summary.json"), "w") as f:
        json.dump({"environment": env, "peak": peak, "prestop_s": prestop, "aggregate": agg, "runs": runs,
                   "grace_from_total_p99_s": grace_total, "grace_from_exit_p99_s": grace_exit}, f, indent=1)

    os.makedirs(reports_dir, exist_ok=True)
    has_plot = plot(runs, os.path.join(reports_dir, "drain.png"))
    pre = first.get("pre_drain_delay", "?")
    L = []
    w = L.append
    w("# Drain under load: how long a SIGTERM takes, and the grace period it needs")
    w("")
    w("Generated by `load-tests/drain/run.sh` from results `%s` (git-ignored). Every number below was measured "
      "in that run." % os.path.basename(results_dir.rstrip("/")))
    w("")
    env["gatling"] = gatling_version()
    environment_section(w, env, ("date", "cpus", "cpu_model", "mem_gib", "jdk", "helidon", "haproxy", "gatling"))
    w("## Setup")
    w("")
    w("- %s graceful instances behind HAProxy on 127.0.0.1 (active checks on `/health/ready` every %s ms, "
      "timeout %s ms, `fall %s`, no retries, no redispatch), constant-rate open-model load from Gatling (90%% `POST "
      "/v1/authorizations` held in flight 50-200 ms by `authorizer.simulated-latency` %s + jitter %s, 10%% "
      "`GET /ping`)." % (first.get("instances"), first.get("check_inter_ms"), first.get("check_timeout_ms"),
                         first.get("check_fall"),
                         first.get("simulated_latency"), first.get("simulated_jitter")))
    w("- Service: `shutdown.pre-drain-delay` %s, `drain-timeout` PT10S, `cleanup-timeout` PT3S, "
      "`metrics-linger` PT1S, `hard-deadline` PT30S." % pre)
    w("- Peak: %s rps (%s). Load levels are percentages of it." % (
        peak.get("peak_rps"), "given" if peak.get("given") else
        "measured in " + peak["from"] if peak.get("from") else "measured at the start of this run"))
    w("- Each run: load at the level, SIGTERM to one instance after a few seconds, `drainwatch.py` polls every "
      "50 ms (fresh connection each time) readiness, the business port, HAProxy's view of the server and "
      "`/metrics`; the process is waited for to get its exit status. The replacement starts after the exit, so "
      "JVM start-up does not compete with the drain being measured, and is warmed up off the record (6 s at 200 rps "
      "on its own port) before the next run.")
    w("- *last request done*: the end of the last request that instance answered, from HAProxy's log (request "
      "date + total time) and from the client's records (which lag when the client is short of CPU). *total*: the service's own `Shutdown summary` "
      "(signal to end of cleanup; the same value as `shutdown_duration_seconds{phase=\"total\"}`, scraped during "
      "the metrics linger: both columns are shown). *exited*: signal to process exit (total + metrics linger + "
      "health listener close): what `terminationGracePeriodSeconds` must cover.")
    w("")
    w("## Every run")
    w("")
    w("Milliseconds after the SIGTERM. Readiness, listener and HAProxy columns have the 50 ms resolution of the "
      "poll (a first poll in the same millisecond as the signal still sees 200: the JVM dispatches the signal a "
      "few ms later). *service logged the signal*: the timestamp of the service's `SIGTERM received` line (same "
      "clock, millisecond log stamps).")
    w("")
    w("| load | run | rps | in flight at signal | routed after signal | service logged the signal | readiness 503 | "
      "HAProxy DOWN | last request done (HAProxy log) | last request done (client) | listener closed | pre-drain | drain | cleanup | total (log) | total (metric) | exited | exit status | "
      "client errors (on the drained instance / no server UP) | load avg |")
    w("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in runs:
        p, m = r["log_phases_ms"], r["metric_phases_ms"]
        w("| %d%% | %d | %d | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %d (%d / %d) | %s |" % (
            r["level_pct"], r["run"], r["rate_rps"], r["in_flight_at_signal"], r["routed_after_signal"],
            fmt(r["signal_logged_ms"]),
            fmt(r["first_ready_503_ms"]), fmt(r["haproxy_down_ms"]), fmt(r["last_request_done_haproxy_ms"]),
            fmt(r["last_request_done_ms"]),
            fmt(r["business_closed_ms"]), fmt(p.get("pre-drain")), fmt(p.get("drain")), fmt(p.get("cleanup")),
            fmt(p.get("total")), fmt(m.get("total")), fmt(r["exited_ms"]), r["exit_status"], r["errors"],
            r["errors_on_victim"], r["errors_no_server"], r["loadavg"]))
    w("")
    try:
        with open(os.path.join(results_dir, "skipped.txt")) as f:
            skipped = [line.strip() for line in f if line.strip()]
    except OSError:
        skipped = []
    if skipped:
        w("Skipped (time budget `LT_BUDGET_S` used up): %s." % ", ".join(skipped))
        w("")
    w("## Per load level")
    w("")
    w("p50 / p99 in ms (nearest rank; with %d runs per level the p99 is the slowest run)." % (
        agg[str(levels[0])]["runs"] if levels else 0))
    w("")
    w("| load | rps | runs | client errors (on the drained instance / no server UP) | exit ≠ 0 | readiness 503 | "
      "HAProxy DOWN | last request done (HAProxy log) | drain phase | total | exited |")
    w("|---|---:|---:|---:|---:|---|---|---|---|---|---|")
    for lv in levels + ["all"]:
        a = agg[str(lv)]
        cell = lambda k: "%s / %s" % (fmt(a[k]["p50"]), fmt(a[k]["p99"]))  # noqa: E731
        w("| %s | %s | %d | %d (%d / %d) | %d | %s | %s | %s | %s | %s | %s |" % (
            "%d%%" % lv if lv != "all" else "**all**", a["rate_rps"] or "", a["runs"], a["errors"],
            a["errors_on_victim"], a["errors_no_server"], a["nonzero_exits"], cell("ready_503"), cell("haproxy_down"),
            cell("last_request_done_haproxy"), cell("drain"),
            cell("total"), cell("exited")))
    w("")
    if has_plot:
        w("![timeline of each drain](drain.png)")
        w("")
    w("## The grace period")
    w("")
    w("Rule of thumb from the field (a margin of half the measured drain for a slower day): "
      "`terminationGracePeriodSeconds ≈ p99 drain × 1.5`, plus the preStop sleep, which Kubernetes counts against the grace period. With a preStop sleep of "
      "%g s:" % prestop)
    w("")
    w("- from the p99 of *total* (%s ms): %g + ceil(%.2f × 1.5) = **%d s**" % (
        fmt(all_total_p99), prestop, all_total_p99 / 1000, grace_total))
    w("- from the p99 of *exited* (%s ms, adds the metrics linger and the health listener close): %g + "
      "ceil(%.2f × 1.5) = **%d s**" % (fmt(all_exit_p99), prestop, all_exit_p99 / 1000, grace_exit))
    w("")
    w("The grace arithmetic sizes the grace period from the configured bounds instead, which is the worst case the "
      "configuration allows (a request held until `drain-timeout` by a slow issuer, a cleanup that uses its whole "
      "budget):")
    w("")
    w("```")
    w("terminationGracePeriodSeconds > preStop sleep + pre-drain-delay + drain-timeout + cleanup-timeout + "
      "metrics-linger + margin")
    w("                               = %g + %s + 10 + 3 + 1 + margin = %g s + margin   (settings of this run)" % (
        prestop, pre.replace("PT", "").replace("S", ""), prestop + float(pre.replace("PT", "").replace("S", "") or 0)
        + 14))
    w("terminationGracePeriodSeconds > preStop sleep + hard-deadline = %g + 30 = %g s" % (prestop, prestop + 30))
    w("```")
    w("")
    w("What the measurement says about that arithmetic:")
    w("")
    al = agg["all"]
    w("- The drain phase itself (listener closed to last handler done) is short: p50 %s / p99 %s ms. The total is "
      "mostly the fixed pre-drain delay (%s), and the process exit adds the metrics linger (1 s)." % (
          fmt(al["drain"]["p50"]), fmt(al["drain"]["p99"]), pre))
    w("- HAProxy took the instance out p50 %s / p99 %s ms after the signal, and the last request it had sent there "
      "finished p50 %s / p99 %s ms after the signal (HAProxy's log). The pre-drain delay has to cover that removal "
      "*under load*: %s readiness answers 503 within one poll, but the load balancer acts on it only after "
      "`fall` checks, and a CPU-starved box stretches both the checks and the service's own timeline (see "
      "*service logged the signal*). In the cluster, the preStop sleep plus the pre-drain delay must cover the "
      "endpoint propagation in the same way." % (
          fmt(al["haproxy_down"]["p50"]), fmt(al["haproxy_down"]["p99"]),
          fmt(al["last_request_done_haproxy"]["p50"]), fmt(al["last_request_done_haproxy"]["p99"]),
          "the service's"))
    errs = al["errors_no_server"]
    w("- Client errors on the instance being drained: %d in %d runs. %s" % (
        al["errors_on_victim"], al["runs"],
        ("Errors with no server UP: %d — HAProxy had taken the *other* instance out too, because its readiness "
         "checks timed out (> 1 s) while it carried the whole load on a saturated machine (see the load "
         "average column and HAProxy's log in the run's results). That is not the drain; it is what an "
         "aggressive readiness timeout does to the survivors when CPU runs out." % errs) if errs else
        "No request failed anywhere during the drains."))
    w("- `p99 × 1.5` (%d s) is far below the grace-arithmetic sum: the sum is a bound for requests as slow as "
      "`authorizer.timeout` (5 s), which this load (50-200 ms) never produces. Set the grace period from the grace arithmetic "
      "(it must also exceed `preStop + hard-deadline`, or SIGKILL beats the service's own deadline); use the "
      "measured p99 to check that a normal drain finishes well inside it, and re-run this test when the "
      "latency profile or the shutdown settings change. A pod that finishes early exits early: a long grace "
      "period costs nothing on a healthy drain." % grace_exit)
    w("- The numbers do not include the cluster's endpoint propagation, which the preStop sleep and the "
      "pre-drain delay must cover; measure it in the cluster (time from pod deletion to the last request "
      "arriving at the pod).")
    w("")
    w("## What this can and cannot show")
    w("")
    w("- Loopback on one small machine shared by the load generator, HAProxy, the JVMs and whatever else runs "
      "(see the load average above): the phase durations are dominated by fixed delays (pre-drain, linger) and "
      "are robust to that; latency figures are not production figures.")
    w("- HAProxy's check interval sets how fast traffic stops (fall × inter); in Kubernetes that role is played "
      "by EndpointSlice removal and kube-proxy, with a delay this test cannot measure.")
    w("- With %d runs per level the p99 is the maximum of a handful of samples: a floor for the real p99, not an "
      "estimate of it. Run with `RUNS=20` (about 4 times longer) for a better tail." % (
          agg[str(levels[0])]["runs"] if levels else 0))
    write_report(os.path.join(reports_dir, "drain.md"), L)


if __name__ == "__main__":
    main()
