-- The run database, version 1 (docs/run-db.md). Embedded into anvil at build time (src/runs/run_db.cc); the only
-- place the schema is written. A later version adds a file schema_vN.sql of additions, never edits this one.
CREATE TABLE run (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  created_at REAL NOT NULL,
  anvil_version TEXT NOT NULL,
  model TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  prompt_id TEXT NOT NULL,
  prompt_version INTEGER NOT NULL,
  backend TEXT NOT NULL,
  samples INTEGER NOT NULL,
  turns INTEGER NOT NULL,
  sampling_json TEXT NOT NULL,
  config_json TEXT NOT NULL
);

CREATE TABLE task (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  level INTEGER NOT NULL,
  problem INTEGER,
  path TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  source TEXT NOT NULL,
  UNIQUE (level, name, sha256)
);

CREATE TABLE sample (
  id INTEGER PRIMARY KEY,
  task_id INTEGER NOT NULL REFERENCES task (id),
  idx INTEGER NOT NULL,
  UNIQUE (task_id, idx)
);

CREATE TABLE attempt (
  id INTEGER PRIMARY KEY,
  sample_id INTEGER NOT NULL REFERENCES sample (id),
  turn INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'generated', 'done')),
  outcome TEXT,
  code TEXT,
  format TEXT,
  verdict_json TEXT,
  reward REAL,
  cached INTEGER NOT NULL DEFAULT 0,
  created_at REAL NOT NULL,
  done_at REAL,
  UNIQUE (sample_id, turn)
);

CREATE TABLE request (
  id INTEGER PRIMARY KEY,
  attempt_id INTEGER NOT NULL REFERENCES attempt (id),
  messages_json TEXT NOT NULL,
  response TEXT,
  http_status INTEGER NOT NULL,
  failure TEXT NOT NULL,
  message TEXT NOT NULL,
  finish_reason TEXT,
  prompt_tokens INTEGER,
  completion_tokens INTEGER,
  reasoning_tokens INTEGER,
  attempts INTEGER NOT NULL,
  latency_s REAL NOT NULL,
  logprobs_json TEXT,
  token_ids_json TEXT,
  created_at REAL NOT NULL
);
CREATE INDEX request_by_attempt ON request (attempt_id);

CREATE TABLE stage_time (
  attempt_id INTEGER NOT NULL REFERENCES attempt (id),
  stage TEXT NOT NULL,
  seconds REAL NOT NULL,
  PRIMARY KEY (attempt_id, stage)
);
