#include "testing/postgres_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace gleaner::testing {
namespace {

namespace fs = std::filesystem;

// The directory holding initdb and pg_ctl, or empty.
fs::path FindBinDir() {
  if (const char* dir = std::getenv("GLEANER_PG_BINDIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  // Debian: /usr/lib/postgresql/<major>/bin; the newest major wins.
  fs::path best;
  int best_major = -1;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::string name = entry.path().filename().string();
    const int major = std::atoi(name.c_str());
    if (major > best_major && fs::exists(entry.path() / "bin" / "initdb")) {
      best_major = major;
      best = entry.path() / "bin";
    }
  }
  if (!best.empty()) return best;
  if (const char* path = std::getenv("PATH")) {
    std::istringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
      if (!dir.empty() && fs::exists(fs::path(dir) / "initdb")) return dir;
    }
  }
  return {};
}

// A port on 127.0.0.1 that nothing listens on right now. Another process
// may take it before the server does; Start() then tries another.
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

}  // namespace

core::Result<std::unique_ptr<PostgresServer>> PostgresServer::Start() {
  const fs::path bin = FindBinDir();
  std::error_code ec;
  if (bin.empty() || !fs::exists(bin / "initdb", ec)) {
    return core::NotFound(
        "PostgreSQL server binaries (initdb, pg_ctl) not found in " +
        (bin.empty() ? std::string("/usr/lib/postgresql/*/bin or PATH") : bin.string()) +
        "; install the postgresql package, or set GLEANER_PG_BINDIR");
  }
  const bool as_postgres = geteuid() == 0;
  const passwd* postgres = as_postgres ? getpwnam("postgres") : nullptr;
  if (as_postgres && postgres == nullptr) {
    return core::NotFound(
        "running as root, the test server must run as the user postgres (initdb refuses root), "
        "and there is no such user; install the postgresql package");
  }
  // Under /tmp, not $TMPDIR: the socket's path must fit in 107 bytes.
  std::string tmpl = "/tmp/gleaner-pg-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) return core::Unavailable("cannot create " + tmpl);
  std::unique_ptr<PostgresServer> server(new PostgresServer(bin, tmpl, as_postgres));
  if (as_postgres && chown(tmpl.c_str(), postgres->pw_uid, postgres->pw_gid) != 0) {
    return core::Unavailable("cannot give " + tmpl + " to the user postgres");
  }

  const std::string data = (server->dir_ / "data").string();
  if (server->Run("initdb",
                  {"-D", data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C",
                   "--no-sync"},
                  "initdb.log", true) != 0) {
    return core::Unavailable("initdb failed: " + server->Log("initdb.log"));
  }
  // No fsync: a test's server never needs to survive a crash of the
  // machine, and syncing would make every CREATE DATABASE and COMMIT slow.
  // Committed data still survives the kill of a client, which is what the
  // tests check.
  for (int attempt = 0; attempt < 5 && !server->started_; ++attempt) {
    server->port_ = FreePort();
    const std::string options =
        "-c listen_addresses=127.0.0.1 -c port=" + std::to_string(server->port_) +
        " -c unix_socket_directories=" + server->dir_.string() +
        " -c fsync=off -c full_page_writes=off -c shared_buffers=16MB";
    server->started_ = server->Run("pg_ctl",
                                   {"start", "-w", "-t", "60", "-D", data, "-l",
                                    (server->dir_ / "server.log").string(), "-o", options},
                                   "pg_ctl.log", true) == 0;
  }
  if (!server->started_) {
    return core::Unavailable("pg_ctl start failed: " + server->Log("pg_ctl.log") + "\n" +
                             server->Log("server.log"));
  }
  return server;
}

PostgresServer::~PostgresServer() {
  if (started_) {
    Run("pg_ctl", {"stop", "-D", (dir_ / "data").string(), "-m", "immediate", "-w"},
        "pg_ctl_stop.log", true);
  }
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

core::Result<std::string> PostgresServer::CreateDatabase(const std::string& name) {
  if (Run("createdb",
          {"-h", dir_.string(), "-p", std::to_string(port_), "-U", "postgres", "--", name},
          "createdb.log", false) != 0) {
    return core::Unavailable("createdb " + name + " failed: " + Log("createdb.log"));
  }
  return Uri(name);
}

std::string PostgresServer::Uri(const std::string& database) const {
  return "postgresql:///" + database + "?host=" + dir_.string() + "&port=" + std::to_string(port_) +
         "&user=postgres";
}

int PostgresServer::Run(const std::string& program, const std::vector<std::string>& args,
                        const std::string& log, bool as_server_user) const {
  std::vector<std::string> argv;
  if (as_server_user && as_postgres_) argv = {"runuser", "-u", "postgres", "--"};
  argv.push_back((bin_ / program).string());
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string log_path = (dir_ / log).string();
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    // In the directory the server user owns: the build directory may be
    // closed to it, and PostgreSQL's programs complain about that.
    if (chdir(dir_.c_str()) != 0) _exit(126);
    const int out = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (out < 0 || null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0) {
      _exit(126);
    }
    std::vector<char*> raw;
    for (std::string& a : argv) raw.push_back(a.data());
    raw.push_back(nullptr);
    execvp(raw[0], raw.data());
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string PostgresServer::Log(const std::string& name) const {
  std::ifstream in(dir_ / name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace gleaner::testing
