#include "cli/api_client.h"

#include <cctype>
#include <filesystem>

#include "cli/exit_codes.h"
#include "config/data_dir.h"
#include "core/format.h"
#include "core/json_depth.h"

namespace gleaner::cli {

using nlohmann::json;

core::Result<std::optional<net::Endpoint>> FindApi(const ApiTarget& target) {
  if (!target.server.empty()) {
    GLEANER_ASSIGN_OR_RETURN(net::Endpoint e, net::ParseServerUrl(target.server));
    GLEANER_RETURN_IF_ERROR(net::UseClientTls(target.tls, &e));
    return std::optional(e);
  }
  const std::string socket = config::ClientDataDir(target.data_dir) + "/gleaner.sock";
  GLEANER_ASSIGN_OR_RETURN(const bool served, config::InDataDir(socket));
  if (!served) return std::optional<net::Endpoint>();
  net::Endpoint e;
  e.unix_path = socket;
  return std::optional(e);
}

std::string QueryEscape(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '.' || c == '_' || c == '-') {
      out += static_cast<char>(c);
    } else {
      constexpr char kHex[] = "0123456789ABCDEF";
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

core::Result<net::Endpoint> RunningApi(const ApiTarget& target) {
  GLEANER_ASSIGN_OR_RETURN(std::optional<net::Endpoint> api, FindApi(target));
  if (!api) {
    return core::Unavailable("gleaner up is not running here (no " +
                             config::ClientDataDir(target.data_dir) +
                             "/gleaner.sock); pass --data-dir or --server");
  }
  return *std::move(api);
}

int CallApi(const net::Endpoint& endpoint, const std::string& token, const std::string& method,
            const std::string& path, const std::string& body, bool json_out,
            const std::function<std::string(const json&)>& text, std::ostream& out,
            std::ostream& err) {
  auto answer = net::HttpCall(endpoint, method, path, body, token);
  if (!answer.ok()) return Fail(err, answer.status());
  const json doc = core::ParseUntrustedJson<json>(answer->second);
  if (answer->first >= 400) {
    const std::string message = doc.is_object() && doc.contains("error")
                                    ? doc["error"].value("message", answer->second)
                                    : answer->second;
    err << "gleaner: " << core::TerminalText(message) << "\n";
    return answer->first == 400 ? kExitBadInput : kExitFailure;
  }
  if (doc.is_discarded()) {
    return Fail(err, core::Internal("gleaner answered with something not JSON"));
  }
  // The text holds what others wrote (commands, names, reasons, what an
  // agent said): nothing in it may drive the terminal.
  out << (json_out ? doc.dump(2) : core::TerminalText(text(doc))) << "\n";
  return kExitOk;
}

int Fail(std::ostream& err, const core::Status& s) {
  err << "gleaner: " << core::TerminalText(s.message()) << "\n";
  return s.code() == core::StatusCode::kInvalidArgument ? kExitBadInput : kExitFailure;
}

}  // namespace gleaner::cli
