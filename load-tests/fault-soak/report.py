#!/usr/bin/env python3
"""Checks the fault soak's invariants on one results directory and writes its Markdown report.

    report.py RESULTS_DIR REPORT.md        exit 0: every invariant holds; 1: one broke (the report says which)

Reads what run.sh and client.py wrote: params.json, end.json, events.csv (faults and process events),
attempts.csv and attempts-verify.csv (one row per request), keys.jsonl (every 201 per key), verify.jsonl (the replay
and the GETs), issuer-stats.json, store-records.txt (every authorization record the store holds), store-rows.jsonl
(PostgreSQL: every row of the authorizations table, the system of record), metrics/*.txt
(each replica's counters scraped before it was killed and at the end) and the replicas' logs. With --lifecycle
(params.json "lifecycle": 1) also the captures and voids: lifecycle.py's invariants and section.
"""
import csv
import glob
import json
import os
import re
import sys
from collections import Counter, defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from loadstats import percentile  # noqa: E402
from reporting import read_json, write_report  # noqa: E402
from lifecycle import Lifecycle, without_lifecycle  # noqa: E402

# What a replica logs when it answers a 5xx or leaves work for the next claim, and how the report names it.
LOGGED_FAILURES = (
    (re.compile(r"Idempotency store unavailable, refusing the request"), "503 store unavailable at the claim"),
    (re.compile(r"decided but its recording is unknown"), "504 outcome-unknown: decided, recording failed"),
    (re.compile(r"Authorizer timed out after"), "504 issuer call timed out (authorizer.timeout)"),
    (re.compile(r"Authorizer failed, .*issuer call failed: (.*?); outcome unknown"), "502 issuer call failed: %s"),
    (re.compile(r"Idempotency lease lost while the request was running"), "lease lost while the request ran"),
    (re.compile(r"recorded but its idempotency key not completed"),
     "decision recorded, key not completed (the next claim recovers it)"),
    (re.compile(r"Idempotency lease renewal failed"), "lease renewal failed"),
)
COUNTERS = ("idempotency_requests_total", "idempotency_keys_released_total", "authorizer_invocations_total",
            "authorizer_connection_retries_total")
METRIC = re.compile(r'^(\w+)\{([^}]*)\}\s+([0-9.eE+-]+)')


def read_jsonl(path):
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except OSError:
        return []


def read_csv(path):
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError:
        return []


def without_created_at(body):
    try:
        d = json.loads(body)
    except ValueError:
        return None
    d.pop("createdAt", None)
    return d


def _created_at(body):
    try:
        return json.loads(body).get("createdAt")
    except (ValueError, AttributeError):
        return None


def fmt_ms(v):
    return "–" if v is None else "%.0f" % v


