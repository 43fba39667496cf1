#include "webhook/yaml_load.h"

namespace aiadmit {

namespace {

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

// The line of a document root that starts with ',', or 0.
int strayRootFlowEntry(std::string_view text) {
  size_t i = 0;
  int line = 1;
  bool atDocumentStart = true;  // before the first token of a document's root
  bool atLineStart = true;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
      atLineStart = true;
      continue;
    }
    if (atLineStart) {
      atLineStart = false;
      const std::string_view rest = text.substr(i);
      const bool marker = rest.substr(0, 3) == "---" || rest.substr(0, 3) == "...";
      if (marker && (rest.size() == 3 || isSpace(rest[3]) || rest[3] == '\n')) {
        atDocumentStart = true;
        i += 3;
        continue;
      }
      if (atDocumentStart && c == '%') {  // a directive line
        while (i < text.size() && text[i] != '\n') ++i;
        continue;
      }
    }
    if (isSpace(c)) {
      ++i;
    } else if (c == '#' || !atDocumentStart) {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '!' || c == '&') {  // node properties come before the node
      while (i < text.size() && !isSpace(text[i]) && text[i] != '\n' && text[i] != ',') ++i;
    } else if (c == ',') {
      return line;
    } else {
      atDocumentStart = false;
    }
  }
  return 0;
}

}  // namespace

bool loadYamlDocuments(std::string_view text, std::vector<YAML::Node>& documents,
                       YamlLoadError& error) {
  if (const int line = strayRootFlowEntry(text); line > 0) {
    error = {line, 1, "a document cannot start with ','"};
    return false;
  }
  try {
    documents = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    error = {e.mark.line + 1, e.mark.column + 1, e.msg};
    return false;
  }
  return true;
}

}  // namespace aiadmit
