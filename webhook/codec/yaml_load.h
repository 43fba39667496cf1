// The one way aiadmit hands text to yaml-cpp, for profiles and manifests.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>
#include <vector>

namespace aiadmit {

struct YamlLoadError {
  int line = 0;  // 1-based
  int column = 0;
  std::string message;
};

// Every document of `text`. Refuses, before yaml-cpp sees them, inputs that
// yaml-cpp 0.7 (Debian 12) never returns from: a document whose root starts
// with a flow entry (",", "!tag ,", "&anchor ,", "--- ,"), or any other token
// that leaves LoadAll returning empty documents without end. Such text is not
// valid YAML anyway. Text that is not printable UTF-8 is refused as kubectl
// refuses it.
bool loadYamlDocuments(std::string_view text, std::vector<YAML::Node>& documents,
                       YamlLoadError& error);

}  // namespace aiadmit