class Soak:
    def __init__(self, run):
        self.run = run
        self.params = read_json(os.path.join(run, "params.json"), {})
        self.end = read_json(os.path.join(run, "end.json"), {})
        self.events = read_csv(os.path.join(run, "events.csv"))
        for e in self.events:
            e["epoch_ms"] = int(e["epoch_ms"])
        self.attempts = read_csv(os.path.join(run, "attempts.csv"))
        self.verify_attempts = read_csv(os.path.join(run, "attempts-verify.csv"))
        self.keys = read_jsonl(os.path.join(run, "keys.jsonl"))
        self.verify = {v["key"]: v for v in read_jsonl(os.path.join(run, "verify.jsonl"))}
        self.issuer = read_json(os.path.join(run, "issuer-stats.json"), {})
        self.issuer_soak = read_json(os.path.join(run, "issuer-stats-soak.json"), {})
        try:
            with open(os.path.join(run, "store-records.txt")) as f:
                self.records = [line.strip() for line in f if line.strip()]
        except OSError:
            self.records = None
        try:
            with open(os.path.join(run, "unknown-outcomes-left.txt")) as f:
                self.unknown_left = int(f.read().strip() or "0")
        except (OSError, ValueError):
            self.unknown_left = None
        rows = os.path.join(run, "store-rows.jsonl")
        self.rows = read_jsonl(rows) if os.path.exists(rows) else None
        self.invariants = []   # (name, value, expected text, ok)
        self.lifecycle = None

    def check(self, name, value, ok, expected="0"):
        self.invariants.append((name, value, expected, ok))

    # ---- faults --------------------------------------------------------------------------------------------------

    def faults(self):
        """[(start_ms, end_ms, kind, target, detail)] in order."""
        out, open_ = [], {}
        for e in self.events:
            if e["event"] == "fault":
                open_[e["target"]] = e
            elif e["event"] == "fault-end" and e["target"] in open_:
                s = open_.pop(e["target"])
                kind = s["detail"].split()[0]
                out.append((s["epoch_ms"], e["epoch_ms"], kind, s["target"], s["detail"], e["detail"]))
        return out

    def open_attempts_at(self, ms, target):
        """Requests in progress at ms: on that replica, or on any for a store fault."""
        n = 0
        for a in self.attempts:
            if float(a["start_ms"]) <= ms <= float(a["end_ms"]):
                if target == "store" or target == "replica-%s" % a["replica"]:
                    n += 1
        return n

    def restart_times(self):
        starts, out = {}, []
        for e in self.events:
            if e["event"] == "replica-start":
                starts[e["target"]] = e["epoch_ms"]
            elif e["event"] == "replica-ready" and e["target"] in starts:
                out.append(e["epoch_ms"] - starts.pop(e["target"]))
        return out

    def exit_statuses(self, kind):
        return Counter(e["detail"].split("status=")[1] for e in self.events
                       if e["event"] == "replica-exit" and e["detail"].startswith(kind))

    # ---- service side --------------------------------------------------------------------------------------------

    def counters(self):
        """Sum over replica lifetimes of the last scrape of each lifetime."""
        last = {}
        for path in sorted(glob.glob(os.path.join(self.run, "metrics", "replica-*-start-*-*.txt")),
                           key=lambda p: int(p.rsplit("-", 1)[1][:-4])):
            life = "-".join(os.path.basename(path).split("-")[:4])
            if os.path.getsize(path) > 0:
                last[life] = path
        sums = defaultdict(float)
        for path in last.values():
            with open(path) as f:
                for line in f:
                    m = METRIC.match(line)
                    if m and m.group(1) in COUNTERS:
                        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
                        label = labels.get("outcome") or labels.get("reason") or "total"
                        sums[(m.group(1), label)] += float(m.group(3))
        return sums, len(last)

    def logged_failures(self):
        """Why replicas answered 5xx, from their logs: Counter of a short reason per logged failure."""
        reasons = Counter()
        for path in glob.glob(os.path.join(self.run, "replica-*-start-*.log")):
            with open(path, errors="replace") as f:
                for line in f:
                    for pattern, reason in LOGGED_FAILURES:
                        m = pattern.search(line)
                        if m:
                            reasons[reason % m.groups() if m.groups() else reason] += 1
                            break
        return reasons

    def shutdown_summaries(self):
        out = []
        for path in sorted(glob.glob(os.path.join(self.run, "replica-*-start-*.log"))):
            with open(path, errors="replace") as f:
                for line in f:
                    if "Shutdown summary:" in line:
                        out.append(line.split("Shutdown summary:", 1)[1].strip())
        return out

    # ---- the invariants ------------------------------------------------------------------------------------------

    def evaluate(self):
        faults = self.faults()
        keys = self.keys
        n = len(keys)
        self.check("payments sent (distinct keys, each its own reference)", n, n == self.params.get("keys"),
                   str(self.params.get("keys")))

        more_ids, differ, differ_explained, bad_location, no_201 = [], [], [], [], []
        final_body = {}
        for k in keys:
            created = sorted(k["created"] + ([self.verify[k["key"]]["replay"]]
                                             if self.verify.get(k["key"], {}).get("replay") else []),
                             key=lambda c: c["at_ms"])
            if not k["created"]:
                no_201.append(k)
            ids = {c["id"] for c in created}
            if len(ids) > 1:
                more_ids.append((k["key"], sorted(ids)))
            for c in created:
                if c["location"] != "/v1/authorizations/%s" % c["id"]:
                    bad_location.append((k["key"], c["location"], c["id"]))
            first_seen = {}
            for c in created:
                first_seen.setdefault(c["body"], c["at_ms"])
            if len(first_seen) > 1:
                # createdAt included: it is the issuer's decision time, the same for every execution of the attempt,
                # also after a store restart lost the record (docs/idempotency.md).
                in_soak = len({c["body"] for c in k["created"]}) > 1
                differ.append((k["key"], in_soak))
            if created:
                final_body[k["key"]] = created[-1]["body"]

        self.check("keys with more than one authorization id (all 201s: soak and replay)", len(more_ids),
                   not more_ids)
        self.check("keys whose 201 bodies differ (createdAt included, store restarts or not)", len(differ), not differ)
        self.check("201s whose Location is not /v1/authorizations/{their id}", len(bad_location), not bad_location)
        self.check("keys that got no 201 during the soak (retries on random replicas, %s s per key)"
                   % self.params.get("key_deadline_s"), len(no_201), not no_201)

        replay_bad, get_bad = [], []
        for k in keys:
            v = self.verify.get(k["key"])
            ids = {c["id"] for c in k["created"]}
            if not v or not v["replay"] or (ids and v["replay"]["id"] not in ids):
                replay_bad.append(k["key"])
            if not v or not v["id"]:
                get_bad.append((k["key"], "no id"))
                continue
            for replica, g in sorted(v["gets"].items()):
                body = g["body"] if isinstance(g["body"], str) else ""
                got_id = (without_created_at(body) or {}).get("id") if g["status"] == 200 else None
                # With a lifecycle GET shows the current state: the rest must still be the 201's, byte for byte.
                same = (without_lifecycle(body) == without_lifecycle(final_body.get(k["key"], ""))
                        and _created_at(body) == _created_at(final_body.get(k["key"], ""))) \
                    if self.params.get("lifecycle") else body == final_body.get(k["key"])
                if g["status"] != 200 or got_id != v["id"] or not same:
                    get_bad.append((k["key"], "replica %s: %s" % (replica, g["status"])))
        self.check("keys whose replay (one more POST after the faults) did not answer 201 with the same id",
                   len(replay_bad), not replay_bad)
        replicas = self.params.get("replicas", 2)
        self.check("final GETs (every key's id, on each of the %d replicas) not answering exactly that "
                   "authorization" % replicas, len(get_bad), not get_bad)

        stats = self.issuer
        answered = n - len([k for k in keys if not k["created"] and not (self.verify.get(k["key"]) or {}).get("replay")])
        approved_bodies = sum(1 for k in keys if '"status":"APPROVED"' in final_body.get(k["key"], ""))
        if self.params.get("issuer_dedup", 1) == 0:
            # An issuer that does not deduplicate decides every call: what counts is what the cardholder holds.
            self.check("issuer (no deduplication): payments holding two approvals net of reversals "
                       "(`paymentsApprovedTwiceNet`)", stats.get("paymentsApprovedTwiceNet"),
                       stats.get("paymentsApprovedTwiceNet") == 0)
            self.check("unknown outcomes left unresolved after the reconciler's deadline", self.unknown_left,
                       self.unknown_left == 0)
        else:
            self.check("issuer: business payments approved more than once (`paymentsApprovedMoreThanOnce`)",
                       stats.get("paymentsApprovedMoreThanOnce"), stats.get("paymentsApprovedMoreThanOnce") == 0)
            self.check("issuer: attempt ids presented for another payment (`attemptIdConflicts`)",
                       stats.get("attemptIdConflicts"), stats.get("attemptIdConflicts") == 0)
            self.check("issuer: authorizations (decisions, one per attempt id) = distinct attempts = keys answered",
                       stats.get("authorizations"), stats.get("authorizations") == answered, str(answered))
            self.check("issuer: approvals = keys answered APPROVED", stats.get("approved"),
                       stats.get("approved") == approved_bodies, str(approved_bodies))
        self.check("issuer: ledger evictions (a forgotten attempt could be decided twice)", stats.get("evictions"),
                   stats.get("evictions") == 0)

        if self.records is not None:
            refs = Counter()
            wrong = 0
            by_ref = {k["reference"]: k["key"] for k in keys}
            for r in self.records:
                d = without_created_at(r) or {}
                refs[d.get("reference")] += 1
                if final_body.get(by_ref.get(d.get("reference"))) != r:
                    wrong += 1
            shared = sum(1 for c in refs.values() if c > 1)
            self.check("store: references with more than one authorization record", shared, shared == 0)
            self.check("store: authorization records (after the replay re-recorded what a restart lost) = keys",
                       len(self.records), len(self.records) == answered, str(answered))
            self.check("store: records whose bytes differ from the key's last 201", wrong, wrong == 0)

        if self.rows is not None:
            by_ref = {k["reference"]: k["key"] for k in keys}
            per_ref = Counter(r.get("reference") for r in self.rows)
            mismatched = 0
            for r in self.rows:
                body = without_created_at(final_body.get(by_ref.get(r.get("reference")), "")) or {}
                if body.get("id") != r.get("id") or body.get("status") != r.get("status") \
                        or body.get("declineCode") != r.get("decline_code"):
                    mismatched += 1
            self.check("system of record: references with more than one authorizations row",
                       sum(1 for c in per_ref.values() if c > 1), all(c == 1 for c in per_ref.values()))
            self.check("system of record: authorizations rows = keys answered", len(self.rows),
                       len(self.rows) == answered, str(answered))
            self.check("system of record: rows whose id, status or decline code differ from the key's 201",
                       mismatched, mismatched == 0)

        if self.params.get("lifecycle"):
            self.lifecycle = Lifecycle(self, read_jsonl, read_json).evaluate()

        kinds = {f[2] for f in faults}
        every = tuple(self.params.get("fault_kinds") or
                      ("pause", "pause-past-lease", "store-restart", "sigterm", "sigkill"))
        self.check("fault kinds injected at least once (else the run proves less than it claims)",
                   "%d of %d" % (sum(1 for k in every if k in kinds), len(every)), all(k in kinds for k in every),
                   "%d of %d" % (len(every), len(every)))

        self.details = dict(more_ids=more_ids, differ=differ, differ_explained=differ_explained,
                            bad_location=bad_location, no_201=no_201, replay_bad=replay_bad, get_bad=get_bad,
                            faults=faults, final_body=final_body)
        return all(ok for _, _, _, ok in self.invariants)

    # ---- the report ----------------------------------------------------------------------------------------------

    def write(self, path, passed):
        p, d, stats = self.params, self.details, self.issuer
        keys, attempts = self.keys, self.attempts
        submissions = sum(2 if k["double"] else 1 for k in keys) + sum(
            2 if op["double"] else 1 for k in keys for op in k.get("ops", []))
        by_outcome = Counter((a["status"] if a["status"] != "0" else a["error"]) for a in attempts)
        key_attempts = Counter(a["key"] for a in attempts)
        to_201 = sorted(min(c["at_ms"] for c in k["created"]) - k["first_sent_ms"] for k in keys if k["created"])
        lat_201 = sorted(float(a["latency_ms"]) for a in attempts if a["status"] == "201")
        t0 = min((e["epoch_ms"] for e in self.events if e["event"] == "clients-start"), default=0)
        t_end = max((e["epoch_ms"] for e in self.events if e["event"] == "clients-end"), default=t0)
        kinds = Counter(f[2] for f in d["faults"])
        sums, lifetimes = self.counters()
        L = []
        w = L.append
        w("# Fault soak%s: %s store, two replicas, one issuer"
          % (" of the lifecycle (authorize, then capture or void)" if p.get("lifecycle") else "", p.get("store")))
        w("")
        w("Generated by `load-tests/fault-soak/run.sh --store %s --duration %s --keys %s --concurrency %s%s%s` on %s."
          % (p.get("store"), p.get("duration_s"), p.get("keys"), p.get("concurrency"),
             " --seed %s" % p["seed"] if p.get("seed") else "",
             " --lifecycle --validity %s" % p.get("validity_s") if p.get("lifecycle") else "", p.get("started")))
        w("")
        w("**Result: %s.** %d payments, %d requests, %d faults injected (%s)."
          % ("every invariant holds" if passed else "AN INVARIANT BROKE", len(keys), len(attempts),
             len(d["faults"]), ", ".join("%s %d" % (k, kinds[k]) for k in sorted(kinds))))
        w("")
        w("## Invariants")
        w("")
        w("| invariant | value | expected | |")
        w("|---|---|---|---|")
        for name, value, expected, ok in self.invariants:
            w("| %s | %s | %s | %s |" % (name, value, expected, "ok" if ok else "**BROKEN**"))
        w("")
        for label, items in (("more than one id", d["more_ids"]), ("bodies differ", d["differ"]),
                             ("bad Location", d["bad_location"]), ("replay", d["replay_bad"]),
                             ("GET", d["get_bad"])):
            if items:
                w("")
                w("%s (first 20): `%s`" % (label, json.dumps(items[:20])))
        if d["no_201"]:
            w("")
            w("Keys without a 201 during the soak (first 20), with their outcomes and rejections:")
            w("")
            for k in d["no_201"][:20]:
                w("- `%s`: %s %s" % (k["key"], k["outcomes"], json.dumps(k["rejections"])[:300]))
        if self.lifecycle:
            w("")
            self.lifecycle.section(w)
        w("")
        w("## Faults injected")
        w("")
        pauses = [int(f[4].split()[1]) for f in d["faults"] if f[2].startswith("pause")]
        w("| kind | count | what |")
        w("|---|---|---|")
        w("| pause (SIGSTOP, then SIGCONT) shorter than the lease | %d | a replica frozen mid-request, its lease "
          "still renewable when it wakes |" % kinds["pause"])
        w("| pause longer than the lease (%s s) | %d | the lease lapses: a retry elsewhere may claim the key while "
          "the frozen replica still holds its issuer call |" % (p.get("lease_s"), kinds["pause-past-lease"]))
        w("| store restart | %d | %s |" % (kinds["store-restart"], {
            "redis": "redis: SIGKILL, down 0-3 s, back empty (every key and decision lost)",
            "postgres": "postgres: SIGKILL of the postmaster (its backends exit on their own), down 0-3 s, back after "
                        "crash recovery with every committed row"}.get(p.get("store"), p.get("store"))))
        if "store-pause" in p.get("fault_kinds", ()):
            w("| store pause | %d | the postmaster and every backend SIGSTOPped for 0.5 s to 2 x the lease, then "
              "SIGCONT: statements time out (`database.statement-timeout`), leases cannot be renewed |"
              % kinds["store-pause"])
        w("| SIGTERM of a replica | %d | graceful drain; exit statuses: %s |"
          % (kinds["sigterm"], dict(self.exit_statuses("sigterm"))))
        w("| SIGKILL of a replica | %d | no drain, keys held in flight until their lease runs out; exit statuses: "
          "%s |" % (kinds["sigkill"], dict(self.exit_statuses("sigkill"))))
        w("")
        restarts = sorted(self.restart_times())
        w("Pauses: %s ms (min-max). A terminated or killed replica was started again on the same ports with the "
          "same configuration; start to ready: p50 %s ms, max %s ms. Requests in progress on the victim when a "
          "fault struck (on any replica for a store restart): %d in total."
          % ("%d-%d" % (min(pauses), max(pauses)) if pauses else "–", fmt_ms(percentile(restarts, 50)),
             fmt_ms(restarts[-1] if restarts else None),
             sum(self.open_attempts_at(f[0], f[3]) for f in d["faults"])))
        w("")
        w("## Traffic")
        w("")
        w("| | |")
        w("|---|---|")
        w("| payments (keys) | %d, first sends spread over %s s, at most %s unanswered at once |"
          % (len(keys), p.get("duration_s"), p.get("concurrency")))
        w("| submitted twice at once (both replicas) | %d |" % sum(1 for k in keys if k["double"]))
        w("| requests during the soak | %d (%d submissions, captures and voids included, so %d retries) |"
          % (len(attempts), submissions, len(attempts) - submissions))
        w("| requests by answer | %s |" % ", ".join("%s: %d" % (k, v) for k, v in sorted(by_outcome.items())))
        w("| requests per key | p50 %s, p99 %s, max %s |" % (
            percentile(sorted(key_attempts.values()), 50), percentile(sorted(key_attempts.values()), 99),
            max(key_attempts.values()) if key_attempts else "–"))
        w("| verification | %d replays (one more POST per key), %d GETs |"
          % (len(self.verify_attempts), len(keys) * p.get("replicas", 2)))
        w("| soak length | %.0f s from the first send to the last answer |" % ((t_end - t0) / 1000))
        w("")
        w("Latency (ms) | p50 | p90 | p99 | max")
        w("---|---|---|---|---")
        w("first send to first 201, per key (retries included) | %s | %s | %s | %s" % (
            fmt_ms(percentile(to_201, 50)), fmt_ms(percentile(to_201, 90)), fmt_ms(percentile(to_201, 99)),
            fmt_ms(to_201[-1] if to_201 else None)))
        w("one request answered 201 | %s | %s | %s | %s" % (
            fmt_ms(percentile(lat_201, 50)), fmt_ms(percentile(lat_201, 90)), fmt_ms(percentile(lat_201, 99)),
            fmt_ms(lat_201[-1] if lat_201 else None)))
        w("")
        w("## Issuer simulator (`GET /stats` at the end)")
        w("")
        w("`%s`" % json.dumps(stats))
        w("")
        soak_dups = self.issuer_soak.get("duplicateAttempts")
        w("`duplicateAttempts` are issuer calls with an attempt id it had decided before: second executions of one "
          "request (a lapsed or lost lease, a key whose record the store lost) that its ledger answered with the "
          "first decision, the cases where the issuer's deduplication on the attempt id was needed. %s during the "
          "soak; the rest during the replay, which re-executed the keys whose records the last store restart had "
          "lost (replays answered from the store: %d, re-executed: %d)."
          % (soak_dups, sum(1 for a in self.verify_attempts if a["status"] == "201" and a["replayed"]),
             sum(1 for a in self.verify_attempts if a["status"] == "201" and not a["replayed"])))
        w("")
        w("## Service counters")
        w("")
        w("Summed over %d replica lifetimes, each scraped just before it was terminated or killed and at the end "
          "(what a lifetime counted after its last scrape is missing):" % lifetimes)
        w("")
        for metric in COUNTERS:
            w("- `%s`: %s" % (metric, ", ".join("%s %d" % (label, v) for (m, label), v in sorted(sums.items())
                                                 if m == metric and v) or "none"))
        summaries = self.shutdown_summaries()
        w("- shutdown summaries (graceful exits): %d; idempotency keys released in them: %d; requests cut off by "
          "the drain timeout: %d" % (len(summaries),
                                     sum(int(m) for s in summaries for m in re.findall(r"keys released: (\d+)", s)),
                                     sum(int(m) for s in summaries for m in re.findall(r"drain timeout: (\d+)", s))))
        w("")
        w("What the replicas logged with their 5xx answers and lease trouble (all lifetimes, complete):")
        w("")
        for reason, count in sorted(self.logged_failures().items(), key=lambda kv: -kv[1]):
            w("- %s: %d" % (reason, count))
        w("")
        w("## Set-up")
        w("")
        w("- Two replicas of the packaged jar (`-Xmx%s`), `authorizer.type: http` to one issuer "
          "simulator shared by both (latency %s + uniform 0-%s), `idempotency.store: %s` (%s)."
          % (p.get("heap"), p.get("issuer_latency"), p.get("issuer_jitter"), p.get("store"),
             p.get("store_description")))
        w("- Service properties: `%s`" % p.get("service_props", "").strip())
        w("- Clients (`client.py`, Python with aiohttp): every key a distinct payment (its own reference), %s%% "
          "of them submitted twice at once (one on each replica); %s%% "
          "of requests get a timeout of 0.1-0.8 s instead of 3 s; a retry goes to a random replica, after "
          "`Retry-After` (capped at 2 s) for 409/429/5xx, a backoff for connection errors, at once after a "
          "timeout; a key gives up %s s after its first send. Faults: the first %s s in, then every %s-%s ms, "
          "drawn in shuffled rounds of the %d kinds." % (
              p.get("double_pct"), p.get("short_timeout_pct"), p.get("key_deadline_s"), p.get("first_fault_s"),
              *p.get("fault_gap_ms", ["?", "?"]), len(p.get("fault_kinds") or range(5))))
        w("- Machine: %s cores (%s), shared with other engineers' builds and tests; load average %s at the start, "
          "%s at the end. %s. Loopback only: no network, client, store, simulator and JVMs on the same cores."
          % (p.get("cpus"), p.get("cpu_model"), p.get("loadavg_start"), self.end.get("loadavg_end"),
             p.get("jdk")))
        w("")
        w("## Fault timeline")
        w("")
        w("| t (s) | fault | target | detail | requests in progress on the target |")
        w("|---|---|---|---|---|")
        for start, end_, kind, target, detail, end_detail in d["faults"]:
            w("| %.1f | %s | %s | %s | %d |" % ((start - t0) / 1000, kind, target,
                                               end_detail if kind.startswith("store-") else detail,
                                               self.open_attempts_at(start, target)))
        w("")
        w("Raw results (git-ignored): `load-tests/results/%s/`." % os.path.basename(os.path.normpath(self.run)))
        write_report(path, L)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    soak = Soak(sys.argv[1])
    passed = soak.evaluate()
    soak.write(sys.argv[2], passed)
    for name, value, expected, ok in soak.invariants:
        print("%-8s %s: %s (expected %s)" % ("ok" if ok else "BROKEN", name, value, expected), file=sys.stderr)
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
