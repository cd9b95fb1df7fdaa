"""Reading anvil's run databases (docs/run-db.md) from Python: the standard library's sqlite3 only.

    from anvil_runs import open_run
    with open_run("RUN.db") as run:
        run.info                 # the run's settings (dict; sampling and config parsed)
        run.tasks()              # [{"id", "name", "level", "problem", "path", "sha256", "source"}]
        run.attempts()           # one dict per attempt, with its task's identity; verdict parsed
        run.requests(attempt_id) # the model requests of one attempt, oldest first; `response` is the raw answer
                                 # (with n > 1, every choice: `choice` is this attempt's)
        run.stage_times(attempt_id)

This is the one Python reader of the format (the C++ one is src/runs/): report, synthesis and RFT code reads runs
through it, never with SQL of its own. It only reads: the file is opened read-only."""

import json
import sqlite3

SUPPORTED_VERSION = 3  # 2 adds request.choice (a version-1 file reads as choice 0 everywhere); 3 adds
                       # sample.prime_echo (None in older files).

__all__ = ["open_run", "Run", "RunFormatError", "SUPPORTED_VERSION"]


class RunFormatError(Exception):
    """The file is not a run database this reader understands."""


def _json(text):
    return None if text is None else json.loads(text)


class Run:
    def __init__(self, path):
        self.path = str(path)
        try:
            self._db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
            self._db.row_factory = sqlite3.Row
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as e:
            raise RunFormatError(f"{self.path} is not a run database ({e})") from None
        if version == 0:
            raise RunFormatError(f"{self.path} is not a run database (no schema version)")
        if version > SUPPORTED_VERSION:
            raise RunFormatError(f"{self.path} was written by a newer anvil (run database version {version}; "
                                 f"this reader reads up to {SUPPORTED_VERSION})")
        self.version = version
        row = self._db.execute("SELECT * FROM run WHERE id = 1").fetchone()
        if row is None:
            raise RunFormatError(f"{self.path} holds no run yet")
        self.info = dict(row)
        self.info["sampling"] = _json(self.info.pop("sampling_json"))
        self.info["config"] = _json(self.info.pop("config_json"))

    def close(self):
        self._db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def tasks(self):
        return [dict(r) for r in self._db.execute("SELECT * FROM task ORDER BY id")]

    def attempts(self):
        """Every attempt by task, sample and turn: the attempt's columns, `verdict` parsed, `sample` (its index), its
        sample's `prime_echo` (the trajectory's score so far, when the run records them) and its task's `task_id`,
        `task_name`, `level`, `problem`, `sha256`."""
        prime_echo = "s.prime_echo" if self.version >= 3 else "NULL"
        rows = self._db.execute(
            f"SELECT a.*, s.idx AS sample, {prime_echo} AS prime_echo, s.task_id, t.name AS task_name, t.level, "
            "t.problem, t.sha256 "
            "FROM attempt a JOIN sample s ON s.id = a.sample_id JOIN task t ON t.id = s.task_id "
            "ORDER BY s.task_id, s.idx, a.turn")
        out = []
        for r in rows:
            a = dict(r)
            a["verdict"] = _json(a.pop("verdict_json"))
            a["cached"] = bool(a["cached"])
            out.append(a)
        return out

    def requests(self, attempt_id):
        rows = self._db.execute("SELECT * FROM request WHERE attempt_id = ? ORDER BY id", (attempt_id,))
        out = []
        for r in rows:
            q = dict(r)
            q["messages"] = _json(q.pop("messages_json"))
            q["logprobs"] = _json(q.pop("logprobs_json"))
            q["token_ids"] = _json(q.pop("token_ids_json"))
            q.setdefault("choice", 0)
            out.append(q)
        return out

    def stage_times(self, attempt_id):
        rows = self._db.execute("SELECT stage, seconds FROM stage_time WHERE attempt_id = ?", (attempt_id,))
        return {r["stage"]: r["seconds"] for r in rows}


def open_run(path):
    """Opens a run database for reading; RunFormatError when it is not one this reader understands."""
    return Run(path)
