// The repair turns: whether a sample gets another turn after its latest
// attempt, and the user message that asks for it — the verdict's feedback
// verbatim, or what went wrong with the answer itself (no code, cut off,
// refused), and for a correct kernel that is still slow (--optimize) what the
// verdict measured. Pure functions; thread-safe.
#pragma once

#include <string>

#include "runs/run_db.h"

namespace anvil {

struct RepairOptions {
  bool optimize = false;        // Go on while a passing kernel is slower than target_speedup (vs eager).
  double target_speedup = 1.1;  // With optimize.
};

// Whether the sample whose latest attempt is `latest` (done) gets another
// turn: not after a pass (unless optimize and slower than the target), not
// after the machine's failures (server_error, infra_error: a rerun asks or
// judges that turn again).
bool NeedsAnotherTurn(const AttemptRow& latest, const RepairOptions& options);

// The repair request's last message for `latest`.
std::string RepairMessage(const AttemptRow& latest, const RepairOptions& options);

}  // namespace anvil
