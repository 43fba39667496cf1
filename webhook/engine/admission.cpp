#include "webhook/engine/admission.h"

#include <cstdint>
#include <span>

#include "webhook/codec/base64.h"
#include "webhook/codec/enum_table.h"

namespace aiadmit {

AdmissionSubject AdmissionSubject::ofObject(const JsonValue& object,
                                            std::string_view namespaceName) {
  AdmissionSubject subject;
  subject.object = &object;
  const GroupVersion groupVersion = splitApiVersion(stringMember(&object, "apiVersion"));
  subject.group = groupVersion.group;
  subject.version = groupVersion.version;
  subject.kindName = stringMember(&object, "kind");
  subject.namespaceName = namespaceName;
  subject.operation = Operation::Create;
  return subject;
}

constexpr EnumEntry<Decision> kDecisionNames[] = {{Decision::Allowed, "allowed"},
                                                  {Decision::Patched, "patched"},
                                                  {Decision::Denied, "denied"},
                                                  {Decision::Errored, "errored"}};

std::string_view decisionName(Decision decision) {
  return valueIn(kDecisionNames, decision, "errored");
}

namespace {

Operation parseOperation(std::string_view text) {
  if (text == "CREATE") return Operation::Create;
  if (text == "UPDATE") return Operation::Update;
  if (text == "DELETE") return Operation::Delete;
  if (text == "CONNECT") return Operation::Connect;
  return Operation::Unknown;
}

// What the request's document goes without, still read and checked: the
// objects' managedFields, the API server's record of which manager set
// which field. No rule reads it, it is about a fifth of a Pod's JSON, and a
// patch never touches it.
constexpr std::string_view kRequestKey[] = {"request"};
constexpr std::string_view kObjectKeys[] = {"object", "oldObject"};
constexpr std::string_view kMetadataKey[] = {"metadata"};
constexpr std::span<const std::string_view> kToMetadata[] = {kRequestKey, kObjectKeys,
                                                             kMetadataKey};
constexpr OmittedMember kManagedFields{kToMetadata, "managedFields"};

bool fail(DecodeError& error, std::string message) {
  error.message = std::move(message);
  return false;
}

// The members of request that the decoder reads, each the first of its name
// (as member() finds it), found in one pass over the request.
struct RequestMembers {
  const JsonValue* uid = nullptr;
  const JsonValue* kind = nullptr;
  const JsonValue* subResource = nullptr;
  const JsonValue* namespaceName = nullptr;
  const JsonValue* name = nullptr;
  const JsonValue* operation = nullptr;
  const JsonValue* dryRun = nullptr;
  const JsonValue* object = nullptr;
  const JsonValue* oldObject = nullptr;

