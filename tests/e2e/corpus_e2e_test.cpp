// Every manifest of ../shared/corpus, applied with kubectl in an opted-in
// namespace of the real API server, against what `aiadmit check` says of it
// with a snapshot of the same cluster:
//   - admitted: the stored object is exactly what the API server stores for
//     the object `check -o yaml` prints, created where aiadmit is not called
//     (so defaulting, CRD pruning and CRD defaulting are the API server's on
//     both sides), each change aiadmit reports prints as `Warning: aiadmit:
//     ...`, and a second `kubectl apply` says `unchanged`;
//   - denied: kubectl prints the webhook's refusal with check's message,
//     each rule ID of it documented in docs/rules.md;
//   - refused by the API server itself (a CRD's schema, an unknown field):
//     the same refusal as check's object gets where aiadmit is not called.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "tests/e2e/support/e2e_cluster.h"
#include "webhook/cluster/cluster_snapshot.h"

namespace aiadmit::e2e {
namespace {

// An object made with metadata.generateName, without what its generated name
// put in it: the name, and for a Job the job-name labels the API server gives
// its Pod template (created again, it gets another name, and labels naming
// the first one are refused).
void forgetGeneratedName(json& object) {
  object["metadata"].erase("name");
  const json::json_pointer path("/spec/template/metadata/labels");
  if (object.value("kind", "") != "Job" || !object.contains(path)) return;
  json& labels = object[path];
  labels.erase("job-name");
  labels.erase("batch.kubernetes.io/job-name");
}

std::vector<std::string> corpusFiles() {
  std::vector<std::string> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(testing::corpusDir() + "/manifests")) {
    files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The file's objects as kubectl reads them (a stream of JSON objects), each
// without a namespace of its own so that it lands in the test's namespace;
// `unreadable` gets kubectl's error when it cannot read them (a kind no CRD
// of the cluster serves).
std::vector<json> objectsOf(const std::string& path, std::string& unreadable) {
  const CommandResult read = kubectl({"create", "--dry-run=client", "-o", "json", "-f", path});
  std::vector<json> objects;
  if (read.exitCode != 0) {
    unreadable = read.err;
    return objects;
  }
  for (json object : jsonObjects(read.out)) {
    object["metadata"].erase("namespace");
    objects.push_back(std::move(object));
  }
  return objects;
}

// What kubectl printed after `error when creating "STDIN": `, the API
// server's own words, with the namespace the test made replaced.
std::string refusal(const std::string& err, const std::string& namespaceName) {
  const std::string marker = "error when creating \"STDIN\": ";
  const size_t at = err.find(marker);
  std::string text = at == std::string::npos ? err : err.substr(at + marker.size());
  for (size_t found; (found = text.find(namespaceName)) != std::string::npos;) {
    text.replace(found, namespaceName.size(), "NAMESPACE");
  }
  return text;
}

bool documentedRule(const std::string& rule) {
  static const std::string rules = testing::readFile(testing::sourceDir() + "/docs/rules.md");
  return rules.find("### " + rule + " ") != std::string::npos;
}

struct CheckAnswer {
  json record;            // the object's entry of `check -o json`; null when skipped
  std::string predicted;  // `check -o yaml`: the object as it would be stored
};

CheckAnswer check(const std::string& snapshot, const std::string& namespaceName,
                  const json& object) {
  CheckAnswer answer;
  const std::vector<std::string> base = {
      testing::binaryPath(), "check", "--cluster", snapshot, "-n", namespaceName};
  std::vector<std::string> asJson = base, asYaml = base;
  asJson.insert(asJson.end(), {"-o", "json", "-"});
  asYaml.insert(asYaml.end(), {"-o", "yaml", "-"});
  const CommandResult decided = testing::runCommand(asJson, toText(object));
  EXPECT_NE(decided.exitCode, 2) << decided.err;
  const json report = json::parse(decided.out, nullptr, false);
  if (!report.is_discarded() && !report["objects"].empty()) answer.record = report["objects"][0];
  answer.predicted = testing::runCommand(asYaml, toText(object)).out;
  return answer;
}

class E2eCorpus : public ::testing::TestWithParam<std::string> {};

void expectDenied(const CheckAnswer& answer, const CommandResult& applied) {
  EXPECT_NE(applied.exitCode, 0) << "admitted, though check denies it";
  EXPECT_NE(applied.err.find("admission webhook \"applied.validate.aiadmit.dev\" denied the "
                             "request: " +
                             answer.record["message"].get<std::string>()),
            std::string::npos)
      << "kubectl printed:\n"
      << applied.err << "\ncheck says:\n"
      << answer.record["message"];
  for (const json& denial : answer.record["denials"]) {
    const std::string rule = denial["rule"];
    EXPECT_NE(applied.err.find("[" + rule + "]"), std::string::npos) << rule;
    EXPECT_TRUE(documentedRule(rule)) << rule << " has no section in docs/rules.md";
  }
}

void expectWarnings(const CheckAnswer& answer, const CommandResult& applied) {
  const std::vector<std::string> printed = aiadmitWarnings(applied.err);
  auto printedStartingWith = [&](const std::string& text) {
    return std::any_of(printed.begin(), printed.end(),
                       [&](const std::string& line) { return line.rfind(text, 0) == 0; });
  };
  if (answer.record.value("class", "none") != "none") {
    EXPECT_TRUE(printedStartingWith("aiadmit: class " + answer.record["class"].get<std::string>()))
        << applied.err;
  }
  for (const json& change : answer.record["injected"]) {
    EXPECT_TRUE(printedStartingWith("aiadmit: " + change.get<std::string>()))
        << "no warning for \"" << change.get<std::string>() << "\" in:\n"
        << applied.err;
  }
}

// The webhook asks the API whether a claim template the workload names
// exists, which a snapshot does not say (check leaves such a claim unknown):
// where the API says no, it records the workload's class alone
// (docs/rules.md, "DRA claim objects"). That record, and nothing else, may
// be beyond what check predicted.
bool recordedPendingClaims(const CheckAnswer& answer, const CommandResult& applied) {
  if (answer.record.is_null() || answer.record.value("class", "none") != "none") return false;
  const std::vector<std::string> printed = aiadmitWarnings(applied.err);
  return std::any_of(printed.begin(), printed.end(), [](const std::string& line) {
    return line.find("its Pods get their pool once the claim templates exist") != std::string::npos;
  });
}

// `object` without aiadmit's class record wherever annotations hold it.
void forgetClassRecord(json& object) {
  if (!object.is_object()) return;
  for (auto it = object.begin(); it != object.end();) {
    if (it.key() == "annotations" && it->is_object()) {
      it->erase("aiadmit.dev/class");
      if (it->empty()) {
        it = object.erase(it);
        continue;
      }
    } else {
      forgetClassRecord(*it);
    }
    ++it;
  }
}

// kubectl's word for an object in its output: created, configured,
// unchanged, or "" when it printed none.
std::string outcome(const std::string& out, const std::string& name) {
  const size_t at = out.find(name + " ");
  if (at == std::string::npos) return "";
  const size_t from = at + name.size() + 1;
  return out.substr(from, out.find_first_of(" \n", from) - from);
}

// Applies `object` in `namespaceName` as its documentation says to: `kubectl
// apply`, or `kubectl create` for one that has only a generateName.
CommandResult applyAsDocumented(const json& object, const std::string& namespaceName) {
  const bool generated = !object["metadata"].contains("name");
  return kubectl({generated ? "create" : "apply", "-n", namespaceName, "-o", "json", "-f", "-"},
                 toText(object));
}

// One object of a corpus file: first where aiadmit is not called (what the
// API server stores of it is what it hands a webhook: defaulted, with its
// admission plugins' changes), then in the opted-in namespace.
struct Namespaces {
  Namespace optedIn{"corpus"};
  Namespace plain{"corpus-plain", /*optedIn=*/false};
  Namespace reference{"corpus-reference", /*optedIn=*/false};
};

void expectAsCheckSays(const json& object, const Namespaces& namespaces,
                       const std::string& snapshot) {
  const Namespace& optedIn = namespaces.optedIn;
  const Namespace& plain = namespaces.plain;
  const CommandResult plainApplied = applyAsDocumented(object, plain.name());
  const CommandResult applied = applyAsDocumented(object, optedIn.name());
  if (plainApplied.exitCode != 0) {
    // Refused by the API server itself (an unknown field, a CRD's schema):
    // aiadmit makes no difference to that.
    EXPECT_NE(applied.exitCode, 0) << "stored, though the API server refuses it without aiadmit";
    EXPECT_EQ(refusal(applied.err, optedIn.name()), refusal(plainApplied.err, plain.name()));
    return;
  }
  json handed = withoutServerFields(json::parse(plainApplied.out));
  const bool generated = !object["metadata"].contains("name");
  if (generated) forgetGeneratedName(handed);
  const CheckAnswer answer = check(snapshot, optedIn.name(), handed);
  const bool judged = !answer.record.is_null();
  if (judged && !answer.record["admitted"].get<bool>()) {
    expectDenied(answer, applied);
    return;
  }
  // What the API server stores of check's object where aiadmit is not called.
  const CommandResult expected = kubectl(
      {"create", "--dry-run=server", "-n", namespaces.reference.name(), "-o", "json", "-f", "-"},
      judged ? answer.predicted : toText(handed));
  ASSERT_EQ(expected.exitCode, 0) << expected.err;
  ASSERT_EQ(applied.exitCode, 0) << applied.err;
  if (judged) expectWarnings(answer, applied);
  json stored = json::parse(applied.out);
  if (generated) forgetGeneratedName(stored);
  json comparedStored = stored;
  if (recordedPendingClaims(answer, applied)) forgetClassRecord(comparedStored);
  json wanted = json::parse(expected.out);
  if (generated) forgetGeneratedName(wanted);
  EXPECT_EQ(withoutServerFields(comparedStored), withoutServerFields(wanted))
      << "stored:\n"
      << withoutServerFields(comparedStored).dump(1)
      << "\ncheck's object, stored without aiadmit:\n"
      << withoutServerFields(wanted).dump(1);
  if (generated) return;  // `kubectl create` again makes another one

  // A second apply changes nothing, and kubectl says of it what it says
  // where aiadmit is not called (it reports "configured" for a quantity
  // written as a number, which the API server stores as a string).
  const std::string name = kubectlName(object);
  const CommandResult plainAgain =
      kubectl({"apply", "-n", plain.name(), "-f", "-"}, toText(object));
  const CommandResult again = kubectl({"apply", "-n", optedIn.name(), "-f", "-"}, toText(object));
  ASSERT_EQ(again.exitCode, 0) << again.err;
  // kubectl replaces some lists whole: a custom resource's (a JSON merge
  // patch), a Pod spec's tolerations. Where aiadmit added to such a list the
  // file has (a toleration beside the file's own, a /dev/shm mount in a
  // container), kubectl sends the file's list again, aiadmit writes back
  // what it wrote at creation, and kubectl says "configured" of an object
  // that ends as it was, which the checks below hold it to.
  const bool writtenBack =
      outcome(again.out, name) == "configured" && !aiadmitWarnings(again.err).empty();
  if (!writtenBack) {
    EXPECT_EQ(outcome(again.out, name), outcome(plainAgain.out, name)) << again.out << again.err;
  }
  // Controllers write status meanwhile (the scheduler binds a Pod, a Job
  // starts), so the resourceVersion moves; the object itself must not, but
  // for what the same apply changes where aiadmit is not called: another
  // webhook's round trip through its Go types (Kueue's adds and drops empty
  // objects in a RayJob), which then makes kubectl's merge of a custom
  // resource's lists replace them (an empty template metadata there is
  // dropped; here it holds aiadmit's stamps, and stays).
  const json after = kubectlJson({"get", "-n", optedIn.name(), name});
  const json plainStored = json::parse(plainApplied.out);
  const json plainAfter = kubectlJson({"get", "-n", plain.name(), name});
  const json changed = json::diff(withoutServerFields(stored), withoutServerFields(after));
  const json changedWithout =
      json::diff(withoutServerFields(plainStored), withoutServerFields(plainAfter));
  for (const json& change : changed) {
    EXPECT_NE(std::find(changedWithout.begin(), changedWithout.end(), change), changedWithout.end())
        << "the second apply changed the object: " << change.dump()
        << "\nwhere aiadmit is not called it changed: " << changedWithout.dump();
  }
  EXPECT_EQ(after["metadata"].value("generation", 0) - stored["metadata"].value("generation", 0),
            plainAfter["metadata"].value("generation", 0) -
                plainStored["metadata"].value("generation", 0));
}

TEST_P(E2eCorpus, StoredAsCheckSaysWarnedRefusedAndUnchangedOnReapply) {
  const std::string path = testing::corpusDir() + "/manifests/" + GetParam();
  const Namespaces namespaces;
  const Namespace& optedIn = namespaces.optedIn;
  testing::TempDir work;
  ASSERT_TRUE(writeClusterSnapshot(work.file("cluster.yaml")));

  std::string unreadable;
  const std::vector<json> objects = objectsOf(path, unreadable);
  if (objects.empty()) {
    // A kind the cluster does not serve (no CRD): kubectl cannot apply it,
    // and check judges nothing in it.
    EXPECT_NE(unreadable.find("no matches for kind"), std::string::npos) << unreadable;
    const CommandResult applied = kubectl({"apply", "-n", optedIn.name(), "-f", path});
    EXPECT_NE(applied.err.find("no matches for kind"), std::string::npos) << applied.err;
    const CommandResult checked =
        testing::runCommand({testing::binaryPath(), "check", "-o", "json", path});
    const json report = json::parse(checked.out, nullptr, false);
    ASSERT_FALSE(report.is_discarded()) << checked.out << checked.err;
    EXPECT_TRUE(report["objects"].empty()) << checked.out;
    return;
  }
  for (const json& object : objects) {
    SCOPED_TRACE(kubectlName(object));
    expectAsCheckSays(object, namespaces, work.file("cluster.yaml"));
  }
}

INSTANTIATE_TEST_SUITE_P(Manifests, E2eCorpus, ::testing::ValuesIn(corpusFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(0, info.param.rfind('.'));
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace aiadmit::e2e
