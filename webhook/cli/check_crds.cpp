#include "webhook/cli/check_crds.h"

#include <algorithm>
#include <system_error>

#include "webhook/cli/cli.h"
#include "webhook/codec/yaml_json.h"

namespace aiadmit::check_cli {

namespace {

bool addDocument(const JsonValue& document, const std::string& where, CrdDefaults::Builder& builder,
                 std::string& error) {
  for (const JsonValue* crd : CrdDefaults::definitionsIn(document)) {
    std::string why;
    if (!builder.add(*crd, &why)) {
      error = where + ": " + why;
      return false;
    }
  }
  return true;
}

bool addCrdsFromFile(const std::string& file, CrdDefaults::Builder& builder, std::string& error) {
  std::string text;
  if (!readAll(file, text)) {
    error = file + ": cannot read";
    return false;
  }
  std::vector<ManifestDocument> documents;
  ManifestError parseError;
  if (!parseManifests(text, documents, parseError)) {
    error = file + ":" + std::to_string(parseError.line) + ":" + std::to_string(parseError.column) +
            ": " + parseError.message;
    return false;
  }
  for (const ManifestDocument& document : documents) {
    if (!addDocument(*document.json, file + ":" + std::to_string(document.line), builder, error)) {
      return false;
    }
  }
  return true;
}

std::string objectLabel(const JsonValue& object) {
  const std::string_view name = nameOf(object);
  return std::string(stringMember(&object, "kind")) + " " +
         (name.empty() ? std::string(generateNameOf(object)) + "*" : std::string(name));
}

}  // namespace

bool isManifestFile(const std::filesystem::path& path) {
  const std::string extension = path.extension().string();
  return extension == ".yaml" || extension == ".yml" || extension == ".json";
}

bool addCrdsFromPath(const std::string& path, CrdDefaults::Builder& builder, std::string& error) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    if (!fs::exists(path, ec)) {
      error = path + ": the path does not exist";
      return false;
    }
    return addCrdsFromFile(path, builder, error);
  }
  std::vector<fs::path> files;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code entryError;
    if (!it->is_directory(entryError) && isManifestFile(it->path())) files.push_back(it->path());
  }
  if (ec) {
    error = path + ": cannot list: " + ec.message();
    return false;
  }
  // In name order, so that of two files defining the same kind the later
  // one wins the same way on every machine.
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    if (!addCrdsFromFile(file.string(), builder, error)) return false;
  }
  return true;
}

void addInputCrds(const std::vector<InputObject>& objects, CrdDefaults::Builder& builder,
                  std::vector<InputError>& errors) {
  for (const InputObject& object : objects) {
    if (!CrdDefaults::isCustomResourceDefinition(*object.json)) continue;
    std::string why;
    if (!builder.add(*object.json, &why)) errors.push_back({object.file, object.line, 0, why});
  }
}

void applyCrdDefaults(const CrdDefaults& crds, std::vector<InputObject>& objects,
                      std::vector<InputError>& errors) {
  if (crds.size() == 0) return;
  std::vector<InputObject> kept;
  kept.reserve(objects.size());
  for (InputObject& object : objects) {
    const DefaultingResult result = crds.apply(*object.json, object.json->GetAllocator());
    if (result.outcome == DefaultingOutcome::LimitReached) {
      errors.push_back({object.file, object.line, 0,
                        objectLabel(*object.json) + ": the defaults of its CRD go past " +
                            std::to_string(crds.limits().maxDepth) + " levels or " +
                            std::to_string(crds.limits().maxVisited) + " values"});
      continue;
    }
    kept.push_back(std::move(object));
  }
  objects = std::move(kept);
}

}  // namespace aiadmit::check_cli
