#pragma once

// Internal to the store: how OpenStore and OpenLeaderLease reach the
// PostgreSQL backend (pg_entry.cc). A gleaner built with libpq always has
// it. The static gleaner (no libpq) declares it weak: there it is defined
// only in test builds that link the backend on its own, and elsewhere
// resolves to null: PostgreSQL is not supported.

#include <memory>
#include <string>

#include "core/result.h"
#include "store/leader_lease.h"
#include "store/store.h"

#ifdef GLEANER_WITH_POSTGRES
#define GLEANER_POSTGRES_LINKAGE
#else
#define GLEANER_POSTGRES_LINKAGE [[gnu::weak]]
#endif

namespace gleaner::store {

GLEANER_POSTGRES_LINKAGE core::Result<std::unique_ptr<Store>> OpenPostgresStore(
    const std::string& where);
GLEANER_POSTGRES_LINKAGE core::Result<std::unique_ptr<LeaderLease>> OpenPostgresLease(
    const std::string& where);
struct StoreProbe;
GLEANER_POSTGRES_LINKAGE core::Result<StoreProbe> ProbePostgresStore(const std::string& where);

}  // namespace gleaner::store
