#include "webhook/engine/profiles_review.h"

#include <algorithm>
#include <charconv>
#include <cstdint>

#include "mutators/mutator.h"
#include "webhook/codec/base64.h"
#include "webhook/codec/warnings.h"
#include "webhook/model/annotations.h"

namespace aiadmit {

namespace {

// A denial lists this many errors, each cut to this many bytes: enough to fix
// the first ones, and `aiadmit profiles lint` lists the rest.
constexpr size_t kErrorsShown = 20;
constexpr size_t kErrorBytes = 300;

constexpr const char* kFileFields[] = {"data", "binaryData"};

// What a ConfigMap holds at most (data and binaryData together): the API
// server stores no larger one, so a review of more is no review of a real
// one, and its YAML is not loaded.
constexpr size_t kMaxConfigMapBytes = 1024 * 1024;

size_t bytesOf(const std::vector<ProfileFileText>& files) {
  size_t total = 0;
  for (const ProfileFileText& file : files) total += file.name.size() + file.text.size();
  return total;
}

bool emptyMap(const JsonValue* map) {
  return map == nullptr || map->IsNull() || (map->IsObject() && map->MemberCount() == 0);
}

// An UPDATE that leaves data and binaryData as they were: labels, annotations,
// a finalizer added or removed. Nothing the server reads changed.
bool filesUnchanged(const JsonValue& object, const JsonValue* oldObject) {
  if (oldObject == nullptr) return false;
  for (const char* field : kFileFields) {
    const JsonValue* now = member(&object, field);
    const JsonValue* before = member(oldObject, field);
    if (emptyMap(now) && emptyMap(before)) continue;
    if (emptyMap(now) || emptyMap(before) || *now != *before) return false;
  }
  return true;
}

// The files a ConfigMap volume of `configMap` holds: data as it is,
// binaryData decoded. False with `error` when the object is not shaped as a
// ConfigMap is.
bool filesOf(const JsonValue& configMap, std::vector<ProfileFileText>& files, std::string& error) {
  for (const char* field : kFileFields) {
    const JsonValue* map = member(&configMap, field);
    if (map == nullptr || map->IsNull()) continue;
    if (!map->IsObject()) {
      error = std::string("request.object.") + field + " is not an object";
      return false;
    }
    const bool binary = std::string_view(field) == "binaryData";
    for (auto it = map->MemberBegin(); it != map->MemberEnd(); ++it) {
      const std::string key(it->name.GetString(), it->name.GetStringLength());
      if (!it->value.IsString()) {
        error = std::string("request.object.") + field + "[\"" + cutAtUtf8(key, 64) +
                "\"] is not a string";
        return false;
      }
      const std::string_view value(it->value.GetString(), it->value.GetStringLength());
      ProfileFileText file{key, binary ? std::string() : std::string(value)};
      if (binary && !base64Decode(value, file.text)) {
        error = "request.object.binaryData[\"" + cutAtUtf8(key, 64) + "\"] is not base64";
        return false;
      }
      files.push_back(std::move(file));
    }
  }
  return true;
}

// A key the server does not read as profiles ("training.yaml.bak") is said
// so, lest it be taken for one that was checked.
std::vector<std::string> ignoredKeys(const std::vector<ProfileFileText>& files) {
  std::vector<std::string> warnings;
  for (const ProfileFileText& file : files) {
    if (isProfileFileName(file.name)) continue;
    warnings.push_back(warningLine("key " + cutAtUtf8(file.name, 48) +
                                   " is not read as profiles (only *.yaml and *.yml are)"));
  }
  return warnings;
}

// Whether `release` ("0.2.0") comes after `ours`, compared number by number
// ("0.10.0" after "0.9.1"; a missing part is 0). A release that does not read
// as dotted numbers comes after nothing.
bool isLaterRelease(std::string_view release, std::string_view ours) {
  const auto parts = [](std::string_view text, std::vector<uint64_t>& out) {
    while (!text.empty()) {
      const size_t dot = text.find('.');
      const std::string_view part = text.substr(0, dot);
      uint64_t number = 0;
      const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), number);
      if (part.empty() || error != std::errc() || end != part.data() + part.size()) return false;
      out.push_back(number);
      if (dot == std::string_view::npos) return true;
      text.remove_prefix(dot + 1);
    }
    return false;  // empty, or ending in a dot
  };
  std::vector<uint64_t> theirs;
  std::vector<uint64_t> mine;
  if (!parts(release, theirs) || !parts(ours, mine)) return false;
  const size_t length = std::max(theirs.size(), mine.size());
  theirs.resize(length);
  mine.resize(length);
  return theirs > mine;
}

