"""The lifecycle invariants of the fault soak (run.sh --lifecycle): captures and voids of the soak's authorizations,
checked from four views that must agree:

  - the service's answers: every 201 of every capture and void key, in the soak and in the replay (keys.jsonl,
    verify.jsonl), and GET of each capture, void and authorization on every replica after the faults;
  - the system of record: every authorizations row and every authorization_operations row (captures, voids and the
    expiry worker's voids; lifecycle-authorizations.jsonl, lifecycle-operations.jsonl);
  - the issuer simulator's ledger (GET /stats/ledger: issuer-ledger.json): what it approved under each authorization
    attempt id, how much of it was captured, whether it was voided, and its one decision per capture or void attempt
    id, in the order it made them.

report.py calls evaluate() and adds the rows to its invariants table, then section() for its own part of the report.
"""
import json
import re
from collections import Counter, defaultdict

LIFECYCLE_FIELDS = ("state", "capturedAmount", "captures", "updatedAt")


def parse(body):
    try:
        return json.loads(body) if isinstance(body, str) else None
    except ValueError:
        return None


def without_lifecycle(body):
    """An authorization's body without what its lifecycle changes (GET shows the current state, a replay the first)."""
    d = parse(body)
    if d is None:
        return None
    for field in LIFECYCLE_FIELDS + ("createdAt",):
        d.pop(field, None)
    return d


