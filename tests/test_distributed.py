"""Distributed mode against a real redis-server (no browser): push, leases, reclaim, restart, collect, status."""

from __future__ import annotations

import json
import time

import pytest

from scrapy_websim.commands import collect as collect_command
from scrapy_websim.commands import push as push_command
from scrapy_websim.commands import status as status_command
from scrapy_websim.config import WebsimConfig
from scrapy_websim.core.types import PageRecord
from scrapy_websim.distributed.collect import NOT_RECORDED
from scrapy_websim.distributed.job import Job, JobError, connect, scheduler_settings
from scrapy_websim.distributed.queue import LeaseQueue, entry_encoder
from scrapy_websim.distributed.spider import WebsimWorkerSpider
from scrapy_websim.testing.redis_server import RedisServer

LIST = ["http://127.0.0.1:9/a", "not a url", "http://127.0.0.1:9/b", "ftp://127.0.0.1/c", "http://127.0.0.1:9/d"]


@pytest.fixture()
def redis_server(tmp_path):
    server = RedisServer(str(tmp_path / "redis")).start()
    yield server
    server.stop()


@pytest.fixture()
def pushed(redis_server, tmp_path):
    listing = tmp_path / "urls.txt"
    listing.write_text("# list\n" + "\n".join(LIST) + "\n", encoding="utf-8")
    assert push_command.main(["-l", str(listing), "--redis", redis_server.url, "--job", "j1"]) == 0
    return Job(connect(redis_server.url), "j1"), listing


class _FakeConfigSpider(WebsimWorkerSpider):
    """The worker spider with default settings and no crawler (its config comes from the extension)."""

    config = WebsimConfig()


def _queue(job: Job, lease: float = 60.0) -> LeaseQueue:
    spider = WebsimWorkerSpider()
    spider.lease_seconds = lease
    spider.prepare_request = lambda request: request  # no rendering meta needed here
    return LeaseQueue(job.client, spider, job.queue_key)


def test_push_stores_the_parsed_list_and_queues_urls_in_input_order(pushed):
    job, _ = pushed
    assert job.counts() == {"total": 5, "bad": 2, "fetchable": 3, "recorded": 0, "unrecorded": 3, "queued": 3,
                            "leased": 0}
    inputs = sorted(job.iter_inputs())
    assert [(i, raw) for i, raw, _u, _e in inputs] == list(enumerate(LIST, start=1))
    assert inputs[1][3].startswith("not a URL") and "unsupported scheme" in inputs[3][3]
    queue = _queue(job)
    popped = [queue.pop() for _ in range(4)]
    assert [(r.meta["websim_id"], r.url) for r in popped[:3]] == [(1, LIST[0]), (3, LIST[2]), (5, LIST[4])]
    assert popped[3] is None
    rendered = WebsimWorkerSpider.prepare_request(_FakeConfigSpider(), popped[0])
    assert rendered.meta["playwright"] and rendered.meta["websim_id"] == 1 and rendered.meta["websim_url"] == LIST[0]
    assert rendered.callback.__name__ == "parse_page" and rendered.errback.__name__ == "on_error"
    assert job.counts()["leased"] == 3 and job.counts()["queued"] == 0


def test_push_refuses_an_existing_job_unless_replaced(pushed, redis_server, capsys):
    job, listing = pushed
    assert push_command.main(["-l", str(listing), "--redis", redis_server.url, "--job", "j1"]) == 2
    assert "exists already" in capsys.readouterr().err
    assert push_command.main(["-l", "http://x.example/", "--redis", redis_server.url, "--job", "j1", "--replace"]) == 0
    assert job.counts()["total"] == 1


def test_user_mistakes_get_clear_errors(redis_server, capsys, tmp_path):
    assert status_command.main(["--redis", redis_server.url, "--job", "nope"]) == 2
    assert "no job 'nope'" in capsys.readouterr().err
    assert push_command.main(["-l", "http://x.example/", "--redis", "redis://127.0.0.1:1/0", "--job", "j"]) == 2
    assert "cannot reach Redis at redis://127.0.0.1:1/0" in capsys.readouterr().err
    assert push_command.main(["-l", "http://x.example/", "--redis", "localhost:6379", "--job", "j"]) == 2
    assert "expected a URL like redis://HOST:6379/0" in capsys.readouterr().err
    with pytest.raises(JobError, match="without spaces"):
        scheduler_settings(redis_server.url, "a b")
    out = tmp_path / "r.json"
    assert collect_command.main(["--redis", redis_server.url, "--job", "nope", "-o", str(out)]) == 2
    assert not out.exists()


def test_a_record_drops_the_lease_and_an_expired_lease_goes_back(pushed):
    job, _ = pushed
    holder = _queue(job, lease=1)  # a worker that will "die": it never renews
    first = holder.pop()
    assert job.counts()["leased"] == 1
    survivor = _queue(job, lease=60)
    second = survivor.pop()
    job.record(PageRecord(id=second.meta["websim_id"], url=second.url), survivor.take_leases(second.meta["websim_id"]))
    assert job.counts()["leased"] == 1 and job.counts()["recorded"] == 1
    assert job.reclaim_expired() == 0
    time.sleep(1.2)
    assert job.reclaim_expired() == 1
    again = survivor.pop()  # the dead worker's URL is next in line
    assert again.meta["websim_id"] == first.meta["websim_id"]
    assert survivor.renew() == 1  # a live worker keeps its lease
    assert job.unrecorded_ids() == [1, 5]


