#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"

namespace gleaner::testing {

// A throwaway PostgreSQL server: a new cluster in a temporary directory,
// listening on a Unix socket in that directory and on 127.0.0.1 at a free
// port, trusting every local connection. Stopped (immediate mode: there is
// nothing to keep) and removed with its directory when the object dies.
//
// Run as root (as CI runs the tests), the server runs as the user postgres,
// since initdb and pg_ctl refuse root; otherwise as the current user. The
// binaries come from $GLEANER_PG_BINDIR, the newest
// /usr/lib/postgresql/*/bin (Debian keeps them off PATH), or PATH.
class PostgresServer {
 public:
  // kNotFound, saying why, when PostgreSQL is not installed (or, as root,
  // there is no user postgres to run it as); kUnavailable when it is but
  // would not start, with its log.
  static core::Result<std::unique_ptr<PostgresServer>> Start();
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // Creates an empty database with createdb; returns its URI.
  core::Result<std::string> CreateDatabase(const std::string& name);
  // postgresql:///NAME?host=DIR&port=PORT&user=postgres (over the socket).
  std::string Uri(const std::string& database) const;

  const std::filesystem::path& dir() const { return dir_; }
  int port() const { return port_; }

 private:
  PostgresServer(std::filesystem::path bin, std::filesystem::path dir, bool as_postgres)
      : bin_(std::move(bin)), dir_(std::move(dir)), as_postgres_(as_postgres) {}
  // Runs one of the server's programs, as postgres when that is needed,
  // with output to `log` in the directory; its exit status, or -1.
  int Run(const std::string& program, const std::vector<std::string>& args, const std::string& log,
          bool as_server_user) const;
  std::string Log(const std::string& name) const;

  std::filesystem::path bin_;
  std::filesystem::path dir_;
  bool as_postgres_;
  bool started_ = false;
  int port_ = 0;
};

}  // namespace gleaner::testing
