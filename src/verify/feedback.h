// Feedback: the verdict as text a model can act on in its next turn — the
// compile errors with the offending lines, where it crashed, how the outputs
// differ, which rule was broken, how fast it was. Pure function.
#pragma once

#include <string>

#include "verify/verdict.h"

namespace anvil {

std::string MakeFeedback(const Verdict& verdict);

// How a failed check failed, in a sentence or two: the first output that
// differs, in how many elements, its errors against the tolerance, and the
// first mismatch ("output out0 differs in 3 of 128 elements (...). First
// mismatch at index [5, 0]: expected 1.5, got 0.").
std::string MismatchText(const TrialCheck& check);

}  // namespace anvil
