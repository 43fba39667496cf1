// `aiadmit check` as the tests run it: with the shipped profiles, arguments
// and stdin, and the manifests the exit-code and input tests feed it.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "tests/support/test_support.h"
#include "webhook/codec/json.h"

namespace aiadmit::testing {

inline std::string shippedProfilesDir() {
  return sourceDir() + "/profiles";
}

// `aiadmit check --profiles <shipped> ARGS...` with `input` on stdin.
inline CommandResult check(std::vector<std::string> args, const std::string& input = "") {
  std::vector<std::string> argv = {binaryPath(), "check", "--profiles", shippedProfilesDir()};
  argv.insert(argv.end(), args.begin(), args.end());
  return runCommand(argv, input);
}

inline std::string str(const JsonValue* value) {
  return std::string(stringOf(value));
}

inline std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

inline constexpr char kAdmittedJob[] = R"(apiVersion: batch/v1
kind: Job
metadata:
  name: finetune
  annotations:
    aiadmit.dev/workload: training
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: trainer
          image: trainer:1.0
          resources:
            limits:
              nvidia.com/gpu: 1
)";

inline constexpr char kDeniedPod[] = R"(apiVersion: v1
kind: Pod
metadata:
  name: typo
spec:
  restartPolicy: Never
  containers:
    - name: main
      image: main:1.0
      resources:
        limits:
          nvidia.com/gpus: 1
)";

// A mapping value where a key was expected: line 5, column 11.
inline constexpr char kBrokenYaml[] = R"(apiVersion: v1
kind: Pod
metadata:
  name: broken
    labels: x
spec: {}
)";

}  // namespace aiadmit::testing
