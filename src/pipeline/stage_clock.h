// Times one stage of an evaluation into Verdict::stage_seconds: construct it
// at the start of the stage; its destructor adds the wall time since. Not
// thread-safe with respect to the verdict (one evaluation, one thread).
#pragma once

#include <chrono>

#include "verify/verdict.h"

namespace anvil {

class StageClock {
 public:
  StageClock(Verdict& v, const char* name) : v_(v), name_(name), start_(std::chrono::steady_clock::now()) {}
  ~StageClock() {
    v_.stage_seconds[name_] += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  StageClock(const StageClock&) = delete;
  StageClock& operator=(const StageClock&) = delete;

 private:
  Verdict& v_;
  const char* name_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace anvil
