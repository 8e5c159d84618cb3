"""What the load-test report generators share (drain/report.py, rolling-restart/report.py, fault-soak/report.py):
reading a run's result files, number formatting, and the parts every Markdown report has (the environment table,
writing the file).

    sys.path.insert(0, <load-tests>/lib); from reporting import fmt, read_json, ...
"""
import json
import os
import re

# The environment table's rows: key of environment.json (lib.sh's lt_environment) and its label, in report order.
ENVIRONMENT_ROWS = (("date", "date (UTC)"), ("cpus", "CPUs"), ("cpu_model", "CPU"), ("mem_gib", "memory GiB"),
                    ("kernel", "kernel"), ("jdk", "JDK"), ("helidon", "Helidon"), ("haproxy", "HAProxy"),
                    ("python", "python3 (drivers, reports)"), ("gatling", "load generator"))


def fmt(v, digits=0):
    """A number with `digits` decimals, or an en dash for a missing one."""
    return "–" if v is None else ("%." + str(digits) + "f") % v


def read_json(path, default=None):
    """The JSON document at `path`, or `default` when it is missing or unreadable (a run cut short)."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def environment_section(w, env, keys, labels=None):
    """Writes the `## Environment` table through `w` (one line per call) with the rows of ENVIRONMENT_ROWS whose
    key is in `keys` (labelled by `labels[key]` when given), then the load average at the start of the run."""
    w("## Environment")
    w("")
    w("| | |")
    w("|---|---|")
    for key, label in ENVIRONMENT_ROWS:
        if key in keys:
            w("| %s | %s |" % ((labels or {}).get(key, label), env.get(key, "?")))
    w("| load average at start | %s |" % " / ".join(env.get("loadavg_at_start", [])))
    w("")


def write_report(path, lines):
    """Writes the Markdown lines to `path`, creating its directory, with one final newline."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def gatling_version():
    """"Gatling x.y.z (Java DSL)" from the load tests' client project (lib/gatling/pom.xml), "?" when unreadable."""
    pom = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gatling", "pom.xml")
    try:
        return "Gatling %s (Java DSL)" % re.search(r"<gatling.version>([^<]+)<", open(pom).read()).group(1)
    except (OSError, AttributeError):
        return "?"
