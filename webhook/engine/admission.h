// admission.k8s.io/v1 AdmissionReview: decoding the request and the named
// outcomes a webhook can answer with.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "webhook/codec/json.h"
#include "webhook/codec/json_parse.h"
#include "webhook/codec/warnings.h"
#include "webhook/model/workload.h"

namespace aiadmit {

// What an admission is about, whether it came in a review or from a file.
struct AdmissionSubject {
  const JsonValue* object = nullptr;     // null for DELETE
  const JsonValue* oldObject = nullptr;  // set on UPDATE and DELETE
  // The object's API group, version and kind: the workload-type table's key.
  std::string_view group;
  std::string_view version;
  std::string_view kindName;
  std::string_view namespaceName;
  std::string_view subResource;
  Operation operation = Operation::Create;
  // Whether the object's controlling ownerReference may be believed. The
  // API server calls the controller's paths (/mutate, /validate) only when
  // the request comes from an identity that controls the owner's kind (the
  // install's list of controllers); on the applied paths the owner may be
  // one anyone wrote, and the object is judged as a person's.
  bool ownerTrusted = true;

  // An object read from a file, as a CREATE in `namespaceName`: its group,
  // version and kind from its own apiVersion and kind.
  static AdmissionSubject ofObject(const JsonValue& object, std::string_view namespaceName);
};

// A decoded request. It owns the body's copy and the parsed document; the
// views point into them.
struct AdmissionRequest {
  // The body, parsed in place: the document's strings point into it.
  std::string buffer;
  JsonDocument document;
  std::string_view uid;
  std::string_view name;
  bool dryRun = false;
  AdmissionSubject subject;  // its operation as the review names it
};

// Nesting deeper than this is refused before parsing (real objects stay far below).
inline constexpr size_t kMaxJsonNesting = 200;
// A review's document holds at most this many values (400 past it): the API
// server's JSON takes about 25 bytes a value, and a value costs the document
// and its parse stack 16 to 64 bytes, so that a review of values as small as
// JSON allows ("[1,1,...]") costs 14 times its size rather than 43.
// No body under 128 KiB comes near it.
inline size_t maxJsonValues(size_t bodyBytes) {
  return bodyBytes / 6 + 65536;
}

struct DecodeError {
  std::string message;
  std::string uid;  // when the body was a review with a uid, to answer it
};

// Parses an AdmissionReview body. On failure returns false and fills `error`;
// it never throws and never trusts the body's shape.
bool decodeAdmissionReview(std::string_view body, AdmissionRequest& request, DecodeError& error);

// An entry of response.auditAnnotations. The API server records it in the
// request's audit event under "<webhook name>/<key>", and drops it (with a
// log line) unless that whole key is a qualified name: a DNS subdomain, one
// '/', then at most 63 of [-A-Za-z0-9_.] starting and ending alphanumeric.
struct AuditAnnotation {
  std::string key;
  std::string value;
  bool operator==(const AuditAnnotation&) const = default;
};

enum class Decision { Allowed, Patched, Denied, Errored };
std::string_view decisionName(Decision decision);

// What the webhook answers. Built only through the named constructors.
class AdmissionOutcome {
 public:
  static AdmissionOutcome allowed(std::vector<std::string> warnings = {});
  static AdmissionOutcome patched(std::string jsonPatch, std::vector<std::string> warnings);
  static AdmissionOutcome denied(std::string message, std::vector<std::string> warnings = {});
  // Bad input (400) or a failure of our own (500): not a policy decision.
  static AdmissionOutcome badRequest(std::string message);
  static AdmissionOutcome internalError(std::string message);
  // A request the transport refused before its review was read (408, 413,
  // 414, 431, 503): the review's status carries the same code as the answer.
  static AdmissionOutcome refusedByTransport(int httpStatus, std::string message);

  Decision decision() const { return decision_; }
  bool isAllowed() const {
    return decision_ == Decision::Allowed || decision_ == Decision::Patched;
  }
  const std::string& patch() const { return patch_; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  const std::string& message() const { return message_; }
  const std::vector<AuditAnnotation>& auditAnnotations() const { return auditAnnotations_; }
  // What was decided, for the audit log; ignored on errors, which decide nothing.
  void setAuditAnnotations(std::vector<AuditAnnotation> annotations);
  int code() const { return code_; }
  // HTTP status of the answer: 200 for decisions, 400/500 for errors so that
  // the API server applies the webhook's failurePolicy to our failures.
  int httpStatus() const { return decision_ == Decision::Errored ? code_ : 200; }

 private:
  AdmissionOutcome(Decision decision, int code) : decision_(decision), code_(code) {}
  Decision decision_;
  int code_;
  std::string patch_;
  std::string message_;
  std::vector<std::string> warnings_;
  std::vector<AuditAnnotation> auditAnnotations_;
};

// Serialises the response AdmissionReview for `uid`.
std::string encodeAdmissionResponse(std::string_view uid, const AdmissionOutcome& outcome);
// metav1.StatusReason for a status code, as the API server names them.
const char* statusReason(int code);

// The API server keeps kMaxWarningsTotal characters of warnings per request,
// from every webhook that answers it together. aiadmit answers twice (/mutate
// and /validate): each keeps to a fixed half, so both fit.
inline constexpr size_t kWarningsBudgetPerEndpoint = kMaxWarningsTotal / 2;

// Warnings trimmed to one endpoint's share: each line at most 120 characters,
// the whole set, its closing "N more warnings not shown" line included, at
// most `budget` characters.
std::vector<std::string> fitWarnings(const std::vector<std::string>& warnings,
                                     size_t budget = kWarningsBudgetPerEndpoint);

}  // namespace aiadmit
