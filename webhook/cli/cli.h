// Command-line entry points, one per subcommand of `aiadmit`.
#pragma once

#include <string>
#include <vector>

namespace aiadmit {

using Arguments = std::vector<std::string>;

int serveCommand(const Arguments& args);
int reviewCommand(const Arguments& args);
int profilesCommand(const Arguments& args);

// The profiles shipped with aiadmit: $AIADMIT_PROFILES, else the directory
// next to the installed binary's share/, else the source tree's profiles/.
std::string defaultProfilesDir();

// Reads all of stdin (or a file) into `out`; false on error.
bool readAll(const std::string& path, std::string& out);

}  // namespace aiadmit
