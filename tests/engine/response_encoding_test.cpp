// encodeAdmissionResponse writes its answer without RapidJSON's Writer: the
// bytes must be the Writer's all the same, for every outcome and for text
// that needs escaping (quotes, backslashes, control characters, NUL, UTF-8).
#include <gtest/gtest.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string>
#include <vector>

#include "webhook/codec/base64.h"
#include "webhook/engine/admission.h"

namespace aiadmit {
namespace {

void writeString(rapidjson::Writer<rapidjson::StringBuffer>& writer, std::string_view text) {
  writer.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
}

// The answer as RapidJSON's Writer writes it: the order and the members
// encodeAdmissionResponse documents.
std::string writtenByRapidJson(std::string_view uid, const AdmissionOutcome& outcome) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.StartObject();
  writer.Key("apiVersion");
  writer.String("admission.k8s.io/v1");
  writer.Key("kind");
  writer.String("AdmissionReview");
  writer.Key("response");
  writer.StartObject();
  writer.Key("uid");
  writeString(writer, uid);
  writer.Key("allowed");
  writer.Bool(outcome.isAllowed());
  if (outcome.decision() == Decision::Patched) {
    writer.Key("patchType");
    writer.String("JSONPatch");
    writer.Key("patch");
    writeString(writer, base64Encode(outcome.patch()));
  }
  if (!outcome.warnings().empty()) {
    writer.Key("warnings");
    writer.StartArray();
    for (const std::string& warning : fitWarnings(outcome.warnings())) {
      writeString(writer, warning);
    }
    writer.EndArray();
  }
  if (!outcome.auditAnnotations().empty()) {
    writer.Key("auditAnnotations");
    writer.StartObject();
    for (const AuditAnnotation& annotation : outcome.auditAnnotations()) {
      writeString(writer, annotation.key);
      writeString(writer, annotation.value);
    }
    writer.EndObject();
  }
  if (!outcome.isAllowed()) {
    writer.Key("status");
    writer.StartObject();
    writer.Key("code");
    writer.Int(outcome.code());
    writer.Key("reason");
    writer.String(statusReason(outcome.code()));
    writer.Key("message");
    writeString(writer, outcome.message());
    writer.EndObject();
  }
  writer.EndObject();
  writer.EndObject();
  return {buffer.GetString(), buffer.GetSize()};
}

// Every byte that is escaped, and some that are not.
std::string awkwardText() {
  std::string text =
      "quote \" backslash \\ slash / tab \t newline \n caf\xC3\xA9 \xE4\xB8\xAD del ";
  for (int c = 0; c < 0x20; ++c) text.push_back(static_cast<char>(c));
  text.push_back('\x7f');
  text.push_back('\xff');
  return text;
}

TEST(ResponseEncoding, EveryOutcomeIsWrittenAsRapidJsonsWriterWritesIt) {
  const std::string text = awkwardText();
  std::vector<std::string> warnings = {"aiadmit: plain", text, std::string(300, 'w')};
  for (int i = 0; i < 60; ++i)
    warnings.push_back("aiadmit: line " + std::to_string(i) + " " + text);
  std::vector<AdmissionOutcome> outcomes = {
      AdmissionOutcome::allowed(),
      AdmissionOutcome::allowed({"aiadmit: one warning"}),
      AdmissionOutcome::allowed(warnings),
      AdmissionOutcome::patched(R"([{"op":"add","path":"/a","value":"x"}])", {text}),
      AdmissionOutcome::patched(std::string(1000, 'p') + text, warnings),
      AdmissionOutcome::denied("[AIA004] x: y; z " + text, {text}),
      AdmissionOutcome::badRequest("malformed JSON at offset 3: " + text),
      AdmissionOutcome::internalError("internal error: " + text),
      AdmissionOutcome::refusedByTransport(413, "too large"),
      AdmissionOutcome::refusedByTransport(408, "slow"),
      AdmissionOutcome::refusedByTransport(503, "busy"),
      AdmissionOutcome::refusedByTransport(431, "headers"),
  };
  outcomes[1].setAuditAnnotations({{"class", "realtime"}, {"profile", text}});
  outcomes[3].setAuditAnnotations({{"mutated", "tolerations,nodeSelector"}});
  outcomes[5].setAuditAnnotations({{"rules", "AIA004=deny"}, {text, text}});
  for (const std::string& uid :
       {std::string("fbeb1f36-14d3-4562-a099-b9c52a1b3b4d"), std::string(), text}) {
    for (const AdmissionOutcome& outcome : outcomes) {
      EXPECT_EQ(encodeAdmissionResponse(uid, outcome), writtenByRapidJson(uid, outcome));
    }
  }
}

}  // namespace
}  // namespace aiadmit
