#!/usr/bin/env python3
"""The access-log-line benchmark's report: CPU time per line from JMH's console output.

Each iteration of AccessLogLineBenchmark, warm-up or measured, prints one line (its @TearDown(Level.Iteration)):
    cpu per call: process P us, benchmark thread T us, Log4j threads L us, benchmark thread in the call C us (N calls)
This prints, per benchmark, the median and quartiles of those figures over the measured iterations (warm-up ones
left out), the budget's verdict (one line at most 5 us of CPU, from burstOfLines: the request's side in the call
plus Log4j's thread) and JMH's own result table.

    report.py CONSOLE.txt JMH-RESULT.txt --smoke 0|1 --load-before "1.0 0.5 0.2" --java "openjdk version ..."
"""
import argparse
import re
import statistics
import sys

BUDGET_US = 5.0
HEADER = re.compile(r"^# Benchmark: \S+\.(\w+)$")
ITERATION = re.compile(r"^(# Warmup )?Iteration\s+\d+:")
CPU = re.compile(r"cpu per call: process ([0-9.]+) us, benchmark thread ([0-9.]+) us, Log4j threads ([0-9.]+) us, "
                 r"benchmark thread in the call ([0-9.]+) us \((\d+) calls\)")


def parse(console):
    """{benchmark: [(process, thread, log4j, in_call), ...]} over measured iterations, in order."""
    runs, benchmark, measured = {}, None, False
    for line in console:
        header = HEADER.match(line.strip())
        if header:
            benchmark, measured = header.group(1), False
            continue
        iteration = ITERATION.match(line)
        if iteration:
            measured = iteration.group(1) is None
        cpu = CPU.search(line)
        if cpu and benchmark and measured:
            runs.setdefault(benchmark, []).append(tuple(float(cpu.group(i)) for i in range(1, 5)))
    return runs


def summary(values):
    """'median [q1, q3]' to two decimals; the median alone for fewer than two values."""
    if len(values) < 2:
        return f"{values[0]:.2f}"
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return f"{median:.2f} [{q1:.2f}, {q3:.2f}]"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("console")
    parser.add_argument("result")
    parser.add_argument("--smoke", default="0")
    parser.add_argument("--load-before", default="")
    parser.add_argument("--java", default="")
    args = parser.parse_args()
    with open(args.console, encoding="utf-8") as f:
        runs = parse(f)
    with open(args.result, encoding="utf-8") as f:
        result = f.read().rstrip()
    if not runs:
        print(f"no 'cpu per call' line of a measured iteration in {args.console}", file=sys.stderr)
        sys.exit(1)

    print("# One access-log line through the logging pipeline (JMH)")
    print()
    if args.smoke == "1":
        print("**Smoke run (SMOKE=1): proves the benchmark runs; its numbers mean nothing.**")
        print()
    print(f"Measured by `load-tests/access-log-line/run.sh` (`AccessLogLineBenchmark`, test scope): {args.java}; "
          f"load average before: {args.load_before}. CPU time per line in µs, median [quartiles] over the measured "
          "iterations, from the JVM's thread CPU clocks (see the benchmark's javadoc): *request side* is the "
          "benchmark thread's (for `burstOfLines`, inside the call only), *Log4j* is Log4j's background thread's "
          "(formatting, masking, writing).")
    print()
    print("| benchmark | iterations | request side | Log4j's thread | process |")
    print("|---|---:|---:|---:|---:|")
    for name, rows in runs.items():
        request = [r[3] if name == "burstOfLines" else r[1] for r in rows]
        print(f"| {name} | {len(rows)} | {summary(request)} | {summary([r[2] for r in rows])} | "
              f"{summary([r[0] for r in rows])} |")
    print()
    bursts = runs.get("burstOfLines")
    if bursts:
        total = statistics.median(r[3] + r[2] for r in bursts)
        verdict = "within" if total <= BUDGET_US else "**over**"
        print(f"**One access-log line: {total:.2f} µs of CPU** (burstOfLines, request side + Log4j's thread, "
              f"median), {verdict} the {BUDGET_US:.0f} µs budget.")
        print()
    print("JMH's own figures (wall time per call, which a busy machine inflates):")
    print()
    print("```")
    print(result)
    print("```")


if __name__ == "__main__":
    main()
