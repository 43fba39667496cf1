// Command-line entry points, one per subcommand of `aiadmit`.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace aiadmit {

using Arguments = std::vector<std::string>;

int serveCommand(const Arguments& args);
int reviewCommand(const Arguments& args);
int profilesCommand(const Arguments& args);
// `profiles export --admission-policies DIR -o FILE`.
int profilesExportCommand(const Arguments& args);

// The profiles shipped with aiadmit: $AIADMIT_PROFILES, else the directory
// next to the installed binary's share/, else the source tree's profiles/.
std::string defaultProfilesDir();

// When the arguments ask for help (-h, --help), writes `help` to stdout and
// returns true.
bool printHelp(const Arguments& args, std::string_view help);
// `--flag value` or `--flag=value` at args[i] into `out` (i moves past the
// value); a flag without its value exits 2.
bool takeValue(const Arguments& args, size_t& i, const std::string& flag, std::string& out);

// Reads all of stdin (or a file) into `out`; false on error.
bool readAll(const std::string& path, std::string& out);

}  // namespace aiadmit
