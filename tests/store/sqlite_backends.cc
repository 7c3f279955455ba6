// store_test's backends: SQLite in memory and in a file on disk.
#include "store/sqlite_store.h"
#include "store_backend.h"

namespace gleaner::store {
namespace {

class SqliteInMemory : public StoreBackend {
 public:
  std::string name() const override { return "SqliteInMemory"; }
  core::Result<std::string> NewPlace(const std::filesystem::path& /*dir*/) override {
    return std::string(":memory:");
  }
  core::Result<std::unique_ptr<Store>> Open(const std::string& where) override {
    GLEANER_ASSIGN_OR_RETURN(std::unique_ptr<SqliteStore> store, SqliteStore::Open(where));
    return std::unique_ptr<Store>(std::move(store));
  }
  bool Shared() const override { return false; }
};

class SqliteOnDisk : public SqliteInMemory {
 public:
  std::string name() const override { return "SqliteOnDisk"; }
  core::Result<std::string> NewPlace(const std::filesystem::path& dir) override {
    return (dir / ("gleaner-" + std::to_string(++made_) + ".db")).string();
  }
  bool Shared() const override { return true; }

 private:
  int made_ = 0;
};

}  // namespace

std::vector<StoreBackend*> BackendsUnderTest() {
  static SqliteInMemory in_memory;
  static SqliteOnDisk on_disk;
  return {&in_memory, &on_disk};
}

}  // namespace gleaner::store
