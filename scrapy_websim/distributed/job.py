"""One distributed job in Redis: its inputs, its scrapy-redis request queue, leases and records.

Keys (``websim:{job}:`` prefix):

``meta``     hash: ``total`` (input entries), ``fetchable`` (entries with a URL), ``bad``, ``pushed`` (1 once
             the whole list is in), ``created_at``, ``first_record_at``, ``last_record_at``
``inputs``   hash: id -> ``[raw, url, error]`` (the parsed URL list, ids = input positions from 1)
``queue``    list: scrapy-redis ``FifoQueue`` of encoded requests (``SCHEDULER_QUEUE_KEY``)
``leases``   sorted set: encoded request -> deadline (Redis server time, seconds)
``records``  hash: id -> zlib-compressed ``PageRecord.to_json()`` (features only, never HTML or images)
``recorded`` bitmap: bit id set once its record is written (what ``collect`` checks)
``progress`` hash: minute (server time // 60) -> records written in that minute
``workers``  hash: worker id -> JSON ``{host, pid, started, last_seen, done}``

Invariant that makes "nothing lost" hold: every fetchable id without a record is in ``queue`` or in
``leases``. Each step that moves a request keeps it, in one atomic Lua script: a pop moves it from
``queue`` to ``leases``; a record write stores the record and drops its leases; an expired lease
goes back to ``queue``. A killed worker's leases stop being renewed and expire; any worker or
``collect`` puts them back. Redis persistence that keeps a prefix of the writes (AOF) keeps the
invariant; should state still be missing (RDB snapshot, ``FLUSHALL``), :meth:`Job.requeue_missing`
re-queues every unrecorded id once the queue and the leases are empty.

Records are keyed by id, so a page rendered twice (a worker that stalled past its lease) is still
one record. Deadlines use Redis's clock (``TIME``), never the workers', so clock skew between
machines does not matter. No Scrapy import here.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
import zlib
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from scrapy_websim.core.types import PageRecord
from scrapy_websim.core.urls.url_list import Entry

PREFIX = "websim"
BATCH = 1000
#: zlib level of stored records (docs/distributed.md has what a record takes in Redis).
ZLIB_LEVEL = 6


class JobError(ValueError):
    """A user mistake about a job: no Redis there, no such job, a job that exists already."""


_LEASE_POP = """
local v = redis.call('RPOP', KEYS[1])
if v then
  local t = redis.call('TIME')
  redis.call('ZADD', KEYS[2], tonumber(t[1]) + tonumber(t[2]) / 1e6 + tonumber(ARGV[1]), v)
end
return v
"""

_RECORD = """
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SETBIT', KEYS[5], tonumber(ARGV[1]), 1)
for i = 3, #ARGV do redis.call('ZREM', KEYS[2], ARGV[i]) end
local t = tonumber(redis.call('TIME')[1])
redis.call('HSETNX', KEYS[3], 'first_record_at', t)
redis.call('HSET', KEYS[3], 'last_record_at', t)
redis.call('HINCRBY', KEYS[4], math.floor(t / 60), 1)
return 1
"""

_RENEW = """
local t = redis.call('TIME')
local deadline = tonumber(t[1]) + tonumber(t[2]) / 1e6 + tonumber(ARGV[1])
local n = 0
for i = 2, #ARGV do n = n + redis.call('ZADD', KEYS[1], 'XX', 'CH', deadline, ARGV[i]) end
return n
"""

_RECLAIM = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
for _, m in ipairs(expired) do
  redis.call('ZREM', KEYS[1], m)
  redis.call('RPUSH', KEYS[2], m)
end
return #expired
"""

_RELEASE = """
for i = 1, #ARGV do redis.call('ZREM', KEYS[1], ARGV[i]) end
return 1
"""


def connect(url: str) -> Any:
    """A Redis client for ``url`` (``redis://host:6379/0``), checked with PING: a clear error otherwise."""
    try:
        import redis  # noqa: PLC0415  # optional extra: scrapy-websim[redis]
    except ImportError:
        raise JobError("distributed mode needs scrapy-redis and redis: pip install 'scrapy-websim[redis]'") from None
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise JobError(f"--redis {url!r}: expected a URL like redis://HOST:6379/0")
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=10, socket_timeout=60, retry_on_timeout=True)
        client.ping()
    except (redis.RedisError, ValueError) as exc:
        raise JobError(f"cannot reach Redis at {url}: {exc}") from None
    return client


def check_job_name(name: str) -> str:
    if not name or len(name) > 200 or any(c.isspace() or c in "{}*?[]" for c in name):
        raise JobError(f"--job {name!r}: a job name is 1-200 characters without spaces or any of {{}}*?[]")
    return name


def compress_record(record: PageRecord) -> bytes:
    record.clean()  # as the feature store does: what a worker sends, the collector can write
    text = json.dumps(record.to_json(), ensure_ascii=False, separators=(",", ":"))
    return zlib.compress(text.encode("utf-8"), ZLIB_LEVEL)


