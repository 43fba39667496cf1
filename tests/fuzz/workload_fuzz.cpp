// Workloads through the whole pipeline, past the review envelope that most
// mutations of a whole AdmissionReview break: any object, as JSON (the way
// `serve` parses it) or YAML (the way `check` reads it), is mutated and
// validated without a crash; the JSON Patch applied to the object (RFC 6902,
// as kube-apiserver applies it) gives exactly the mutated copy; and mutating
// that copy again changes nothing. Seeds: ../shared/corpus/manifests,
// tests/golden/denials, bench/reviews.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mutators/mutator.h"
#include "webhook/codec/json_patch.h"
#include "webhook/codec/yaml_json.h"
#include "webhook/engine/admission.h"
#include "webhook/engine/engine.h"
#include "webhook/policy/profile_loader.h"

namespace {

using aiadmit::JsonDocument;
using aiadmit::JsonValue;

const aiadmit::Engine& engine() {
  static const aiadmit::Engine instance(
      aiadmit::loadProfileDirectory(AIADMIT_SOURCE_DIR "/profiles", aiadmit::mutationSwitches())
          .set);
  return instance;
}

// RFC 6901: the unescaped tokens of a JSON Pointer; false when malformed.
bool pointerTokens(std::string_view pointer, std::vector<std::string>& tokens) {
  tokens.clear();
  if (pointer.empty()) return true;
  if (pointer.front() != '/') return false;
  std::string token;
  for (size_t i = 1; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      tokens.push_back(std::move(token));
      token.clear();
    } else if (pointer[i] != '~') {
      token.push_back(pointer[i]);
    } else if (i + 1 < pointer.size() && (pointer[i + 1] == '0' || pointer[i + 1] == '1')) {
      token.push_back(pointer[++i] == '0' ? '~' : '/');
    } else {
      return false;
    }
  }
  return true;
}

// An array index token: digits without a leading zero, below `size` (or
// equal to it, or "-", where an append is allowed).
bool arrayIndex(const std::string& token, rapidjson::SizeType size, bool append,
                rapidjson::SizeType& index) {
  if (append && token == "-") {
    index = size;
    return true;
  }
  if (token.empty() || token.size() > 9 || (token.size() > 1 && token.front() == '0')) return false;
  for (char c : token) {
    if (c < '0' || c > '9') return false;
  }
  index = static_cast<rapidjson::SizeType>(std::stoul(token));
  return index < size || (append && index == size);
}

// Applies add, remove and replace operations (all that diffToJsonPatch
// writes); false wherever kube-apiserver would refuse the patch.
bool applyJsonPatch(JsonDocument& target, const std::string& patchText) {
  JsonDocument patch;
  patch.Parse(patchText.data(), patchText.size());
  if (patch.HasParseError() || !patch.IsArray()) return false;
  auto& alloc = target.GetAllocator();
  std::vector<std::string> tokens;
  for (const JsonValue& operation : patch.GetArray()) {
    const std::string_view op = aiadmit::stringMember(&operation, "op");
    const JsonValue* value = aiadmit::member(&operation, "value");
    if (!pointerTokens(aiadmit::stringMember(&operation, "path"), tokens)) return false;
    if ((op == "add" || op == "replace") != (value != nullptr)) return false;
    if (tokens.empty()) {
      if (op == "remove") return false;
      target.CopyFrom(*value, alloc);
      continue;
    }
    JsonValue* parent = &target;
    for (size_t i = 0; i + 1 < tokens.size(); ++i) {
      rapidjson::SizeType index = 0;
      if (parent->IsObject()) {
        parent = aiadmit::member(parent, tokens[i]);
        if (parent == nullptr) return false;
      } else if (parent->IsArray() && arrayIndex(tokens[i], parent->Size(), false, index)) {
        parent = &(*parent)[index];
      } else {
        return false;
      }
    }
    const std::string& last = tokens.back();
    if (parent->IsObject()) {
      JsonValue* existing = aiadmit::member(parent, last);
      if (op == "remove" && existing != nullptr) {
        parent->EraseMember(aiadmit::makeString(last, alloc));
      } else if ((op == "replace" || op == "add") && existing != nullptr) {
        existing->CopyFrom(*value, alloc);
      } else if (op == "add") {
        parent->AddMember(aiadmit::makeString(last, alloc), JsonValue(*value, alloc), alloc);
      } else {
        return false;
      }
    } else if (parent->IsArray()) {
      rapidjson::SizeType index = 0;
      if (!arrayIndex(last, parent->Size(), op == "add", index)) return false;
      if (op == "remove") {
        parent->Erase(parent->Begin() + index);
      } else if (op == "replace") {
        (*parent)[index].CopyFrom(*value, alloc);
      } else if (op == "add") {
        parent->PushBack(JsonValue(*value, alloc), alloc);
        for (rapidjson::SizeType i = parent->Size() - 1; i > index; --i) {
          (*parent)[i].Swap((*parent)[i - 1]);
        }
      } else {
        return false;
      }
    } else {
      return false;
    }
  }
  return true;
}

void checkObject(const JsonValue& object) {
  if (!object.IsObject()) return;
  const aiadmit::AdmissionSubject subject = aiadmit::AdmissionSubject::ofObject(object, "ml-team");
  (void)engine().validate(subject);

  JsonDocument mutated;
  if (engine().mutate(subject, {.mutated = &mutated}).outcome.decision() !=
      aiadmit::Decision::Patched) {
    return;
  }
  const std::string patch = aiadmit::diffToJsonPatch(object, mutated);
  JsonDocument patched;
  patched.CopyFrom(object, patched.GetAllocator());
  // Compared as text: RapidJSON's == looks members up by name, so an object
  // with a key twice (which no API server sends, but a body may hold) would
  // never equal itself.
  if (!applyJsonPatch(patched, patch) || aiadmit::toJson(patched) != aiadmit::toJson(mutated)) {
    __builtin_trap();
  }

  // Idempotent: what /mutate answers, sent to /mutate again, gets no patch.
  aiadmit::AdmissionSubject again = subject;
  again.object = &mutated;
  JsonDocument twice;
  if (engine().mutate(again, {.mutated = &twice}).outcome.decision() ==
      aiadmit::Decision::Patched) {
    __builtin_trap();
  }
  (void)engine().validate(again);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    JsonDocument document;
    if (aiadmit::parseJsonInSitu(text.data(), text.size(), aiadmit::kMaxJsonNesting, document)
            .empty()) {
      checkObject(document);
    }
    return 0;
  }
  std::vector<aiadmit::ManifestDocument> documents;
  std::string error;
  if (!aiadmit::parseManifests(text, documents, &error)) return 0;
  for (const aiadmit::ManifestDocument& document : documents) checkObject(*document.json);
  return 0;
}
