#include <iostream>
#include <string>
#include <string_view>

#include "webhook/cli/check.h"
#include "webhook/cli/cli.h"
#include "webhook/cli/explain.h"
#include "webhook/cli/workload_types.h"

namespace {

constexpr const char* kUsage = R"(aiadmit: Kubernetes admission webhook for AI and GPU workloads

Usage:
  aiadmit serve --profiles DIR --tls-cert FILE --tls-key FILE [--listen HOST:PORT]
                [--cluster-view auto|on|off] [--kubeconfig FILE]
  aiadmit review --profiles DIR [--validate] < review.json
  aiadmit check --profiles DIR [-o text|json|yaml] FILE_OR_DIR...
  aiadmit explain [--kubeconfig FILE | --cluster SNAPSHOT] [-n NS | -A] [-o text|json] [NAME...]
  aiadmit profiles lint [--cluster SNAPSHOT] DIR
  aiadmit profiles init (--kubeconfig FILE | --cluster SNAPSHOT) [--preset gke|eks|aks|gpu-operator] -o DIR
  aiadmit workload-types suggest [--webhook-patch FILE] CRD_FILE...
  aiadmit version

Run `aiadmit COMMAND --help` for the options of a command.
)";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string_view command = argv[1];
  const aiadmit::Arguments args(argv + 2, argv + argc);
  if (command == "serve") return aiadmit::serveCommand(args);
  if (command == "review") return aiadmit::reviewCommand(args);
  if (command == "check") return aiadmit::checkCommand(args);
  if (command == "explain") return aiadmit::explainCommand(args);
  if (command == "profiles") return aiadmit::profilesCommand(args);
  if (command == "workload-types") return aiadmit::workloadTypesCommand(args);
  if (command == "version" || command == "--version") {
    std::cout << "aiadmit " << AIADMIT_VERSION << "\n";
    return 0;
  }
  if (command == "-h" || command == "--help" || command == "help") {
    std::cout << kUsage;
    return 0;
  }
  std::cerr << "aiadmit: unknown command \"" << command << "\"\n\n" << kUsage;
  return 2;
}