def decompress_record(blob: bytes) -> PageRecord:
    return PageRecord.from_json(json.loads(zlib.decompress(blob)))


class Job:
    """The Redis keys of one job and the atomic steps on them (see the module docstring)."""

    def __init__(self, client: Any, name: str) -> None:
        self.client = client
        self.name = check_job_name(name)
        base = f"{PREFIX}:{name}:"
        self.meta_key, self.inputs_key, self.queue_key = base + "meta", base + "inputs", base + "queue"
        self.leases_key, self.records_key = base + "leases", base + "records"
        self.progress_key, self.workers_key = base + "progress", base + "workers"
        self.dupefilter_key, self.recorded_key = base + "dupefilter", base + "recorded"
        self._lease_pop = client.register_script(_LEASE_POP)
        self._record = client.register_script(_RECORD)
        self._renew = client.register_script(_RENEW)
        self._reclaim = client.register_script(_RECLAIM)
        self._release = client.register_script(_RELEASE)

    @classmethod
    def from_queue_key(cls, client: Any, queue_key: str) -> "Job":
        if not (queue_key.startswith(PREFIX + ":") and queue_key.endswith(":queue")):
            raise JobError(f"SCHEDULER_QUEUE_KEY {queue_key!r} is not a websim job queue (websim:NAME:queue)")
        return cls(client, queue_key[len(PREFIX) + 1:-len(":queue")])

    def keys(self) -> Tuple[str, ...]:
        return (self.meta_key, self.inputs_key, self.queue_key, self.leases_key, self.records_key,
                self.progress_key, self.workers_key, self.dupefilter_key, self.recorded_key)

    # ------------------------------------------------------------------ push
    def exists(self) -> bool:
        return bool(self.client.exists(self.meta_key, self.inputs_key, self.queue_key, self.records_key))

    def delete(self) -> None:
        self.client.delete(*self.keys())

    def push(self, entries: Sequence[Any], encode: Callable[[Any], bytes]) -> Dict[str, int]:
        """Store the parsed list (``core.urls.url_list.Entry``) and queue its URLs, in input order.

        The queue is a scrapy-redis FifoQueue (LPUSH, popped from the right), so the first entry is
        popped first. ``meta.pushed`` is set last: a half-pushed job is never taken for a whole one.
        """
        bad = 0
        for start in range(0, len(entries), BATCH):
            pipe = self.client.pipeline(transaction=True)
            for entry in entries[start:start + BATCH]:
                pipe.hset(self.inputs_key, str(entry.id), json.dumps([entry.raw, entry.url, entry.error]))
                if entry.error:
                    bad += 1
                else:
                    pipe.lpush(self.queue_key, encode(entry))
            pipe.execute()
        counts = {"total": len(entries), "fetchable": len(entries) - bad, "bad": bad}
        self.client.hset(self.meta_key, mapping={**counts, "created_at": self.server_time(), "pushed": 1})
        return counts

    def meta(self) -> Dict[str, float]:
        raw = self.client.hgetall(self.meta_key)
        return {k.decode(): float(v) for k, v in raw.items()}

    def require_pushed(self) -> Dict[str, float]:
        meta = self.meta()
        if not meta.get("pushed"):
            raise JobError(f"no job {self.name!r} in this Redis (run 'websim push -l URLS --redis ... --job "
                           f"{self.name}' first)")
        return meta

    def server_time(self) -> float:
        sec, usec = self.client.time()
        return sec + usec / 1e6

    # ------------------------------------------------------------------ worker steps
    def lease_pop(self, lease_seconds: float) -> Optional[bytes]:
        return self._lease_pop(keys=[self.queue_key, self.leases_key], args=[lease_seconds])

    def release(self, members: Iterable[bytes]) -> None:
        members = list(members)
        if members:
            self._release(keys=[self.leases_key], args=members)

    def renew(self, members: Iterable[bytes], lease_seconds: float) -> int:
        members = list(members)
        return int(self._renew(keys=[self.leases_key], args=[lease_seconds, *members])) if members else 0

    def reclaim_expired(self, limit: int = 10000) -> int:
        """Expired leases (their worker died or stalled) back to the queue; returns how many."""
        return int(self._reclaim(keys=[self.leases_key, self.queue_key], args=[limit]))

    def is_recorded(self, page_id: int) -> bool:
        return bool(self.client.hexists(self.records_key, str(page_id)))

    def record(self, record: PageRecord, leases: Iterable[bytes] = ()) -> None:
        """Store one page's record and drop the leases of its requests, atomically."""
        self._record(keys=[self.records_key, self.leases_key, self.meta_key, self.progress_key, self.recorded_key],
                     args=[str(record.id), compress_record(record), *leases])

    def heartbeat(self, worker_id: str, info: Dict[str, Any]) -> None:
        info = dict(info, last_seen=self.server_time())
        self.client.hset(self.workers_key, worker_id, json.dumps(info))

    # ------------------------------------------------------------------ accounting
    def counts(self) -> Dict[str, int]:
        pipe = self.client.pipeline(transaction=False)
        pipe.hlen(self.records_key).llen(self.queue_key).zcard(self.leases_key)
        recorded, queued, leased = pipe.execute()
        meta = self.meta()
        fetchable = int(meta.get("fetchable", 0))
        return {"total": int(meta.get("total", 0)), "bad": int(meta.get("bad", 0)), "fetchable": fetchable,
                "recorded": int(recorded), "unrecorded": max(0, fetchable - int(recorded)),
                "queued": int(queued), "leased": int(leased)}

    def iter_inputs(self) -> Iterator[Tuple[int, str, str, str]]:
        """``(id, raw, url, error)`` of every input entry (in Redis's order, not input order)."""
        for key, value in self.client.hscan_iter(self.inputs_key, count=BATCH):
            raw, url, error = json.loads(value)
            yield int(key), raw, url, error

    def iter_records(self) -> Iterator[PageRecord]:
        for _key, blob in self.client.hscan_iter(self.records_key, count=BATCH):
            yield decompress_record(blob)

    def unrecorded_ids(self) -> List[int]:
        """Fetchable ids with no record, ascending (from the ``recorded`` bitmap: one bit per id)."""
        bitmap = self.client.get(self.recorded_key) or b""
        missing = []
        for page_id, _raw, url, _error in self.iter_inputs():
            byte = page_id >> 3
            if url and not (byte < len(bitmap) and bitmap[byte] & (0x80 >> (page_id & 7))):
                missing.append(page_id)
        return sorted(missing)

    def requeue_missing(self, encode: Callable[[Any], bytes]) -> int:
        """With an empty queue and no lease, re-queue every unrecorded id (state lost by Redis)."""
        if self.client.llen(self.queue_key) or self.client.zcard(self.leases_key):
            return 0
        missing = set(self.unrecorded_ids())
        if not missing:
            return 0
        pipe = self.client.pipeline(transaction=True)
        for page_id, raw, url, error in sorted(i for i in self.iter_inputs() if i[0] in missing):
            pipe.lpush(self.queue_key, encode(Entry(id=page_id, raw=raw, url=url, error=error)))
        pipe.execute()
        return len(missing)

    def live_workers(self, now: float) -> List[Dict[str, Any]]:
        """Workers whose last heartbeat is less than three of their heartbeat intervals old."""
        workers = []
        for wid, value in self.client.hgetall(self.workers_key).items():
            info = json.loads(value)
            if now - float(info.get("last_seen", 0)) <= 3 * float(info.get("every", 30)) + 5:
                workers.append(dict(info, id=wid.decode()))
        return workers

    def rate(self, now: float, window: float = 300.0) -> float:
        """Records per second over the last ``window`` seconds, across all workers."""
        meta = self.meta()
        first = meta.get("first_record_at")
        if first is None:
            return 0.0
        since = max(first, now - window)
        count = 0.0
        for minute, n in self.client.hgetall(self.progress_key).items():
            start = int(minute) * 60
            if start + 60 <= since:
                continue
            share = 1.0 if start >= since else (start + 60 - since) / 60.0
            count += int(n) * share
        span = max(1.0, now - since)
        return count / span


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def format_eta(seconds: float) -> str:
    if seconds != seconds or seconds == float("inf"):
        return "-"
    seconds = int(seconds)
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m{seconds % 60:02d}s"


