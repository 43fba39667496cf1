#include "webhook/codec/yaml_load.h"

#include <yaml-cpp/eventhandler.h>

#include <cstdint>
#include <cstdio>
#include <sstream>

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

// Text that is not printable YAML (YAML 1.2 c-printable, in valid UTF-8):
// kubectl refuses it, yaml-cpp writes invalid bytes back as U+FFFD, and a
// control character in a name would reach logs and metrics labels.
bool findUnprintable(std::string_view text, YamlLoadError& error) {
  static constexpr uint32_t kShortest[] = {0, 0, 0x80, 0x800, 0x10000};
  int line = 1;
  int column = 1;
  size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    size_t length = 0;
    uint32_t code = 0;
    if (lead < 0x80) {
      length = 1;
      code = lead;
    } else if ((lead & 0xE0) == 0xC0) {
      length = 2;
      code = lead & 0x1Fu;
    } else if ((lead & 0xF0) == 0xE0) {
      length = 3;
      code = lead & 0x0Fu;
    } else if ((lead & 0xF8) == 0xF0) {
      length = 4;
      code = lead & 0x07u;
    }
    bool valid = length > 0 && i + length <= text.size();
    for (size_t k = 1; valid && k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      valid = (next & 0xC0) == 0x80;
      code = (code << 6) | (next & 0x3Fu);
    }
    if (!valid || code < kShortest[length] || code > 0x10FFFF ||
        (code >= 0xD800 && code <= 0xDFFF)) {
      error = {line, column, "invalid UTF-8"};
      return true;
    }
    const bool printable = code == 0x09 || code == 0x0A || code == 0x0D ||
                           (code >= 0x20 && code <= 0x7E) || code == 0x85 ||
                           (code >= 0xA0 && code <= 0xD7FF) || (code >= 0xE000 && code <= 0xFFFD) ||
                           code >= 0x10000;
    if (!printable) {
      char name[16];
      std::snprintf(name, sizeof name, "U+%04X", static_cast<unsigned>(code));
      error = {line, column, std::string("control character ") + name + " is not allowed"};
      return true;
    }
    if (code == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    i += length;
  }
  return false;
}

// Where each document of a stream begins, without building it.
class DocumentStarts : public YAML::EventHandler {
 public:
  YAML::Mark last;
  void OnDocumentStart(const YAML::Mark& mark) override { last = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// yaml-cpp 0.7 starts a document at a token that no rule consumes (a stray
// ',' in block context) and then returns empty documents at that same place
// for ever (fixed upstream after 0.7: jbeder/yaml-cpp#1319). A document that
// does not begin after the previous one is that loop. May throw YAML::Exception.
bool findStuckDocument(std::string_view text, YamlLoadError& error) {
  std::istringstream input{std::string(text)};
  YAML::Parser parser(input);
  DocumentStarts starts;
  int previous = -1;
  while (parser.HandleNextDocument(starts)) {
    if (starts.last.pos <= previous) {
      const char c =
          static_cast<size_t>(starts.last.pos) < text.size() ? text[starts.last.pos] : ' ';
      error = {starts.last.line + 1, starts.last.column + 1, std::string("unexpected '") + c + "'"};
      return true;
    }
    previous = starts.last.pos;
  }
  return false;
}

}  // namespace

bool loadYamlDocuments(std::string_view text, std::vector<YAML::Node>& documents,
                       YamlLoadError& error) {
  if (const int line = strayRootFlowEntry(text); line > 0) {
    error = {line, 1, "a document cannot start with ','"};
    return false;
  }
  if (findUnprintable(text, error)) return false;
  try {
    if (findStuckDocument(text, error)) return false;
    documents = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    error = {e.mark.line + 1, e.mark.column + 1, e.msg};
    return false;
  }
  return true;
}

}  // namespace aiadmit
