"""The staging-like setup of a rolling-restart run, for report.py: the store, the shutdown budgets the instances ran
with, and what the CPU limits did (each cgroup's cpu.stat before and after each run and peak step, written by
setup.sh's rr_cgroups_snapshot into <run>/cgroups.jsonl), plus the goals of the staging benchmark.

    from limits import setup_section, throttling, throttling_section, peak_step_throttling, goals_section
"""
import json
import os

from reporting import fmt, read_json

# The benchmark's goals (load-tests/README.md): graceful 0 failed over >= 100,000 requests, naive > 0 in the same
# run of the script, p99 during a graceful roll <= 2 x the same run's steady p99.
GOAL_REQUESTS = 100000
GOAL_P99_RATIO = 2.0


def snapshots(run_dir):
    """{label: {group: stat}} from <run_dir>/cgroups.jsonl ({} when there is none)."""
    out = {}
    try:
        with open(os.path.join(run_dir, "cgroups.jsonl")) as f:
            for line in f:
                if line.strip():
                    d = json.loads(line)
                    out.setdefault(d["label"], {})[d["group"]] = d
    except (OSError, ValueError):
        pass
    return out


def delta(before, after):
    """What one cgroup (or the machine) did between two snapshots; a group not there before started from 0."""
    before = before or {}
    if after.get("group") == "machine":
        busy = after["busy_ticks"] - before.get("busy_ticks", 0)
        idle = after["idle_ticks"] - before.get("idle_ticks", 0)
        return {"group": "machine", "busy_pct": 100.0 * busy / (busy + idle) if busy + idle else None}
    d = {k: after.get(k) for k in ("group", "role", "cpus")}
    for k in ("nr_periods", "nr_throttled", "throttled_ms", "usage_ms"):
        d[k] = None if after.get(k) is None else after[k] - (before.get(k) or 0)
    d["throttled_pct"] = 100.0 * d["nr_throttled"] / d["nr_periods"] if d["nr_periods"] else 0.0
    d["new"] = not before
    return d


def window(snaps, first, last):
    """[delta per group] between two labels, and the seconds between them (None when a label is missing)."""
    a, b = snaps.get(first), snaps.get(last)
    if not b or not a:
        return [], None
    seconds = (next(iter(b.values()))["t_ms"] - next(iter(a.values()))["t_ms"]) / 1000
    return [delta(a.get(g), s) for g, s in b.items()], seconds


def throttling(run_dir):
    """{"seconds", "groups": [...], "machine_busy_pct"} from the run's start and end snapshots, or None."""
    groups, seconds = window(snapshots(run_dir), "start", "end")
    if seconds is None:
        return None
    machine = next((g for g in groups if g["group"] == "machine"), {})
    return {"seconds": round(seconds, 1), "machine_busy_pct": machine.get("busy_pct"),
            "groups": [g for g in groups if g["group"] != "machine"]}


def peak_step_throttling(peak_dir, rate, attempt):
    """(instances' throttled %, store's throttled %, machine busy %) during one peak step, or None."""
    groups, seconds = window(snapshots(peak_dir), "step-%d-%s-begin" % (rate, attempt),
                             "step-%d-%s-end" % (rate, attempt))
    if seconds is None:
        return None

    def pct(selected):
        periods = sum(g["nr_periods"] for g in selected)
        return 100.0 * sum(g["nr_throttled"] for g in selected) / periods if periods else None
    machine = next((g for g in groups if g["group"] == "machine"), {})
    groups = [g for g in groups if g["group"] != "machine"]
    return (pct([g for g in groups if g.get("role") not in ("store", "surge")]),
            pct([g for g in groups if g.get("role") == "store"]),
            machine.get("busy_pct"))


def setup_section(w, setup, run0):
    """The store, the CPU limits and the shutdown budgets, as list items of the report's Setup section."""
    if not setup:
        return
    w("- **Store**: `%s`: %s." % (setup.get("store"), setup.get("store_description")))
    cg = setup.get("cgroups", "none")
    if cg.startswith("v"):
        w("- **CPU limits** (cgroup %s, CFS period 100 ms like the kubelet's): each instance in a cgroup of its own "
          "limited to **%s CPU** (a replacement in a new one, like a new pod)%s; the load generator and HAProxy "
          "outside any limit. A JVM reads its limit from the cgroup (one CPU for any limit up to 1: its GC and "
          "compiler threads sized for one)." % (
              cg, fmt_cpus(setup.get("instance_cpu")), "" if setup.get("store") == "memory" else
              ", PostgreSQL and Redis together in one limited to **%s CPU**" % fmt_cpus(setup.get("store_cpu"))))
    else:
        w("- **CPU limits**: none: %s." % cg)
    if setup.get("surge_reserve"):
        w("- **The surge's CPU, reserved**: a node gives a Deployment's surge pod CPU of its own; on this one machine "
          "a replacement's boot and warm-up take CPU from everything else. So whenever no replacement runs (the peak "
          "search and the steady state included), a stand-in spends **%s CPU** in a cgroup of its own (`surge`), "
          "as a booting JVM does, on every CPU of the machine at once (one busy loop per CPU sharing the quota); it "
          "is stopped while a roll's replacement runs. The peak leaves that CPU free for the rolls." % (
              fmt_cpus(setup["surge_reserve"])))
    if setup.get("aot_cache"):
        w("- **AOT cache** (JDK 25, as the image starts): %s." % setup["aot_cache"])
    shutdown = setup.get("shutdown") or {}
    if shutdown:
        w("- **Shutdown budgets and warm-up** (`shutdown.*` and `warm-up.timeout`, from `%s`; a value given as an "
          "`LT_*` variable wins): %s." % (
            setup.get("shutdown_config"), ", ".join("`%s` %s (%s)" % (k, v[0], v[1]) for k, v in shutdown.items())))
    else:
        w("- **Shutdown budgets**: the load tests' own (`SHUTDOWN_CONFIG=none`): `pre-drain-delay` %s, "
          "`drain-timeout` %s." % (run0.get("pre_drain_delay"), run0.get("drain_timeout", "PT10S")))