def test_a_page_recorded_twice_is_one_record_and_is_not_popped_again(pushed):
    job, _ = pushed
    q = _queue(job)
    request = q.pop()
    page_id = request.meta["websim_id"]
    job.record(PageRecord(id=page_id, url=request.url, title="one"), [])
    job.record(PageRecord(id=page_id, url=request.url, title="two"), q.take_leases(page_id))
    assert job.counts()["recorded"] == 1
    assert [r.title for r in job.iter_records()] == ["two"]
    q.push(q._encode_request(request) and request)  # a copy back in the queue (e.g. a reclaimed lease)
    popped = [q.pop() for _ in range(3)]
    assert [r.meta["websim_id"] for r in popped if r] == [3, 5]  # the recorded one is skipped


def test_job_survives_a_redis_restart_and_lost_state_is_requeued(pushed, redis_server):
    job, _ = pushed
    q = _queue(job)
    request = q.pop()
    job.record(PageRecord(id=request.meta["websim_id"], url=request.url), q.take_leases(request.meta["websim_id"]))
    q.pop()  # one leased
    before = job.counts()
    time.sleep(1.5)  # appendfsync everysec: what is a second old is on disk even after SIGKILL
    redis_server.restart(kill=True)
    job = Job(connect(redis_server.url), "j1")
    assert job.counts() == before
    # state lost beyond what AOF keeps (FLUSH of queue and leases): unrecorded ids are queued again
    job.client.delete(job.queue_key, job.leases_key)
    assert job.requeue_missing(entry_encoder(job)) == 2
    assert sorted(r.meta["websim_id"] for r in [_queue(job).pop(), _queue(job).pop()]) == [3, 5]


def test_collect_refuses_while_urls_are_unrecorded_then_partial_marks_them(pushed, redis_server, tmp_path, capsys):
    job, _ = pushed
    q = _queue(job)
    request = q.pop()
    job.record(PageRecord(id=1, url=request.url, status_code=200, title="A", error=""), q.take_leases(1))
    out = tmp_path / "result.json"
    assert collect_command.main(["--redis", redis_server.url, "--job", "j1", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "2 of 3 URLs of job 'j1' have no record yet" in err and "--partial" in err and "Nothing written" in err
    assert not out.exists() and not list(tmp_path.glob("result.json*"))
    csv_out = tmp_path / "result.csv"
    assert collect_command.main(["--redis", redis_server.url, "--job", "j1", "-o", str(out), "-o", str(csv_out),
                         "--partial"]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    rows = data["urls"]
    assert [r["id"] for r in rows] == [1, 2, 3, 4, 5] and [r["url"] for r in rows] == LIST
    assert rows[0]["title"] == "A" and rows[0]["error"] == ""
    assert rows[1]["error"].startswith("not a URL") and "unsupported scheme" in rows[3]["error"]
    assert rows[2]["error"] == NOT_RECORDED and rows[4]["error"] == NOT_RECORDED
    assert data["meta"]["total_urls"] == 5
    assert csv_out.read_text(encoding="utf-8").count("\n") == 6


def test_status_shows_done_total_rate_and_eta(pushed, redis_server, capsys):
    job, _ = pushed
    q = _queue(job)
    for _ in range(2):
        r = q.pop()
        job.record(PageRecord(id=r.meta["websim_id"], url=r.url), q.take_leases(r.meta["websim_id"]))
    job.heartbeat("w1", {"host": "h", "pid": 1})
    assert status_command.main(["--redis", redis_server.url, "--job", "j1"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("job j1: 4/5 done (80.0%), 2 not URLs, 1 queued, 0 leased, 1 workers, ")
    rate = float(line.split(" workers, ")[1].split(" pages/s")[0])
    assert rate > 0 and "ETA 0h" in line


def test_addon_wires_scrapy_redis_only_with_a_redis_url():
    from scrapy.settings import Settings

    from scrapy_websim.config import WebsimConfig
    from scrapy_websim.config_values import ConfigError
    from scrapy_websim.crawler.addon import Addon

    plain = Settings()
    Addon().update_settings(plain)
    # Scrapy's scheduler, its disk writes may fail
    assert plain.get("SCHEDULER") == "scrapy_websim.crawler.scheduler.WebsimScheduler"
    settings = Settings({"WEBSIM_REDIS_URL": "redis://10.0.0.1:6379/0", "WEBSIM_REDIS_JOB": "big",
                         "SCHEDULER_PERSIST": False})
    Addon().update_settings(settings)
    assert settings.get("SCHEDULER") == "scrapy_redis.scheduler.Scheduler"
    assert settings.get("SCHEDULER_QUEUE_CLASS") == "scrapy_websim.distributed.queue.LeaseQueue"
    assert settings.get("SCHEDULER_QUEUE_KEY") == "websim:big:queue"
    assert settings.get("REDIS_URL") == "redis://10.0.0.1:6379/0"
    assert settings.getbool("SCHEDULER_PERSIST") is False  # the user's value wins (at their own risk)
    with pytest.raises(ConfigError, match="WEBSIM_REDIS_LEASE_TIMEOUT \\(10 s\\) must be >= WEBSIM_PAGE_TIMEOUT"):
        WebsimConfig.from_settings({"WEBSIM_REDIS_LEASE_TIMEOUT": 10})
    assert WebsimConfig.from_settings({}).redis_lease_timeout == 120.0
    assert WebsimConfig.from_settings({"WEBSIM_PAGE_TIMEOUT": 300}).redis_lease_timeout == 300.0
