// Feedback: the verdict as text a model can act on in its next turn — the
// compile errors with the offending lines, where it crashed, how the outputs
// differ, which rule was broken, how fast it was. Pure function.
#pragma once

#include <string>

#include "verify/verdict.h"

namespace anvil {

std::string MakeFeedback(const Verdict& verdict);

}  // namespace anvil