  explicit RequestMembers(const JsonValue* request) {
    if (!isObject(request)) return;
    const std::pair<std::string_view, const JsonValue**> wanted[] = {{"uid", &uid},
                                                                     {"kind", &kind},
                                                                     {"subResource", &subResource},
                                                                     {"namespace", &namespaceName},
                                                                     {"name", &name},
                                                                     {"operation", &operation},
                                                                     {"dryRun", &dryRun},
                                                                     {"object", &object},
                                                                     {"oldObject", &oldObject}};
    for (const auto& entry : request->GetObject()) {
      const std::string_view key(entry.name.GetString(), entry.name.GetStringLength());
      for (const auto& [wantedKey, slot] : wanted) {
        if (key != wantedKey) continue;
        if (*slot == nullptr) *slot = &entry.value;
        break;
      }
    }
  }
};

}  // namespace

bool decodeAdmissionReview(std::string_view body, AdmissionRequest& request, DecodeError& error) {
  if (body.empty())
    return fail(error, "empty body: expected an admission.k8s.io/v1 AdmissionReview");
  JsonDocument& doc = request.document;
  std::string parseError = parseJsonCopy(body, kMaxJsonNesting, request.buffer, doc,
                                         &kManagedFields, maxJsonValues(body.size()));
  if (!parseError.empty()) return fail(error, std::move(parseError));
  if (!doc.IsObject()) return fail(error, "body is not a JSON object");

  const JsonValue* req = member(&doc, "request");
  const RequestMembers fields(req);
  const std::string_view uid = stringOf(fields.uid);
  // A review with a uid is answered with it, even when it cannot be read.
  const auto refuse = [&](std::string message) {
    if (!uid.empty() && uid.size() <= 256) error.uid = std::string(uid);
    return fail(error, std::move(message));
  };
  const std::string_view kind = stringMember(&doc, "kind");
  const std::string_view apiVersion = stringMember(&doc, "apiVersion");
  if (kind != "AdmissionReview") {
    return refuse("kind must be AdmissionReview, got \"" + std::string(kind.substr(0, 64)) + "\"");
  }
  if (apiVersion != "admission.k8s.io/v1") {
    return refuse("apiVersion must be admission.k8s.io/v1, got \"" +
                  std::string(apiVersion.substr(0, 64)) + "\"");
  }
  if (!isObject(req)) return refuse("request is missing or not an object");

  request.uid = uid;
  if (request.uid.empty()) return refuse("request.uid is missing or empty");
  if (request.uid.size() > 256) return refuse("request.uid is longer than 256 characters");

  const JsonValue* gvk = fields.kind;
  if (!isObject(gvk)) return refuse("request.kind is missing or not an object");
  request.subject.group = stringMember(gvk, "group");
  request.subject.version = stringMember(gvk, "version");
  request.subject.kindName = stringMember(gvk, "kind");
  if (request.subject.kindName.empty()) return refuse("request.kind.kind is missing");
  request.subject.subResource = stringOf(fields.subResource);
  request.subject.namespaceName = stringOf(fields.namespaceName);
  request.name = stringOf(fields.name);

  const std::string_view operation = stringOf(fields.operation);
  request.subject.operation = parseOperation(operation);
  if (request.subject.operation == Operation::Unknown) {
    return refuse("request.operation \"" + std::string(operation.substr(0, 32)) +
                  "\" is not CREATE, UPDATE, DELETE or CONNECT");
  }
  const JsonValue* dryRun = fields.dryRun;
  request.dryRun = dryRun != nullptr && dryRun->IsBool() && dryRun->GetBool();

  const JsonValue* object = fields.object;
  const JsonValue* oldObject = fields.oldObject;
  request.subject.object = object != nullptr && !object->IsNull() ? object : nullptr;
  request.subject.oldObject = oldObject != nullptr && !oldObject->IsNull() ? oldObject : nullptr;
  const bool needsObject = request.subject.operation == Operation::Create ||
                           request.subject.operation == Operation::Update;
  if (needsObject && request.subject.object == nullptr) {
    return refuse("request.object is missing for " + std::string(operation));
  }
  if (request.subject.object != nullptr && !request.subject.object->IsObject()) {
    return refuse("request.object is not a JSON object");
  }
  if (request.subject.oldObject != nullptr && !request.subject.oldObject->IsObject()) {
    return refuse("request.oldObject is not a JSON object");
  }
  if (request.subject.namespaceName.empty() && request.subject.object != nullptr) {
    request.subject.namespaceName =
        stringMember(member(request.subject.object, "metadata"), "namespace");
  }
  if (request.name.empty() && request.subject.object != nullptr) {
    request.name = stringMember(member(request.subject.object, "metadata"), "name");
  }
  return true;
}

AdmissionOutcome AdmissionOutcome::allowed(std::vector<std::string> warnings) {
  AdmissionOutcome outcome(Decision::Allowed, 200);
  outcome.warnings_ = std::move(warnings);
  return outcome;
}

AdmissionOutcome AdmissionOutcome::patched(std::string jsonPatch,
                                           std::vector<std::string> warnings) {
  if (jsonPatch.empty()) return allowed(std::move(warnings));
  AdmissionOutcome outcome(Decision::Patched, 200);
  outcome.patch_ = std::move(jsonPatch);
  outcome.warnings_ = std::move(warnings);
  return outcome;
}

AdmissionOutcome AdmissionOutcome::denied(std::string message, std::vector<std::string> warnings) {
  AdmissionOutcome outcome(Decision::Denied, 403);
  outcome.message_ = std::move(message);
  outcome.warnings_ = std::move(warnings);
  return outcome;
}

AdmissionOutcome AdmissionOutcome::badRequest(std::string message) {
  AdmissionOutcome outcome(Decision::Errored, 400);
  outcome.message_ = std::move(message);
  return outcome;
}

AdmissionOutcome AdmissionOutcome::internalError(std::string message) {
  AdmissionOutcome outcome(Decision::Errored, 500);
  outcome.message_ = std::move(message);
  return outcome;
}

AdmissionOutcome AdmissionOutcome::refusedByTransport(int httpStatus, std::string message) {
  const bool isError = httpStatus >= 400 && httpStatus <= 599;
  AdmissionOutcome outcome(Decision::Errored, isError ? httpStatus : 400);
  outcome.message_ = std::move(message);
  return outcome;
}

void AdmissionOutcome::setAuditAnnotations(std::vector<AuditAnnotation> annotations) {
  if (decision_ != Decision::Errored) auditAnnotations_ = std::move(annotations);
}

namespace {

// Calls `visit` with each line fitWarnings keeps, in order: a view of the
// warning itself when it is short enough, so that encoding copies nothing.
template <typename Visit>
void forEachFittedWarning(const std::vector<std::string>& warnings, size_t budget, Visit&& visit) {
  // Room for the closing line, "aiadmit: N more warnings not shown", which
  // always survives: N has at most 20 digits.
  constexpr size_t kSummaryRoom = 64;
  const size_t linesBudget = budget > kSummaryRoom ? budget - kSummaryRoom : 0;
  size_t total = 0;
  std::string cut;
  for (size_t i = 0; i < warnings.size(); ++i) {
    std::string_view line = warnings[i];
    if (line.size() > kMaxWarningLength) {
      cut = cutAtUtf8(line, kMaxWarningLength);
      line = cut;
    }
    // The last line needs no room for a summary after it.
    const bool last = i + 1 == warnings.size();
    if (total + line.size() > (last ? budget : linesBudget)) {
      visit(warningLine(std::to_string(warnings.size() - i) + " more warnings not shown"));
      return;
    }
    total += line.size();
    visit(line);
  }
}

}  // namespace

std::vector<std::string> fitWarnings(const std::vector<std::string>& warnings, size_t budget) {
  std::vector<std::string> out;
  forEachFittedWarning(warnings, budget, [&](std::string_view line) { out.emplace_back(line); });
  return out;
}

// Written directly, not through a RapidJSON Writer: the answer is small and
// fixed in shape, and escaping its text a run at a time rather than a byte at
// a time is most of its cost. The bytes are the Writer's (golden answers
// hold them).
std::string encodeAdmissionResponse(std::string_view uid, const AdmissionOutcome& outcome) {
  // Room for what is known to go in, so that the answer is allocated once.
  size_t expected =
      256 + uid.size() + (outcome.patch().size() + 2) / 3 * 4 + outcome.message().size() * 2;
  for (const std::string& warning : outcome.warnings()) expected += warning.size() + 4;
  for (const AuditAnnotation& annotation : outcome.auditAnnotations()) {
    expected += annotation.key.size() + annotation.value.size() + 6;
  }
  std::string out;
  out.reserve(expected);
  out += R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":)";
  appendJsonString(out, uid);
  out += outcome.isAllowed() ? R"(,"allowed":true)" : R"(,"allowed":false)";
  if (outcome.decision() == Decision::Patched) {
    // Base64 needs no escaping.
    out += R"(,"patchType":"JSONPatch","patch":")";
    appendBase64(out, outcome.patch());
    out.push_back('"');
  }
  if (!outcome.warnings().empty()) {
    out += R"(,"warnings":[)";
    bool first = true;
    forEachFittedWarning(outcome.warnings(), kWarningsBudgetPerEndpoint,
                         [&](std::string_view warning) {
                           if (!first) out.push_back(',');
                           first = false;
                           appendJsonString(out, warning);
                         });
    out.push_back(']');
  }
  if (!outcome.auditAnnotations().empty()) {
    out += R"(,"auditAnnotations":{)";
    bool first = true;
    for (const AuditAnnotation& annotation : outcome.auditAnnotations()) {
      if (!first) out.push_back(',');
      first = false;
      appendJsonString(out, annotation.key);
      out.push_back(':');
      appendJsonString(out, annotation.value);
    }
    out.push_back('}');
  }
  if (!outcome.isAllowed()) {
    out += R"(,"status":{"code":)";
    out += std::to_string(outcome.code());
    out += R"(,"reason":)";
    appendJsonString(out, statusReason(outcome.code()));
    out += R"(,"message":)";
    appendJsonString(out, outcome.message());
    out.push_back('}');
  }
  out += "}}";
  return out;
}

const char* statusReason(int code) {
  switch (code) {
    case 403:
      return "Forbidden";
    case 408:
      return "Timeout";
    case 413:
      return "RequestEntityTooLarge";
    case 503:
      return "ServiceUnavailable";
    default:
      return code >= 500 ? "InternalError" : "BadRequest";
  }
}

}  // namespace aiadmit
