#pragma once

#include <map>
#include <string>

#include "core/units.h"

namespace gleaner::sched {

// Decayed GPU usage per account (a project, or a user), and the fair-share
// factor that follows from it. Usage halves every `half_life`, so last
// month's burst weighs little today. The factor is Slurm's classic
// 2^(-usage share / weight share): 1 for an account that used nothing, 0.5
// for one that used exactly its share, towards 0 beyond. Pure: time is
// passed in. Thread-compatible.
class FairShareLedger {
 public:
  explicit FairShareLedger(core::Duration half_life) : half_life_(half_life) {}

  // Weight of an account (default 1); larger weights deserve more.
  void SetWeight(const std::string& account, double weight);
  // Makes the account count in the shares even before it used anything.
  void Touch(const std::string& account);
  // Decays every account's usage to `now` (earlier times are ignored).
  void Advance(core::TimePoint now);
  // Adds `milli_gpu_seconds` of use to the account, as of the last Advance.
  void Charge(const std::string& account, double milli_gpu_seconds);

 private:
  struct Account {
    double usage = 0;
    double weight = 1;
  };

 public:
  // An account, touched, to charge without looking its name up (a tick
  // charges every running job). Valid for the ledger's life.
  class Handle {
   public:
    explicit operator bool() const { return account_ != nullptr; }

   private:
    friend class FairShareLedger;
    Account* account_ = nullptr;
  };
  Handle HandleOf(const std::string& account);
  void Charge(Handle account, double milli_gpu_seconds);

  double Usage(const std::string& account) const;
  // 2^(-(usage / total usage) / (weight / total weight)); 1 when nobody used anything.
  double Factor(const std::string& account) const;

 private:
  core::Duration half_life_;
  core::TimePoint as_of_{};
  std::map<std::string, Account> accounts_;  // nodes stay put: Handles point into them
  double total_usage_ = 0;
  double total_weight_ = 0;
};

}  // namespace gleaner::sched