def fmt_cpus(v):
    return "no limit" if not v else ("%g" % v)


def throttling_section(w, results):
    """Each cgroup's throttling during each run (cpu.stat nr_throttled / nr_periods and throttled time)."""
    rows = [(r, r["throttling"]) for r in results if r.get("throttling")]
    if not rows:
        return
    w("### CPU limits: throttling during each run")
    w("")
    w("Each cgroup's `cpu.stat` from the start to the end of the run's load (a replacement from its start, JVM start "
      "included). *throttled periods*: `nr_throttled` / `nr_periods`, the 100 ms periods in which the group used up "
      "its quota and was stopped until the next one; *throttled*: the time its threads spent stopped so (summed over "
      "them). Instances throttled while the machine still had idle CPU and the client kept its schedule (client lag "
      "p99 within the limit) means the instances' limit, not the client or the machine, set the pace.")
    w("")
    w("| variant | load | cgroup | runs | limit CPU | CPU used s | throttled periods | throttled s | machine busy "
      "| client lag p99 ms |")
    w("|---|---:|---|---|---:|---:|---:|---:|---:|---:|")
    for r, t in rows:
        for g in sorted(t["groups"], key=lambda g: (g["role"] == "store", g["group"])):
            w("| %s | %d%% | %s | %s | %s | %s | %s / %s (%s%%) | %s | %s%% | %s |" % (
                r["run"]["variant"], r["run"]["level_pct"], g["group"],
                g["role"] if g["role"] in ("store", "surge") else "%s%s" % (g["role"], " (replacement)" if g["new"] else ""),
                fmt_cpus(g["cpus"]), "–" if g["usage_ms"] is None else fmt(g["usage_ms"] / 1000, 1),
                g["nr_throttled"], g["nr_periods"], fmt(g["throttled_pct"], 1),
                fmt(g["throttled_ms"] / 1000, 1), fmt(t["machine_busy_pct"]), fmt(r["client_lag_p99_ms"])))


def goals_section(w, results):
    """The benchmark's goals, each met or not, from this run's numbers."""
    w("## Goals")
    w("")
    w("| goal | measured | met |")
    w("|---|---|---|")
    for r in results:
        v, level = r["run"]["variant"], r["run"]["level_pct"]
        failed = r["non_2xx"] + r["connection_errors"]
        if v.startswith("graceful"):
            w("| %s at %d%%: 0 failed over >= %s requests | %d failed of %d | %s |" % (
                v, level, "{:,}".format(GOAL_REQUESTS), failed, r["sent"],
                yes(failed == 0 and r["sent"] >= GOAL_REQUESTS)))
            steady = next((x for x in r.get("windows", []) if x["name"] == "steady"), None)
            rolls = [x for x in r.get("windows", []) if x["name"] != "steady"]
            for x in rolls:
                goal = "%s at %d%%: p99 during the %s <= %gx steady p99" % (v, level, x["name"], GOAL_P99_RATIO)
                if not steady or not steady["p99_ms"] or not x["p99_ms"]:
                    w("| %s | not measured: no 2xx %s (ROLL_S, MIN_REQUESTS) | **no** |" % (
                        goal, "in steady state" if x["p99_ms"] else "during the roll"))
                    continue
                ratio = x["p99_ms"] / steady["p99_ms"]
                w("| %s | %s ms / %s ms = %sx | %s |" % (
                    goal, fmt(x["p99_ms"]), fmt(steady["p99_ms"]), fmt(ratio, 2), yes(ratio <= GOAL_P99_RATIO)))
            if not rolls:
                w("| %s at %d%%: p99 during a roll <= %gx steady p99 | not measured: no roll | **no** |" % (
                    v, level, GOAL_P99_RATIO))
        elif v == "naive":
            w("| naive at %d%%: > 0 failed (the failures graceful avoids) | %d failed of %d | %s |" % (
                level, failed, r["sent"], yes(failed > 0)))
    w("")


def yes(ok):
    return "yes" if ok else "**no**"


def load_setup(results_dir):
    return read_json(os.path.join(results_dir, "setup.json"), {})
