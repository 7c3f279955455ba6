#include "sched/fair_share.h"

#include <cmath>

namespace gleaner::sched {

void FairShareLedger::SetWeight(const std::string& account, double weight) {
  Touch(account);
  Account& a = accounts_[account];
  total_weight_ += weight - a.weight;
  a.weight = weight;
}

void FairShareLedger::Touch(const std::string& account) {
  if (accounts_.try_emplace(account).second) total_weight_ += 1;
}

void FairShareLedger::Advance(core::TimePoint now) {
  if (now <= as_of_) return;
  if (as_of_ != core::TimePoint{} && half_life_ > core::Duration{}) {
    const double factor =
        std::exp2(-core::ToSecondsDouble(now - as_of_) / core::ToSecondsDouble(half_life_));
    total_usage_ = 0;
    for (auto& [name, a] : accounts_) {
      a.usage *= factor;
      total_usage_ += a.usage;
    }
  }
  as_of_ = now;
}

void FairShareLedger::Charge(const std::string& account, double milli_gpu_seconds) {
  Touch(account);
  accounts_[account].usage += milli_gpu_seconds;
  total_usage_ += milli_gpu_seconds;
}

FairShareLedger::Handle FairShareLedger::HandleOf(const std::string& account) {
  Touch(account);
  Handle h;
  h.account_ = &accounts_.find(account)->second;
  return h;
}

void FairShareLedger::Charge(Handle account, double milli_gpu_seconds) {
  account.account_->usage += milli_gpu_seconds;
  total_usage_ += milli_gpu_seconds;
}

double FairShareLedger::Usage(const std::string& account) const {
  auto it = accounts_.find(account);
  return it == accounts_.end() ? 0 : it->second.usage;
}

double FairShareLedger::Factor(const std::string& account) const {
  auto it = accounts_.find(account);
  if (total_usage_ <= 0 || it == accounts_.end() || total_weight_ <= 0) return 1;
  const double usage_share = it->second.usage / total_usage_;
  const double weight_share = it->second.weight / total_weight_;
  if (weight_share <= 0) return 0;
  return std::exp2(-usage_share / weight_share);
}

}  // namespace gleaner::sched
