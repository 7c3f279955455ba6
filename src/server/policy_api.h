#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/mutex.h"
#include "server/caller.h"
#include "server/http_message.h"
#include "store/policy_store.h"

namespace gleaner::server {

// What applying a policy takes, done by the daemon that runs it
// (cli::DaemonPolicy): check the text, make it the running policy, record
// it as a new version. Thread-safe.
class PolicyControl {
 public:
  struct Applied {
    store::PolicyVersion version;
    // Sections that changed but take effect only at the next restart.
    std::vector<std::string> at_restart;
  };
  virtual ~PolicyControl() = default;
  // `name` is what errors call the text ("new.toml:12: ..."); `event` is
  // its kind in the history (policy_applied, policy_rolled_back). A text
  // with errors changes nothing; nor, unless `force`, does one that would
  // lock every user but root out (LockOuts).
  virtual core::Result<Applied> Apply(const std::string& text, const std::string& name,
                                      const std::string& author, const std::string& note,
                                      const std::string& event, bool force) = 0;
  // The version running now (0: none recorded).
  virtual int64_t ActiveVersion() const = 0;
};

// The policy's versions (docs/policy.md), for root only: the policy may
// hold secrets (a webhook's address):
//   GET  /v1/policy                 the running version, with its text
//   GET  /v1/policy/versions        the latest 100, newest first (no text)
//   GET  /v1/policy/versions/N      one, with its text
//   POST /v1/policy                 {"text", "name", "note", "force"}: applies it
//   POST /v1/policy/rollback        {"version", "note", "force"} (all optional; the
//                                   version before the running one): applies
//                                   that version's text as a new version
// Thread-safe; `store_mu` guards the store.
class PolicyApi {
 public:
  PolicyApi(store::PolicyStore& policies, core::Mutex& store_mu, PolicyControl* control)
      : policies_(policies), store_mu_(store_mu), control_(control) {}

  HttpResponse Handle(const HttpRequest& request, const Caller& caller);

 private:
  HttpResponse Apply(const HttpRequest& request, const Caller& caller);
  HttpResponse Rollback(const HttpRequest& request, const Caller& caller);
  core::Result<store::PolicyVersion> Get(int64_t version);

  store::PolicyStore& policies_ GLEANER_GUARDED_BY(store_mu_);
  core::Mutex& store_mu_;
  PolicyControl* control_;  // null: this daemon keeps no policy versions
};

}  // namespace gleaner::server