// A set this replica cannot load, written for a later release (an upgrade
// applies the new ConfigMap while the old replicas still answer): it may be
// good there, so it is admitted and said, never refused. The later release's
// replicas load it as they start, and stop a rollout on a set that fails.
AdmissionOutcome laterReleasesSet(std::string_view release, const ProfileLoadResult& loaded,
                                  std::vector<std::string> warnings) {
  // Three lines, each within the API server's 120 characters.
  warnings.push_back(warningLine("these profiles are for aiadmit " + cutAtUtf8(release, 16) +
                                 ", later than this replica's " + AIADMIT_VERSION +
                                 ": admitted unjudged"));
  warnings.push_back(warningLine(
      "the new release's replicas load them as they start and stop its rollout if they fail"));
  if (!loaded.errors.empty()) {
    const size_t count = loaded.errors.size();
    warnings.push_back(warningLine(std::to_string(count) + (count == 1 ? " error" : " errors") +
                                   " here, the first: " + loaded.errors.front().format()));
  }
  return AdmissionOutcome::allowed(std::move(warnings));
}

AdmissionOutcome decide(const AdmissionRequest& request) {
  const AdmissionSubject& subject = request.subject;
  const bool writes =
      subject.operation == Operation::Create || subject.operation == Operation::Update;
  // Deletes are never refused, and only a ConfigMap is judged here.
  if (!writes || subject.kindName != "ConfigMap" || !subject.group.empty()) {
    return AdmissionOutcome::allowed();
  }
  if (subject.operation == Operation::Update &&
      filesUnchanged(*subject.object, subject.oldObject)) {
    return AdmissionOutcome::allowed();
  }
  std::vector<ProfileFileText> files;
  std::string error;
  if (!filesOf(*subject.object, files, error)) return AdmissionOutcome::badRequest(error);
  if (bytesOf(files) > kMaxConfigMapBytes) {
    return AdmissionOutcome::badRequest(
        "the ConfigMap holds more than 1 MiB, which no ConfigMap "
        "may; its profiles are not loaded");
  }
  std::vector<std::string> warnings = ignoredKeys(files);
  const ProfileLoadResult loaded = loadProfileFiles(
      std::move(files),
      "ConfigMap " + std::string(subject.namespaceName) + "/" + std::string(request.name),
      mutationSwitches());
  if (loaded.ok()) return AdmissionOutcome::allowed(std::move(warnings));
  const std::string_view release =
      stringMember(member(member(subject.object, "metadata"), "annotations"), kReleaseAnnotation);
  if (isLaterRelease(release, AIADMIT_VERSION)) {
    return laterReleasesSet(release, loaded, std::move(warnings));
  }
  return AdmissionOutcome::denied(profilesDenialMessage(loaded.errors), std::move(warnings));
}

}  // namespace

std::string profilesDenialMessage(const std::vector<ProfileError>& errors) {
  const size_t count = errors.size();
  std::string out = "these profiles do not load (" + std::to_string(count) +
                    (count == 1 ? " error" : " errors") +
                    "): the running aiadmit replicas would keep their last good set, and a "
                    "replica that starts on them would exit";
  for (size_t i = 0; i < std::min(count, kErrorsShown); ++i) {
    out += "\n" + cutAtUtf8(errors[i].format(), kErrorBytes);
  }
  if (count > kErrorsShown) {
    out += "\n" + std::to_string(count - kErrorsShown) +
           " more; `aiadmit profiles lint DIR` lists them all";
  }
  return out;
}

ReviewAnswer answerProfilesReview(std::string_view body) {
  const Review review(body);
  return review.answer(decideSafely([&] {
    return Decided{.outcome = review.request() != nullptr ? decide(*review.request())
                                                          : AdmissionOutcome::allowed()};
  }));
}

}  // namespace aiadmit
