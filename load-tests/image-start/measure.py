#!/usr/bin/python3
"""Starts the container image with and without its AOT cache, times start-to-ready, and writes the report.

Run by load-tests/image-start/run.sh. Standard library only.

Timing: PID 1's start is read from /proc/<pid>/stat (clock ticks since boot on CLOCK_BOOTTIME, 10 ms resolution),
ready is the moment the first 200 of GET /health/ready arrives (polled every 10 ms over a fresh connection, on the
same clock). So start-to-ready excludes run-image.sh's own set-up (buildah mounting the image), which is shown apart.
"""

import argparse
import csv
import http.client
import os
import platform
import re
import signal
import statistics
import subprocess
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN_IMAGE = os.path.join(ROOT, "scripts", "run-image.sh")
STARTED = re.compile(r"serving business traffic on port (\d+), health probes and metrics on port (\d+)")
JVM_UPTIME = re.compile(r"Started all channels in \d+ milliseconds\. (\d+) milliseconds since JVM startup")
TICKS = os.sysconf("SC_CLK_TCK")
# The pod's memory limit (k8s/base/deployment.yaml, 768Mi), which the JVM would read from its cgroup; run-image.sh
# sets no cgroup limits, so it is given to the JVM directly, in both modes alike.
POD_MEMORY = "-XX:MaxRAM=768m"
MODES = {
    "aot": "",
    "plain": "-XX:AOTMode=off",
}


def boottime():
    return time.clock_gettime(time.CLOCK_BOOTTIME)


def process_start(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[19]) / TICKS  # field 22 of stat: starttime


def ready(port):
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
        connection.request("GET", "/health/ready")
        status = connection.getresponse().status
        connection.close()
        return status == 200
    except OSError:
        return False


