"""anvil_runs, the Python reader of run databases, on databases made from the one schema file (src/runs/schema_v1.sql,
which anvil embeds). `anvil generate`'s own databases are read by the model-loop tests."""

import json
import sqlite3
from pathlib import Path

import pytest

from anvil_runs import RunFormatError, SUPPORTED_VERSION, open_run

SCHEMA = Path(__file__).resolve().parents[2] / "src" / "runs" / "schema_v1.sql"


def make_run(path, version=1):
    db = sqlite3.connect(path)
    db.executescript(SCHEMA.read_text())
    db.execute(f"PRAGMA user_version = {version}")
    db.execute("INSERT INTO run VALUES (1, 1.0, '0.1.0', 'm', 'http://h/v1', 'kernelbench-one-shot', 1, 'cpu', 2, 3, "
               "?, '{}')", (json.dumps({"temperature": 0.5}),))
    db.execute("INSERT INTO task VALUES (1, '19_ReLU', 1, 19, '/k/level1/19_ReLU.py', 'aa', 'src')")
    db.execute("INSERT INTO task VALUES (2, 'my_op', 0, NULL, '/t/my_op.py', 'bb', 'src')")
    db.execute("INSERT INTO sample VALUES (1, 1, 0)")
    db.execute("INSERT INTO sample VALUES (2, 2, 0)")
    db.execute("INSERT INTO attempt VALUES (1, 1, 1, 'done', 'compile_error', 'code', 'kernelbench', ?, -1.0, 0, 1, 2)",
               (json.dumps({"status": "compile_error"}),))
    db.execute("INSERT INTO attempt VALUES (2, 1, 2, 'done', 'pass', 'code2', 'kernelbench', ?, 1.0, 1, 3, 4)",
               (json.dumps({"status": "pass"}),))
    db.execute("INSERT INTO attempt VALUES (3, 2, 1, 'pending', NULL, NULL, NULL, NULL, NULL, 0, 5, NULL)")
    db.execute("INSERT INTO request VALUES (1, 1, ?, '{\"choices\": []}', 200, 'none', '', 'stop', 10, 20, NULL, 1, "
               "0.5, NULL, '[1, 2]', 1.5)", (json.dumps([{"role": "user", "content": "write"}]),))
    db.execute("INSERT INTO stage_time VALUES (1, 'generate', 0.5)")
    db.commit()
    db.close()


def test_reads_a_run(tmp_path):
    path = tmp_path / "run.db"
    make_run(path)
    with open_run(path) as run:
        assert run.info["model"] == "m" and run.info["turns"] == 3
        assert run.info["sampling"] == {"temperature": 0.5} and run.info["config"] == {}
        assert [t["name"] for t in run.tasks()] == ["19_ReLU", "my_op"]
        attempts = run.attempts()
        assert [(a["task_name"], a["sample"], a["turn"]) for a in attempts] == [
            ("19_ReLU", 0, 1), ("19_ReLU", 0, 2), ("my_op", 0, 1)]
        assert attempts[1]["verdict"] == {"status": "pass"} and attempts[1]["cached"] is True
        assert attempts[2]["problem"] is None and attempts[2]["state"] == "pending"
        assert all(a["prime_echo"] is None for a in attempts)  # Before version 3: no trajectory scores.
        [req] = run.requests(1)
        assert req["messages"][0]["content"] == "write" and req["token_ids"] == [1, 2]
        assert req["choice"] == 0  # Version 1 has no choice column: every request answered one attempt.
        assert run.stage_times(1) == {"generate": 0.5}


def test_reads_version_3s_trajectory_scores(tmp_path):
    path = tmp_path / "run.db"
    make_run(path)
    db = sqlite3.connect(path)
    db.executescript("ALTER TABLE request ADD COLUMN choice INTEGER NOT NULL DEFAULT 0;"
                     "ALTER TABLE sample ADD COLUMN prime_echo REAL; UPDATE sample SET prime_echo = 0.4 WHERE id = 1;"
                     "PRAGMA user_version = 3;")
    db.close()
    with open_run(path) as run:
        assert [a["prime_echo"] for a in run.attempts()] == [0.4, 0.4, None]


def test_it_only_reads(tmp_path):
    path = tmp_path / "run.db"
    make_run(path)
    with open_run(path) as run:
        with pytest.raises(sqlite3.OperationalError):
            run._db.execute("DELETE FROM task")


def test_refuses_what_it_does_not_understand(tmp_path):
    newer = tmp_path / "newer.db"
    make_run(newer, version=SUPPORTED_VERSION + 1)
    with pytest.raises(RunFormatError, match="newer anvil"):
        open_run(newer)
    text = tmp_path / "text.db"
    text.write_text("not a database" * 100)
    with pytest.raises(RunFormatError, match="not a run database"):
        open_run(text)
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()
    with pytest.raises(RunFormatError):
        open_run(empty)
