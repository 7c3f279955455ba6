#pragma once

#include <functional>
#include <vector>

#include "store/observation_store.h"

namespace gleaner::agent {

// An agent's local history that also hands each completed minute to
// `forward` (NodeAgent::AddMinutes, for the coordinator): the host keeps its
// own record, and the cluster's store gets the same minutes. Everything else
// goes to `local` as it is. Both must outlive it.
class MinuteTee final : public store::ObservationStore {
 public:
  using Forward = std::function<void(const std::vector<observe::MinuteRollup>&)>;
  MinuteTee(store::ObservationStore& local, Forward forward)
      : local_(local), forward_(std::move(forward)) {}

  core::Status AddRollups(const std::vector<observe::MinuteRollup>& rollups) override {
    forward_(rollups);
    return local_.AddRollups(rollups);
  }
  core::Result<int64_t> AddAgentMinutes(
      const std::vector<store::AgentMinutes>& batch,
      const std::map<std::string, std::string>& project_of_user) override {
    return local_.AddAgentMinutes(batch, project_of_user);
  }
  core::Result<std::vector<observe::MinuteRollup>> Rollups(const core::GpuUuid& uuid,
                                                           core::TimePoint from,
                                                           core::TimePoint to) override {
    return local_.Rollups(uuid, from, to);
  }
  core::Result<std::vector<observe::MinuteRollup>> RollupsBetween(core::TimePoint from,
                                                                  core::TimePoint to) override {
    return local_.RollupsBetween(from, to);
  }
  core::Status SaveGpus(const std::vector<store::GpuRecord>& gpus) override {
    return local_.SaveGpus(gpus);
  }
  core::Result<std::vector<store::GpuRecord>> Gpus() override { return local_.Gpus(); }
  core::Result<int64_t> ForgetGpus(const std::string& host) override {
    return local_.ForgetGpus(host);
  }
  core::Status SaveVerdicts(const std::vector<observe::Verdict>& verdicts) override {
    return local_.SaveVerdicts(verdicts);
  }
  core::Result<std::vector<observe::Verdict>> LatestVerdicts() override {
    return local_.LatestVerdicts();
  }
  core::Status SavePauseModel(const std::string& host,
                              const observe::QuietSpellModel& model) override {
    return local_.SavePauseModel(host, model);
  }
  core::Result<std::optional<observe::QuietSpellModel>> PauseModel(
      const std::string& host) override {
    return local_.PauseModel(host);
  }
  core::Status AddToProfiles(const observe::UsageProfiles& delta) override {
    return local_.AddToProfiles(delta);
  }
  core::Result<std::map<std::string, observe::HourOfWeekProfile>> Profiles(
      const std::string& kind) override {
    return local_.Profiles(kind);
  }
  core::Result<int64_t> PruneRollups(core::TimePoint before) override {
    return local_.PruneRollups(before);
  }

 private:
  store::ObservationStore& local_;
  Forward forward_;
};

}  // namespace gleaner::agent