def status_line(job: Job) -> Dict[str, Any]:
    """done/total, rate, ETA and workers of a job, for ``websim status``."""
    job.require_pushed()
    counts = job.counts()
    now = job.server_time()
    rate = job.rate(now)
    done = counts["recorded"] + counts["bad"]
    left = counts["unrecorded"]
    eta = 0.0 if not left else (left / rate if rate > 0 else float("inf"))
    workers = job.live_workers(now)
    return dict(counts, done=done, rate=rate, eta=format_eta(eta), workers=len(workers),
                worker_ids=[w["id"] for w in workers], at=time.strftime("%H:%M:%S"))


def scheduler_settings(redis_url: str, job_name: str) -> Dict[str, Any]:
    """The Scrapy settings that make a crawl a worker of ``job_name`` (the add-on sets them)."""
    base = f"{PREFIX}:{check_job_name(job_name)}:"
    return {
        "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
        "SCHEDULER_QUEUE_CLASS": "scrapy_websim.distributed.queue.LeaseQueue",
        "SCHEDULER_QUEUE_KEY": base + "queue",
        "SCHEDULER_DUPEFILTER_KEY": base + "dupefilter",
        "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
        "SCHEDULER_PERSIST": True,  # a worker that closes must not clear the shared queue
        "REDIS_URL": redis_url,
    }