def one_start(image, mode, timeout_s=120):
    work = tempfile.mkdtemp(prefix="image-start-")
    pid_file = os.path.join(work, "pid1")
    options = " ".join(o for o in ("-Dserver.port=0", "-Dhealth-server.port=0", POD_MEMORY,
                                   "-Xlog:aot=info:file=/tmp/aot.log",
                                   MODES[mode]) if o)
    launched = boottime()
    process = subprocess.Popen([RUN_IMAGE, "--tmp", os.path.join(work, "tmp"), "--pid-file", pid_file,
                                "-e", "JDK_JAVA_OPTIONS=" + options, image],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    ports = threading.Event()
    found = {}

    def pump():
        for line in process.stdout:
            lines.append(line.rstrip("\n"))
            match = STARTED.search(line)
            if match:
                found["health"] = int(match.group(2))
                ports.set()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        if not ports.wait(timeout_s):
            raise RuntimeError("no startup line:\n" + "\n".join(lines[-30:]))
        deadline = boottime() + timeout_s
        while not ready(found["health"]):
            if boottime() > deadline:
                raise RuntimeError("not ready:\n" + "\n".join(lines[-30:]))
            time.sleep(0.01)
        ready_at = boottime()
        with open(pid_file) as f:
            pid1 = int(f.read().strip())
        started = process_start(pid1)
        os.kill(pid1, signal.SIGTERM)
        status = process.wait(timeout=60)
        reader.join(5)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
        # The AOT log goes to a file in the container's /tmp: the image's command line keeps the JVM's own logging
        # off stdout (stdout is for log lines only).
        try:
            with open(os.path.join(work, "tmp", "aot.log")) as f:
                aot_log = f.read()
        except OSError:
            aot_log = ""
        subprocess.run(["rm", "-rf", work], check=False)
    text = "\n".join(lines)
    uptimes = [int(m) for m in JVM_UPTIME.findall(text)]
    return {
        "mode": mode,
        "start_to_ready_ms": round((ready_at - started) * 1000),
        "launch_to_pid1_ms": round((started - launched) * 1000),
        "jvm_uptime_at_health_listener_ms": uptimes[-1] if uptimes else "",
        "aot_cache_opened": "Opened AOT cache app.aot." in aot_log,
        "exit_status": status,
        "load_avg_1m": os.getloadavg()[0],
    }


def percentile(values, p):
    ordered = sorted(values)
    return ordered[max(0, -(-len(ordered) * p // 100) - 1)]  # nearest rank


def summary(rows, mode):
    values = [r["start_to_ready_ms"] for r in rows if r["mode"] == mode]
    return {"n": len(values), "median": statistics.median(values), "p90": percentile(values, 90),
            "min": min(values), "max": max(values)}


def inspect(image, template):
    return subprocess.run(["buildah", "inspect", "--type", "image", "--format", template, image],
                          capture_output=True, text=True, check=True).stdout.strip()


def write_report(path, image, rows, csv_name, load_before, load_after):
    aot, plain = summary(rows, "aot"), summary(rows, "plain")
    base = inspect(image, '{{index .ImageAnnotations "org.opencontainers.image.base.name"}}')
    env = inspect(image, "{{range .OCIv1.Config.Env}}{{println .}}{{end}}")
    java = next((v.split("=", 1)[1] for v in env.splitlines() if v.startswith("JAVA_VERSION=")), "?")
    entrypoint = inspect(image, "{{range .OCIv1.Config.Entrypoint}}{{.}} {{end}}")
    with open("/proc/cpuinfo") as f:
        cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "?")
    with open("/proc/meminfo") as f:
        memory = int(f.readline().split()[1]) / 1024 / 1024
    out = []
    out.append("# Container image: start-to-ready with and without the AOT cache\n")
    out.append(f"Generated by `load-tests/image-start/run.sh` from results `{csv_name}` (git-ignored). "
               "Every number below was measured in that one run.\n")
    out.append("## Environment\n")
    out.append("| | |\n|---|---|")
    out.append(f"| date (UTC) | {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} |")
    out.append(f"| CPUs | {os.cpu_count()} (shared with other work on this machine) |")
    out.append(f"| CPU | {cpu} |")
    out.append(f"| memory GiB | {memory:.1f} |")
    out.append(f"| kernel | {platform.release()} |")
    out.append(f"| image | `{image}`, image id `{inspect(image, '{{.FromImageID}}')[:12]}` |")
    out.append(f"| runtime base | `{base}` |")
    out.append(f"| JVM in the image | {java} |")
    out.append(f"| ENTRYPOINT | `{entrypoint.strip()}` |")
    out.append(f"| load average (1, 5, 15 min) before → after | {load_before} → {load_after} |")
    out.append("")
    out.append("## Method\n")
    out.append(f"- {aot['n']} starts per mode, alternating the order (aot, plain, plain, aot, ...), each with "
               "`scripts/run-image.sh`: the image's ENTRYPOINT as PID 1 of its own PID namespace, uid 10001, "
               "read-only root, `/tmp` writable.")
    out.append("- **aot**: the ENTRYPOINT as built (`-XX:AOTCache=app.aot`, the cache the Dockerfile's training run "
               "recorded). **plain**: the same plus `-XX:AOTMode=off`, so the JDK's default CDS archive still "
               "applies, as in a plain `java -jar`. Both get `JDK_JAVA_OPTIONS=-Dserver.port=0 "
               f"-Dhealth-server.port=0 {POD_MEMORY} -Xlog:aot=info:file=/tmp/aot.log` (free ports; the pod's 768Mi memory limit, which the "
               "JVM would read from its cgroup; the log line that proves the cache was opened). Embedded defaults "
               "otherwise: in-memory backends, no warm-up.")
    out.append("- *start-to-ready*: from PID 1's start (`/proc/<pid>/stat`, 10 ms resolution) to the first `200` "
               "of `GET /health/ready` (polled every 10 ms, fresh connection each time): what a Deployment waits "
               "for before it sends traffic or stops the next old pod. *set-up*: run-image.sh launched to PID 1 "
               "started (buildah mounting the image: a container runtime's share, not the JVM's). *JVM uptime*: "
               "the JVM's own `milliseconds since JVM startup` when the health listener started.")
    out.append("- Then SIGTERM to PID 1; every start must exit with status 0.")
    out.append("")
    out.append("## Result\n")
    out.append("| mode | starts | median ms | p90 ms | min ms | max ms |")
    out.append("|---|---:|---:|---:|---:|---:|")
    for name, s in (("aot", aot), ("plain", plain)):
        out.append(f"| {name} | {s['n']} | {s['median']:.0f} | {s['p90']} | {s['min']} | {s['max']} |")
    out.append("")
    out.append(f"**The AOT cache cuts the median start-to-ready from {plain['median']:.0f} ms to {aot['median']:.0f} "
               f"ms ({aot['median'] / plain['median']:.2f} of plain); p90 from {plain['p90']} ms to {aot['p90']} "
               "ms.**")
    opened = [r for r in rows if r["mode"] == "aot" and r["aot_cache_opened"]]
    unopened = [r for r in rows if r["mode"] == "plain" and not r["aot_cache_opened"]]
    out.append(f"The JVM logged `Opened AOT cache app.aot.` in {len(opened)} of {aot['n']} aot starts and in "
               f"{plain['n'] - len(unopened)} of {plain['n']} plain starts; "
               f"{sum(1 for r in rows if r['exit_status'] == 0)} of {len(rows)} starts exited with status 0 after "
               "SIGTERM.")
    out.append("")
    out.append("## Every start\n")
    out.append("| # | mode | start-to-ready ms | set-up ms | JVM uptime at health listener ms | AOT cache opened "
               "| exit status | load avg (1 min) |")
    out.append("|---:|---|---:|---:|---:|---|---:|---:|")
    for i, r in enumerate(rows, 1):
        out.append(f"| {i} | {r['mode']} | {r['start_to_ready_ms']} | {r['launch_to_pid1_ms']} | "
                   f"{r['jvm_uptime_at_health_listener_ms']} | {'yes' if r['aot_cache_opened'] else 'no'} | "
                   f"{r['exit_status']} | {r['load_avg_1m']:.2f} |")
    out.append("")
    out.append("## Reading it\n")
    out.append("- Two shared cores: other processes ran during the measurement (see the load averages), so single "
               "starts scatter; the alternating order spreads that noise over both modes, and the medians are the "
               "figures to compare. A pod with its own CPU starts faster in both modes.")
    out.append("- The bases are local stand-ins (Debian bookworm minbase plus a JRE made with jlink from the "
               "machine's Temurin JDK 25; `scripts/build-image.sh` says why). On the real `eclipse-temurin:25-jre` "
               "the figures may differ: where the registry is reachable, build with `scripts/build-image.sh "
               "--real-bases NAME` and rerun this script with `IMAGE=NAME`.")
    out.append("- Not measured here: image pull time, the kubelet's probe period (a readiness probe every 2 s "
               "adds up to 2 s in a cluster), CPU limits (no cgroups here).")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--image", required=True)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--csv", required=True)
    parser.add_argument("--report", required=True)
    args = parser.parse_args()
    load_before = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    rows = []
    for i in range(args.runs):
        for mode in (("aot", "plain") if i % 2 == 0 else ("plain", "aot")):
            row = one_start(args.image, mode)
            rows.append(row)
            print(f"image-start: {len(rows):2d} {mode:5s} start-to-ready {row['start_to_ready_ms']} ms, "
                  f"exit {row['exit_status']}", flush=True)
    load_after = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    with open(args.csv, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    write_report(args.report, args.image, rows, os.path.basename(args.csv), load_before, load_after)
    print(f"image-start: report {args.report}")


if __name__ == "__main__":
    main()
