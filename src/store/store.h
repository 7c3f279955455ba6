#pragma once

#include "store/event_store.h"
#include "store/job_store.h"
#include "store/observation_store.h"
#include "store/policy_store.h"
#include "store/token_store.h"

namespace gleaner::store {

// Everything gleaner keeps: jobs, their history, the policy's versions,
// API tokens and observations, behind one pointer. Each backend (SQLite, PostgreSQL)
// implements the whole of it and behaves the same; one conformance suite
// (tests/store) runs against every backend. The thread-safety rules are
// those of the interfaces: one connection, one thread at a time.
class Store : public JobStore,
              public EventStore,
              public PolicyStore,
              public TokenStore,
              public ObservationStore {};

}  // namespace gleaner::store