class Lifecycle:
    def __init__(self, soak, read_jsonl, read_json):
        run = soak.run
        self.soak = soak
        self.rows = {r["id"]: r for r in read_jsonl(run + "/lifecycle-authorizations.jsonl")}
        self.operations = {o["id"]: o for o in read_jsonl(run + "/lifecycle-operations.jsonl")}
        self.ledger = read_json(run + "/issuer-ledger.json", {}) or {}
        self.problems = {}

    def check(self, name, items, expected="0"):
        """A row of the invariants table: the number of items, which must be 0."""
        self.problems[name] = items
        self.soak.check(name, len(items), not items, expected)

    # ---- what the client saw ---------------------------------------------------------------------------------------

    def authorizations(self):
        """[(key record, its verify record)] of the authorizations that got a 201."""
        return [(k, self.soak.verify.get(k["key"], {})) for k in self.soak.keys if k.get("authorization_id")]

    @staticmethod
    def answers(op, verified):
        """Every 201 of one capture or void key: soak and replay, oldest first, bodies parsed."""
        created = list(op["created"])
        if verified and verified.get("replay"):
            created.append(verified["replay"])
        return sorted(created, key=lambda c: c["at_ms"])

    def evaluate(self):
        soak = self.soak
        ledger_auth = self.ledger.get("authorizations", {})
        ledger_ops = self.ledger.get("operations", {})
        by_attempt = {o["attempt_id"]: o for o in self.operations.values()}
        ops_by_auth = defaultdict(list)
        for o in self.operations.values():
            ops_by_auth[o["authorization_id"]].append(o)
        ledger_by_auth = defaultdict(list)
        for attempt, o in ledger_ops.items():
            ledger_by_auth[o["authorizationAttemptId"]].append(dict(o, attemptId=attempt))

        two_ids, bodies_differ, shared_ids, replay_bad, get_bad = [], [], [], [], []
        over_answers, over_get, over_rows, over_ledger = [], [], [], []
        after_void, after_expiry, client_after_void, client_after_expiry, ledger_after_void = [], [], [], [], []
        declined_voided, disagree, status_disagree, pending = [], [], [], []
        auth_get_bad = []
        key_of_id = {}
        fresh_per_key = Counter()
        self.stats = stats = Counter()
        self.final_states = Counter()
        self.plans = Counter()
        self.races = Counter()
        self.lags = []

        for k, v in self.authorizations():
            aid = k["authorization_id"]
            amount = k["amount"]
            self.plans[k.get("plan", "?")] += 1
            verified_ops = {o["key"]: o for o in v.get("ops", [])}
            expires_at = (parse(k["created"][0]["body"]) or {}).get("expiresAt")
            sends = [op["first_sent_ms"] for op in k.get("ops", []) if op.get("first_sent_ms")]
            if sends and k.get("plan") != "late":
                self.lags.append(min(sends) - min(c["at_ms"] for c in k["created"]))
            if expires_at:
                stats["capture keys first sent at or after expiresAt (each must be refused)"] += sum(
                    1 for op in k.get("ops", []) if op["kind"] == "capture"
                    and op.get("first_sent_ms", 0) / 1000 >= iso_seconds(expires_at))
            succeeded = {}           # capture id -> amount, from the answers
            void_answered_ms = None  # when the client had a SUCCEEDED void's 201 in hand
            for op in k.get("ops", []):
                stats["%s keys" % op["kind"]] += 1
                stats["%s keys submitted twice at once (both replicas)" % op["kind"]] += 1 if op["double"] else 0
                verified = verified_ops.get(op["key"])
                created = self.answers(op, verified)
                ids = {c["id"] for c in created}
                if len(ids) > 1:
                    two_ids.append((op["key"], sorted(ids)))
                for i in ids:
                    if key_of_id.setdefault(i, op["key"]) != op["key"]:
                        shared_ids.append((i, key_of_id[i], op["key"]))
                if len({c["body"] for c in created}) > 1:
                    bodies_differ.append(op["key"])
                for r in op["rejections"]:
                    reason = re.sub(r"[0-9]+", "N", (parse(r["body"]) or {}).get("detail", "")[:60])
                    stats["%s submissions refused %d: %s" % (op["kind"], r["status"], reason)] += 1
                if op["created"] and verified and (not verified.get("replay")
                                                   or verified["replay"]["id"] not in ids):
                    replay_bad.append(op["key"])
                if not created:
                    if not op["rejections"]:
                        stats["%s keys never answered" % op["kind"]] += 1
                    continue
                body = parse(created[0]["body"]) or {}
                stats["%s keys answered %s%s" % (op["kind"], body.get("status"),
                                   " " + body["declineCode"] if body.get("declineCode") else "")] += 1
                for replica, g in sorted((verified or {}).get("gets", {}).items()):
                    got = parse(g["body"]) if g["status"] == 200 else None
                    if not got or got.get("id") != body.get("id") or got.get("status") != body.get("status"):
                        get_bad.append((op["key"], replica, g["status"]))
                if body.get("status") != "SUCCEEDED":
                    continue
                if op["kind"] == "capture":
                    succeeded[body["id"]] = body["amount"]["value"]
                    sent = op.get("first_sent_ms", 0)
                    if void_answered_ms is not None and sent > void_answered_ms:
                        client_after_void.append(op["key"])
                    expires = parse(k["created"][0]["body"]).get("expiresAt")
                    if k.get("plan") == "late" and expires and sent / 1000 > iso_seconds(expires):
                        client_after_expiry.append(op["key"])
                else:
                    answered = min(c["at_ms"] for c in created)
                    void_answered_ms = answered if void_answered_ms is None else min(void_answered_ms, answered)
            if k.get("plan") == "race":
                caps = sum(1 for op in k["ops"] if op["kind"] == "capture" and op["created"]
                           and (parse(op["created"][0]["body"]) or {}).get("status") == "SUCCEEDED")
                void = next(op for op in k["ops"] if op["kind"] == "void")
                answer = ((parse(void["created"][0]["body"]) or {}).get("status") if void["created"]
                          else "%d" % void["rejections"][0]["status"] if void["rejections"] else "unanswered")
                self.races["%d captures SUCCEEDED, void %s" % (caps, answer)] += 1

            if sum(succeeded.values()) > amount:
                over_answers.append((aid, amount, sum(succeeded.values())))
            # GET after the faults, on every replica: the current state.
            gets = [parse(g["body"]) for g in v.get("gets", {}).values() if g["status"] == 200]
            if not gets or any(g is None for g in gets):
                auth_get_bad.append(aid)
                continue
            current = gets[0]
            if any(g != current for g in gets[1:]):
                auth_get_bad.append(aid)
            self.final_states[current.get("state")] += 1
            got_captured = current.get("capturedAmount", {}).get("value", 0)
            if got_captured > amount:
                over_get.append((aid, amount, got_captured))
            row = self.rows.get(aid)
            ops = sorted(ops_by_auth.get(aid, []), key=lambda o: o["created_at_ms"])
            row_sum = sum(o["amount"] for o in ops if o["kind"] == "capture" and o["status"] == "SUCCEEDED")
            if row is None or row["captured_amount"] > row["amount"] or row_sum > amount:
                over_rows.append((aid, amount, row and row["captured_amount"], row_sum))
            pending.extend(o["id"] for o in ops if o["status"] == "PENDING")
            # Captures that succeeded after a successful void or past the expiry, in the system of record. A void
            # (or the expiry's) reserves and releases the whole remainder: anything captured after it would make the
            # released amount and the captured amount add up to more than the authorization.
            expires_ms = row and row["expires_at_ms"]
            for o in ops:
                if o["kind"] == "capture" and o["status"] == "SUCCEEDED" and expires_ms \
                        and o["created_at_ms"] >= expires_ms:
                    after_expiry.append(o["id"])
                if o["kind"] in ("void", "expiry") and o["status"] == "SUCCEEDED" and row \
                        and o["amount"] + row["captured_amount"] != amount:
                    (after_expiry if o["kind"] == "expiry" else after_void).append(
                        (o["id"], o["amount"], row["captured_amount"], amount))
            # The issuer's view of the same authorization.
            held = ledger_auth.get(row["attempt_id"]) if row else None
            issuer_ops = sorted(ledger_by_auth.get(row["attempt_id"], []) if row else [],
                                key=lambda o: o["sequence"])
            issuer_sum = sum(o["amount"] for o in issuer_ops if o["kind"] == "capture" and o["status"] == "APPROVED")
            if held and (held["captured"] > held["amount"] or issuer_sum > amount):
                over_ledger.append((aid, amount, held["captured"], issuer_sum))
            void_seq = min((o["sequence"] for o in issuer_ops if o["kind"] == "void" and o["status"] == "APPROVED"),
                           default=None)
            for o in issuer_ops:
                if o["kind"] == "capture" and o["status"] == "APPROVED" and void_seq and o["sequence"] > void_seq:
                    ledger_after_void.append(o["attemptId"])
                if o["kind"] == "capture" and o.get("declineCode") == "voided":
                    declined_voided.append(o["attemptId"])
            issuer_captured = held["captured"] if held else 0
            if not (got_captured == (row and row["captured_amount"]) == row_sum == issuer_captured):
                disagree.append((aid, got_captured, row and row["captured_amount"], row_sum, issuer_captured))

        # Each service operation against the issuer's decision on its attempt id; each issuer decision to one key.
        for o in self.operations.values():
            decided = ledger_ops.get(o["attempt_id"])
            if o["status"] == "PENDING":
                continue
            expected = {"SUCCEEDED": "APPROVED", "DECLINED": "DECLINED"}[o["status"]]
            if decided is None or decided["status"] != expected or (o["kind"] == "capture"
                                                                     and decided["amount"] != o["amount"]):
                status_disagree.append((o["id"], o["kind"], o["status"], decided and decided["status"]))
        unknown_to_record = []
        for attempt in ledger_ops:
            o = by_attempt.get(attempt)
            if o is None:
                unknown_to_record.append(attempt)
                continue
            fresh_per_key[key_of_id.get(o["id"], "(%s %s, no key answered with it)" % (o["kind"], o["id"]))] += 1
        more_than_once = [k for k, n in fresh_per_key.items() if n > 1]
        decided_again = self.ledger.get("freshDecisions", 0) - len(ledger_ops)
        self.ledger_summary = dict(fresh=self.ledger.get("freshDecisions"), evictions=self.ledger.get("evictions"),
                                   operations=len(ledger_ops), authorizations=len(ledger_auth),
                                   by_kind=Counter("%s %s%s" % (o["kind"], o["status"], " " + o["declineCode"]
                                                                if o.get("declineCode") else "")
                                                   for o in ledger_ops.values()),
                                   record_kinds=Counter("%s %s" % (o["kind"], o["status"])
                                                        for o in self.operations.values()))

        self.check("over-captures, service's answers: authorizations whose SUCCEEDED captures (distinct ids, soak "
                   "and replay) sum above the authorized amount", over_answers)
        self.check("over-captures, service's GET: authorizations whose capturedAmount is above the authorized "
                   "amount", over_get)
        self.check("over-captures, system of record: rows with captured_amount above amount, or SUCCEEDED capture "
                   "rows summing above it", over_rows)
        self.check("over-captures, issuer's ledger: captured above the approved amount, or APPROVED capture "
                   "decisions summing above it", over_ledger)
        self.check("authorizations whose captured amount differs between GET, the row, its SUCCEEDED captures and "
                   "the issuer's ledger", disagree)
        self.check("captures SUCCEEDED on a voided authorization, system of record (a SUCCEEDED void's released "
                   "remainder + the final captured amount != the authorized amount)", after_void)
        self.check("captures SUCCEEDED on an expired authorization, system of record (reserved at or after "
                   "expiresAt, or the expiry's released remainder + the captured amount != the amount)", after_expiry)
        self.check("captures SUCCEEDED although first sent after the client held the void's SUCCEEDED 201",
                   client_after_void)
        self.check("late captures (first sent after expiresAt) answered SUCCEEDED", client_after_expiry)
        self.check("issuer: captures APPROVED after it approved the authorization's void", ledger_after_void)
        self.check("issuer: captures it declined `voided` (the service sent a capture after a void)", declined_voided)
        self.check("capture and void keys with more than one id (all 201s: soak and replay)", two_ids)
        self.check("capture and void ids answered to two different keys", shared_ids)
        self.check("capture and void keys whose 201 bodies differ", bodies_differ)
        self.check("capture and void keys whose replay (after the faults) did not answer 201 with the same id",
                   replay_bad)
        self.check("final GETs of each capture and void id (on every replica) not answering that id and status",
                   get_bad)
        self.check("final GETs of each authorization: not 200, or the replicas disagree", auth_get_bad)
        self.check("issuer: capture and void keys it made more than one fresh decision for", more_than_once)
        self.check("issuer: decisions on attempt ids the system of record has no operation for", unknown_to_record)
        self.soak.check("issuer: attempt ids decided again after being forgotten (fresh decisions - operations "
                        "remembered) and ledger evictions",
                        "%s, %s" % (decided_again, self.ledger.get("evictions")),
                        decided_again == 0 and self.ledger.get("evictions") == 0, "0, 0")
        self.check("operations whose settled status differs from the issuer's decision on their attempt id "
                   "(capture amounts included)", status_disagree)
        self.pending = pending
        verified_ms = max((e["epoch_ms"] for e in soak.events if e["event"] == "verified"), default=None)
        self.unexpired = sum(1 for r in self.rows.values() if r["state"] == "APPROVED" and verified_ms
                             and r["expires_at_ms"] < verified_ms)
        return self

    # ---- the report ------------------------------------------------------------------------------------------------

    def section(self, w):
        w("## Lifecycle")
        w("")
        w("Every approved authorization got a plan (client.py `PLANS`); a declined one half the time a capture that "
          "must be refused. Plans: %s." % ", ".join("%s %d" % kv for kv in sorted(self.plans.items())))
        w("")
        w("| | |")
        w("|---|---|")
        for name, value in sorted(self.stats.items()):
            if value:
                w("| %s | %d |" % (name.replace("|", "/"), value))
        lags = sorted(self.lags)
        if lags:
            w("| from an authorization's first 201 to its first capture or void sent (ms; late plans left out) | p50 %.0f, p90 %.0f, "
              "max %.0f |" % (lags[len(lags) // 2], lags[int(0.9 * (len(lags) - 1))], lags[-1]))
        w("| races (3-5 captures of 30-50 %% each and a void, at once, skewed 0-0.3 s): outcomes | %s |"
          % ", ".join("%s: %d" % kv for kv in sorted(self.races.items())))
        w("| authorizations' state at the end (GET) | %s |"
          % ", ".join("%s %d" % kv for kv in sorted(self.final_states.items())))
        w("| system of record: operations by kind and status | %s |"
          % ", ".join("%s %d" % kv for kv in sorted(self.ledger_summary["record_kinds"].items())))
        w("| system of record: operations still PENDING (outcome unknown, not yet retried) | %d |"
          % len(self.pending))
        w("| authorizations still APPROVED in the system of record although past expiresAt when the verification "
          "ended (the expiry worker's backlog; a capture of them is refused all the same) | %d |" % self.unexpired)
        s = self.ledger_summary
        w("| issuer ledger: fresh decisions, operations remembered, evictions | %s, %s, %s |"
          % (s["fresh"], s["operations"], s["evictions"]))
        w("| issuer ledger: decisions by kind | %s |" % ", ".join("%s %d" % kv for kv in sorted(s["by_kind"].items())))
        w("")
        for name, items in self.problems.items():
            if items:
                w("%s (first 20): `%s`" % (name, json.dumps(items[:20])))
                w("")


def iso_seconds(text):
    from datetime import datetime
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
