// What a run database (runs/run_db.h) gives the metrics: one SampleRecord
// per sample and turn, where at turn K a sample counts as its best attempt in
// turns 1..K — best by reward, ties to the earlier turn; an attempt without a
// reward (server_error) ranks below every rewarded one — and a sample with no
// finished attempt by then is "pending". Problems are keyed by the task's
// identity (level, name, sha256), never by (level, number). Reads only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "report/metrics.h"
#include "runs/run_db.h"

namespace anvil {

struct TurnRecords {
  int turn = 1;
  std::vector<SampleRecord> records;
  int pending = 0;        // Samples with no finished attempt by this turn.
  int server_errors = 0;  // Samples whose best attempt is a server_error.
};

// One entry per turn, 1 .. the run's turns. Error: the database's.
Result<std::vector<TurnRecords>> RecordsByTurn(RunDb& db);

// A sample and what counts for it at a turn.
struct SampleAtTurn {
  TaskRow task;
  int64_t sample = 0;
  std::optional<AttemptRow> best;  // Its best finished attempt in turns 1..K; none: pending.
};

// Every sample at turn `turn` (1 .. the run's turns), in the database's
// order. Error: the database's.
Result<std::vector<SampleAtTurn>> SamplesAtTurn(RunDb& db, int turn);

// The run's turns: its recorded `turns`, or more when attempts go further.
Result<int> RunTurns(RunDb& db);

// The turn `text` names among a run's 1..turns: first, last or K. Error:
// "--turn TEXT: expected first, last or a turn from 1 to TURNS".
Result<int> NamedTurn(const std::string& text, int turns);

}  // namespace anvil
