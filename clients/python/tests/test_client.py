"""The memgate Python client against a live `memgate serve` built from this
repository (see live.py). Each "must not" case sits beside a populated
control. The last check (tearDownModule) fails when an operation of the
server's /openapi.json has no Client method, or one no test called.
"""

from __future__ import annotations

import os
import socket
import time
import unittest
from pathlib import Path
from typing import List, Optional

import memgate
from memgate.client import OPERATIONS

import live

TMP: Path
MAIN: live.Server  # with a fake chat model
LIMITED: live.Server  # --rate 1 --rate-burst 1, no chat model
MODEL: live.FakeModel
_RAN: List[str] = []

REPLY = "Try rice crackers."


def setUpModule() -> None:
    global TMP, MAIN, LIMITED, MODEL
    for proxy in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        os.environ.pop(proxy, None)
    TMP = live.tempdir()
    binary = live.build(TMP)
    MODEL = live.FakeModel(REPLY)
    MAIN = live.Server(binary, TMP, "main", "--llm", "openai:fake-1", "--llm-url", MODEL.url)
    try:
        LIMITED = live.Server(binary, TMP, "limited", "--rate", "1", "--rate-burst", "1")
    except Exception:
        MAIN.stop()
        raise


def tearDownModule() -> None:
    MAIN.stop()
    LIMITED.stop()
    MODEL.stop()
    # The completeness check, only when every test of the module ran.
    loader = unittest.TestLoader()
    names = {f"{cls.__name__}.{n}" for cls in (TestClient,) for n in loader.getTestCaseNames(cls)}
    if names - set(_RAN):
        return
    wanted = set(OPERATIONS.values()) | {"remember_batch", "iter_memories", "iter_audit"}
    missing = sorted(m for m in wanted if not hasattr(memgate.Client, m))
    untested = sorted(wanted - live.CALLED)
    if missing or untested:
        raise AssertionError(f"Client methods missing: {missing}; never called by a test: {untested}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class TestClient(unittest.TestCase):
    admin: live.RecordingClient

    def setUp(self) -> None:
        _RAN.append(f"{type(self).__name__}.{self._testMethodName}")
        self.admin = MAIN.client()

    def key(self, role: str, principal: Optional[str] = None, agent: Optional[str] = None) -> live.RecordingClient:
        created = self.admin.create_key(role, principal=principal, agent=agent, name=f"{role} {principal}")
        return MAIN.client(created["secret"])

    def fact(self, principal: str, content: str, **kw: object) -> memgate.Remembered:
        return self.admin.remember(content, kind="fact", source="user", principal=principal, **kw)  # type: ignore[arg-type]

    # ----- the document ---------------------------------------------------

    def test_every_operation_has_a_method(self) -> None:
        doc = self.admin.openapi()
        ops = {op["operationId"] for item in doc["paths"].values() for op in item.values()
               if isinstance(op, dict) and "operationId" in op}
        self.assertIn("remember", ops)
        self.assertEqual(ops - {"mcp"}, set(OPERATIONS), "operationIds without a Client method, or stale ones")
        for op, method in OPERATIONS.items():
            self.assertTrue(callable(getattr(memgate.Client, method, None)), f"{op}: Client.{method}")
        self.assertEqual(doc["servers"][0]["url"].rstrip("/"), MAIN.url)

    def test_health_ready_metrics(self) -> None:
        self.assertEqual(self.admin.healthz()["status"], "ok")
        ready = self.admin.readyz()
        self.assertEqual(ready["status"], "ok")
        self.assertEqual({c["part"] for c in ready.get("checks") or []}, {"store", "embedder"})
        self.admin.whoami()
        text = self.admin.metrics()
        self.assertIn("# TYPE http_requests_total counter", text)
        self.assertIn('route="/v1/whoami"', text)

    # ----- memories -------------------------------------------------------

    def test_defaults_set_once(self) -> None:
        # mem0-style: principal, kind and source once, then a remember is
        # one argument, and recall, list, get and stats are alice's.
        mg = MAIN.client(principal="valentina", source="user", kind="fact")
        m = mg.remember("Valentina keeps bees on her roof.")
        self.assertEqual((m["principal"], m["kind"], m["source"], m["status"]), ("valentina", "fact", "user", "active"))
        pref = mg.remember("Valentina takes her coffee black.", kind="preference")  # a call's own word wins
        self.assertEqual((pref["kind"], pref["principal"]), ("preference", "valentina"))
        batch = mg.remember_batch([{"content": "Valentina's hives are on the north side."}])
        self.assertEqual((batch[0]["principal"], batch[0]["kind"]), ("valentina", "fact"))
        res = mg.recall(query="What does Valentina keep on her roof?", render=True)
        self.assertIn(m["id"], [r["memory"]["id"] for r in res["results"]])
        self.assertIn("bees", res["context"])
        self.assertEqual(mg.get(m["id"])["content"], "Valentina keeps bees on her roof.")
        self.assertEqual(mg.update(m["id"], version=1, content="Valentina keeps three hives of bees.")["version"], 2)
        self.assertEqual({x["id"] for x in mg.iter_memories()}, {m["id"], pref["id"], batch[0]["id"]})
        self.assertEqual(mg.stats()["total"], 3)
        # The control: another principal named in the call is that one's,
        # and a client without defaults still has to say whose.
        self.fact("wendell", "Wendell keeps bees too.")
        self.assertEqual([x["principal"] for x in mg.iter_memories(principal="wendell")], ["wendell"])
        with self.assertRaises(memgate.InvalidArgument) as missing:
            MAIN.client().remember("Nobody's memory.", kind="fact", source="user")
        self.assertEqual(missing.exception.field, "principal")
        with self.assertRaises(memgate.InvalidArgument) as no_kind:
            MAIN.client(principal="valentina").remember("No kind given.", source="user")
        self.assertEqual(no_kind.exception.field, "kind")
        with self.assertRaises(ValueError):
            memgate.Client(MAIN.url, MAIN.key, principal="")

    def test_remember_get_update_conflict(self) -> None:
        m = self.fact("ursula", "Ursula lives in Lisbon.", metadata={"city": "lisbon"})
        self.assertEqual((m["status"], m["version"], m["deduplicated"]), ("active", 1, False))
        got = self.admin.get(m["id"], principal="ursula")
        self.assertEqual((got["content"], got["metadata"]), ("Ursula lives in Lisbon.", {"city": "lisbon"}))
        up = self.admin.update(m["id"], version=1, principal="ursula", content="Ursula lives in Porto.", clear_metadata=True)
        self.assertEqual((up["content"], up["version"]), ("Ursula lives in Porto.", 2))
        self.assertNotIn("metadata", up)
        with self.assertRaises(memgate.Conflict) as stale:
            self.admin.update(m["id"], version=1, principal="ursula", content="Ursula lives in Faro.")
        self.assertEqual((stale.exception.status, stale.exception.code), (409, "conflict"))
        self.assertEqual(self.admin.get(m["id"], principal="ursula")["content"], "Ursula lives in Porto.")
        with self.assertRaises(memgate.InvalidArgument) as bad:
            self.admin.update(m["id"], version=0, principal="ursula", content="x")
        self.assertEqual((bad.exception.field, bad.exception.status), ("version", 0))

    def test_keyed_upsert(self) -> None:
        first = self.admin.remember("Kim takes her coffee black.", kind="preference", source="user", principal="kim", key="pref:coffee")
        second = self.admin.remember("Kim takes oat milk now.", kind="preference", source="user", principal="kim", key="pref:coffee")
        self.assertEqual((second["key"], second["supersedes"]), ("pref:coffee", first["id"]))
        got = self.admin.get_by_key("pref:coffee", principal="kim")
        self.assertEqual(got["id"], second["id"])
        self.assertEqual(self.admin.get(first["id"], principal="kim")["status"], "superseded")
        up = self.admin.update_by_key("pref:coffee", version=got["version"], principal="kim", reason="she said so")
        self.assertEqual((up["id"], up["reason"], up["version"]), (second["id"], "she said so", got["version"] + 1))
        with self.assertRaises(memgate.Conflict):
            self.admin.update_by_key("pref:coffee", version=got["version"], principal="kim", reason="stale")
        with self.assertRaises(memgate.NotFound):  # another principal's key is missing
            self.key("user", principal="lena").get_by_key("pref:coffee")
        with self.assertRaises(memgate.InvalidArgument) as bad:
            self.admin.get_by_key("has space", principal="kim")
        self.assertEqual(bad.exception.field, "key")
        self.assertEqual(self.admin.delete_by_key("pref:coffee", principal="kim"), second["id"])
        with self.assertRaises(memgate.NotFound):
            self.admin.get_by_key("pref:coffee", principal="kim")

    def test_idempotent_replay(self) -> None:
        first = self.fact("ivan", "Ivan plays the cello.", idempotency_key="ivan-1")
        again = self.fact("ivan", "Ivan plays the cello.", idempotency_key="ivan-1")
        self.assertEqual(again["id"], first["id"])
        self.assertTrue(again.get("replayed"))
        self.assertNotIn("replayed", first)
        self.assertEqual(len(self.admin.list_memories(principal="ivan")["memories"]), 1)
        with self.assertRaises(memgate.Conflict) as other:
            self.fact("ivan", "Ivan plays the oboe.", idempotency_key="ivan-1")
        self.assertEqual(other.exception.field, "Idempotency-Key")
        batch = [{"kind": "fact", "source": "user", "principal": "ivan", "content": f"Ivan fact {i}."} for i in range(3)]
        stored = self.admin.remember_batch(batch, idempotency_key="ivan-batch")  # type: ignore[arg-type]
        self.assertEqual([m["content"] for m in stored], ["Ivan fact 0.", "Ivan fact 1.", "Ivan fact 2."])
        replay = self.admin.remember_batch(batch, idempotency_key="ivan-batch")  # type: ignore[arg-type]
        self.assertEqual([m["id"] for m in replay], [m["id"] for m in stored])
        self.assertTrue(all(m.get("replayed") for m in replay))
        self.assertEqual(self.admin.stats(principal="ivan")["total"], 4)

    def test_pagination(self) -> None:
        ids = [self.fact("paula", f"Paula note number {i}.")["id"] for i in range(7)]
        self.fact("quinn", "Quinn is not Paula.")
        page = self.admin.list_memories(principal="paula", limit=3)
        self.assertEqual(len(page["memories"]), 3)
        self.assertTrue(page.get("next_cursor"))
        seen = [m["id"] for m in self.admin.iter_memories(principal="paula", limit=3)]
        self.assertEqual(seen, list(reversed(ids)))  # newest first, each once, none of quinn's
        last = self.admin.list_memories(principal="paula", limit=3, cursor=None)
        while last.get("next_cursor"):
            last = self.admin.list_memories(principal="paula", limit=3, cursor=last["next_cursor"])
        self.assertEqual(len(last["memories"]), 1)
        self.assertEqual([m["content"] for m in self.admin.list_memories(principal="paula", q="number 4")["memories"]],
                         ["Paula note number 4."])
        self.assertEqual(self.admin.list_memories(principal="paula", kind=["preference"], status="active")["memories"], [])

    def test_foreign_id_is_not_found_like_a_missing_one(self) -> None:
        m = self.fact("alice", "Alice's locker code is in the blue drawer.")
        bob = self.key("agent", principal="bob")
        alice = self.key("agent", principal="alice")
        self.assertEqual(alice.get(m["id"])["id"], m["id"])  # the control: its own principal's
        with self.assertRaises(memgate.NotFound) as foreign:
            bob.get(m["id"])
        with self.assertRaises(memgate.NotFound) as missing:
            bob.get("m_01m8s361gnxexts23b43cxp000")
        for e in (foreign.exception, missing.exception):
            self.assertEqual((e.status, e.code, e.field, e.message), (404, "not_found", None, "memory not found"))
            self.assertTrue(e.request_id)
        with self.assertRaises(memgate.NotFound):
            bob.update(m["id"], version=1, content="stolen")
        self.assertEqual(self.admin.get(m["id"], principal="alice")["version"], 1)

    def test_restricted_hidden_from_agent_key(self) -> None:
        secret = self.admin.remember("Carol's diagnosis is asthma.", kind="fact", source="user",
                                     principal="carol", sensitivity="restricted")
        plain = self.fact("carol", "Carol likes hiking in the Alps.")
        agent = self.key("agent", principal="carol")
        self.assertEqual([m["id"] for m in agent.iter_memories()], [plain["id"]])
        self.assertEqual(agent.get(plain["id"])["id"], plain["id"])
        with self.assertRaises(memgate.NotFound):
            agent.get(secret["id"])
        hits = agent.recall("What is Carol's diagnosis?", min_score=0)
        self.assertNotIn(secret["id"], [h["memory"]["id"] for h in hits["results"]])
        # The controls: the admin sees it, and recalls it when it asks to.
        self.assertEqual(self.admin.get(secret["id"], principal="carol")["sensitivity"], "restricted")
        self.assertEqual({m["id"] for m in self.admin.iter_memories(principal="carol")}, {secret["id"], plain["id"]})
        self.assertEqual([m["id"] for m in self.admin.iter_memories(principal="carol", standard_only=True)], [plain["id"]])
        own = self.admin.recall("What is Carol's diagnosis?", principal="carol", include_restricted=True)
        self.assertEqual(own["results"][0]["memory"]["id"], secret["id"])

    def test_errors_carry_code_field_and_never_the_key(self) -> None:
        cases = [
            (memgate.InvalidArgument, 400, "kind", lambda: self.admin.remember("x", kind="bogus", source="user", principal="e")),
            (memgate.TooLarge, 413, "content", lambda: self.admin.remember("x" * 9000, kind="fact", source="user", principal="e")),
            (memgate.PolicyViolation, 422, "content",
             lambda: self.admin.remember("my key AKIA" + "Z7QX3M4RK3R0PLQ2", kind="fact", source="user", principal="e")),
            (memgate.Forbidden, 403, "source",
             lambda: self.key("user", principal="e").remember("I am the system.", kind="fact", source="system")),
            (memgate.Unauthenticated, 401, None, lambda: MAIN.client("mgk_not-a-key").whoami()),
        ]
        for cls, status, field, call in cases:
            with self.subTest(cls=cls.__name__):
                with self.assertRaises(cls) as caught:
                    call()
                e = caught.exception
                self.assertEqual((e.status, e.field), (status, field))
                self.assertTrue(e.request_id and e.request_id.startswith("req_"))
                for text in (str(e), repr(e), repr(self.admin)):
                    self.assertNotIn(MAIN.key, text)
                    self.assertNotIn("mgk_not-a-key", text)
        self.assertEqual(self.admin.list_memories(principal="e")["memories"], [])  # nothing was stored

    def test_approve_and_reject_pending(self) -> None:
        held = self.admin.remember("Pia is vegetarian.", kind="fact", source="assistant", principal="pia")
        self.assertEqual(held["status"], "pending")
        edited = self.admin.update(held["id"], version=held["version"], principal="pia", reason="checked the wording")
        with self.assertRaises(memgate.Conflict):
            self.admin.approve(held["id"], held["version"], principal="pia")  # reviewed an older version
        self.assertEqual(self.admin.get(held["id"], principal="pia")["status"], "pending")
        ok = self.admin.approve(held["id"], edited["version"], principal="pia")
        self.assertEqual(ok["status"], "active")
        other = self.admin.remember("Pia hates music.", kind="fact", source="assistant", principal="pia")
        gone = self.admin.reject(other["id"], other["version"], "not what she said", principal="pia")
        self.assertEqual((gone["status"], gone.get("status_reason")), ("revoked", "not what she said"))
        self.assertEqual(self.admin.stats(principal="pia")["pending"], 0)

    def test_feedback_revoke_delete(self) -> None:
        m = self.fact("fred", "Fred commutes by bike.")
        self.assertEqual(self.admin.feedback(m["id"], 1.0, principal="fred")["feedback"]["count"], 1)
        revoked = self.admin.revoke(m["id"], reason="moved away", principal="fred")
        self.assertEqual(revoked["status"], "revoked")
        self.assertEqual(self.admin.recall("How does Fred commute?", principal="fred", min_score=0)["results"], [])
        self.assertEqual(self.admin.delete(m["id"], principal="fred"), m["id"])
        with self.assertRaises(memgate.NotFound):
            self.admin.get(m["id"], principal="fred")

    # ----- recall, audit, stats -------------------------------------------

    def test_recall_and_audit(self) -> None:
        tea = self.admin.remember("Rita drinks green tea, no sugar.", kind="preference", source="user", principal="rita")
        got = self.admin.recall("What does Rita like to drink?", principal="rita", render=True, explain=True)
        self.assertEqual(got["results"][0]["memory"]["id"], tea["id"])
        self.assertIn("green tea", got.get("context", ""))
        self.assertEqual(self.admin.recall("How do I file quarterly taxes?", principal="rita")["results"], [])
        events = self.admin.audit(recall_id=got["recall_id"])["events"]
        self.assertEqual([(e["action"], e.get("memory_ids")) for e in events], [("recall", [tea["id"]])])
        every = list(self.admin.iter_audit(principal="rita", limit=1))
        self.assertEqual([e["action"] for e in every], ["recall", "recall", "remember"])
        self.assertEqual(len({e["seq"] for e in every}), 3)
        hist = self.admin.audit_histogram(principal="rita", bucket="1h")
        self.assertEqual(hist["bucket_seconds"], 3600)
        self.assertEqual(sum(b["count"] for b in hist["buckets"]), 2)
        self.assertEqual(sum(b["count"] for b in self.admin.audit_histogram(principal="rita", action="remember")["buckets"]), 1)

    def test_stats(self) -> None:
        self.fact("sam", "Sam is left-handed.")
        self.admin.remember("Sam prefers window seats.", kind="preference", source="user", principal="sam")
        st = self.admin.stats(principal="sam")
        self.assertEqual((st["total"], st["by_kind"], st["pending"]), (2, {"fact": 1, "preference": 1}, 0))
        self.assertEqual(self.admin.stats(principal="nobody-here")["total"], 0)

    def test_export_forget_import(self) -> None:
        contents = ["Olga keeps bees.", "Olga speaks Polish."]
        for c in contents:
            self.fact("olga", c)
        lines = list(self.admin.export_jsonl(principal="olga", raw=True))
        decoded = list(self.admin.export_jsonl(principal="olga"))
        self.assertEqual([d["content"] for d in decoded], contents)  # oldest first
        receipt = self.admin.forget("olga")
        self.assertEqual((receipt["principal"], receipt["forgotten"]), ("olga", 2))
        self.assertTrue(receipt["audit_principal"].startswith("forgotten:"))
        self.assertEqual(self.admin.list_memories(principal="olga")["memories"], [])
        result = self.admin.import_jsonl(lines)
        self.assertEqual((result["lines"], result["imported"]), (2, 2))
        self.assertEqual(sorted(m["content"] for m in self.admin.iter_memories(principal="olga")), sorted(contents))
        self.admin.forget("olga")
        self.assertEqual(self.admin.import_jsonl(decoded)["imported"], 2)  # decoded lines go back too

    # ----- keys and chat ---------------------------------------------------

    def test_keys_and_whoami(self) -> None:
        created = self.admin.create_key("agent", principal="kim", name="kim's bot")
        self.assertTrue(created["secret"].startswith("mgk_"))
        kid = created["key"]["id"]
        listed = {k["id"]: k for k in self.admin.list_keys()}
        self.assertEqual(listed[kid]["principal"], "kim")
        self.assertFalse({"secret", "hash"} & set(listed[kid]))
        bot = MAIN.client(created["secret"])
        me = bot.whoami()
        self.assertEqual((me["key_id"], me["role"], me.get("principal"), me["tenant_wide"]), (kid, "agent", "kim", False))
        self.assertTrue(self.admin.whoami()["tenant_wide"])
        self.assertTrue(self.admin.revoke_key(kid).get("revoked_at"))
        with self.assertRaises(memgate.Unauthenticated):
            bot.whoami()
        with self.assertRaises(memgate.NotFound):
            self.admin.revoke_key("key_0000000000000000")
        with self.assertRaises(memgate.Forbidden):
            self.key("agent", principal="kim").list_keys()

    def test_chat(self) -> None:
        self.fact("dana", "Dana is allergic to peanuts.")
        res = self.admin.chat("I am allergic to peanuts, what snack can I eat?", principal="dana")
        self.assertEqual(res["reply"], REPLY)
        self.assertTrue(res["conversation"].startswith("c_"))
        self.assertEqual([r["source"] for r in res["remembered"]], ["user", "assistant"])
        self.assertEqual(res["recall"]["results"][0]["memory"]["content"], "Dana is allergic to peanuts.")
        self.assertIn("Dana is allergic to peanuts.", str(MODEL.requests[-1]["messages"]))
        with self.assertRaises(memgate.Forbidden):
            self.key("user", principal="dana").chat("hello")
        # A server without a model: 503, not retried (a chat is not safe to repeat).
        c = LIMITED.client(max_retries=3)
        waits = live.sleeps(c)
        with self.assertRaises(memgate.Unavailable) as e:
            c.chat("hello", principal="dana")
        self.assertEqual((e.exception.status, waits), (503, []))

    def test_ingest_messages(self) -> None:
        talk = [{"role": "user", "content": "Nora moved to Oslo last spring."},
                {"role": "assistant", "content": "Noted: Oslo since spring."}]
        res = self.admin.ingest_messages("c_nora1", talk, principal="nora", idempotency_key="nora-1")  # type: ignore[arg-type]
        self.assertEqual((res["conversation"], res["replayed"]), ("c_nora1", False))
        self.assertEqual([(r["source"], r["status"]) for r in res["remembered"]], [("user", "active"), ("assistant", "active")])
        again = self.admin.ingest_messages("c_nora1", talk, principal="nora", idempotency_key="nora-1")  # type: ignore[arg-type]
        self.assertTrue(again["replayed"])
        stored = list(self.admin.iter_memories(principal="nora", conversation="c_nora1"))
        self.assertEqual(sorted(m["content"] for m in stored), sorted(m["content"] for m in talk))  # stored once

    # ----- retries -----------------------------------------------------------

    def test_rate_limited_retry_honours_retry_after(self) -> None:
        time.sleep(1.1)  # a full bucket
        c = LIMITED.client()
        waits: List[float] = []

        def sleep(s: float) -> None:
            waits.append(s)
            time.sleep(s)

        c._sleep = sleep
        c.whoami()
        self.assertEqual(c.whoami()["role"], "admin")  # a 429, a wait, then served
        self.assertEqual(waits, [1.0])
        impatient = LIMITED.client(max_retries=0)
        with self.assertRaises(memgate.RateLimited) as e:
            impatient.whoami()
        self.assertEqual((e.exception.status, e.exception.code, e.exception.retry_after), (429, "rate_limited", 1.0))
        capped = LIMITED.client(max_retry_wait=0.5)
        capped_waits = live.sleeps(capped)
        with self.assertRaises(memgate.RateLimited):
            capped.whoami()
        self.assertEqual(capped_waits, [])  # Retry-After is past the cap: raised at once

    def test_503_retried_only_when_safe(self) -> None:
        unavailable = (503, {"Content-Type": "application/json", "Retry-After": "2"},
                       live.error_json("unavailable", "the database is full"))
        ok = (200, {"Content-Type": "application/json"}, b'{"status":"ok","version":"x"}')
        fake = live.Scripted([unavailable, ok])
        try:
            c = memgate.Client(fake.url, "mgk_fake")
            waits = live.sleeps(c)
            self.assertEqual(c.healthz()["status"], "ok")  # a GET: retried after Retry-After
            self.assertEqual((waits, fake.methods), ([2.0], ["GET", "GET"]))
            fake.script = [unavailable, ok]
            with self.assertRaises(memgate.Unavailable) as e:
                c.remember("x", kind="fact", source="user")  # no idempotency key: not repeated
            self.assertEqual((e.exception.status, fake.methods[2:]), (503, ["POST"]))
        finally:
            fake.stop()

    def test_connection_errors_retried_only_when_safe(self) -> None:
        c = memgate.Client(f"http://127.0.0.1:{free_port()}", "mgk_fake", max_retries=2, timeout=2)
        waits = live.sleeps(c)
        with self.assertRaises(memgate.TransportError) as e:
            c.list_memories()
        self.assertEqual((len(waits), e.exception.status, e.exception.code), (2, 0, "transport"))
        self.assertNotIn("mgk_fake", str(e.exception))
        del waits[:]
        with self.assertRaises(memgate.TransportError):
            c.remember("x", kind="fact", source="user")
        self.assertEqual(waits, [])
        with self.assertRaises(memgate.TransportError):
            c.remember("x", kind="fact", source="user", idempotency_key="k-1")
        self.assertEqual(len(waits), 2)


if __name__ == "__main__":
    unittest.main()
