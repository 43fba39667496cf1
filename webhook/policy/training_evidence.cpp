#include "webhook/policy/training_evidence.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "webhook/codec/json_pointer.h"
#include "webhook/codec/text.h"

namespace aiadmit {

namespace {

using Words = std::vector<std::string>;

template <size_t N>
bool isOneOf(const std::string_view (&names)[N], std::string_view name) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

std::string_view baseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// ---- Command lines, split closely enough to what a shell does to find the
// program each simple command runs.

bool isSeparator(char c) {
  return c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '<' || c == '>' ||
         c == '`' || c == '\n';
}

struct Splitter {
  std::vector<Words> commands{1};
  std::string word;

  void endWord() {
    if (!word.empty()) commands.back().push_back(std::move(word));
    word.clear();
  }
  void endCommand() {
    endWord();
    if (!commands.back().empty()) commands.emplace_back();
  }
};

// The simple commands of `text` (a container's command and args, or a
// RayJob's entrypoint), each as its words. Quotes only group words, so they
// are dropped: the script of `bash -c "..."` is read as commands of its own.
// A comment runs to the end of its line; a backslash before a newline
// continues the command.
std::vector<Words> splitCommands(std::string_view text) {
  Splitter split;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
      split.endWord();
      ++i;
    } else if (c == '#' && split.word.empty()) {
      i = std::min(text.find('\n', i), text.size());
      split.endCommand();
    } else if (isSeparator(c)) {
      split.endCommand();
    } else if (std::isspace(static_cast<unsigned char>(c)) != 0 || c == '"' || c == '\'' ||
               c == '\\') {
      split.endWord();
    } else {
      split.word += c;
    }
  }
  split.endCommand();
  split.commands.pop_back();  // endCommand always leaves an empty one last
  return split.commands;
}

constexpr std::string_view kWrappers[] = {"exec", "nohup", "time", "env", "sudo", "command"};
constexpr std::string_view kShells[] = {"sh", "bash", "zsh", "dash", "ash"};

bool isAssignment(std::string_view word) {
  const size_t equals = word.find('=');
  return equals != std::string_view::npos && equals > 0 && word.front() != '-';
}

// The words from the program a command runs on: variable assignments and
// wrappers (exec, nohup, env...) are skipped, and so is a shell with its
// flags, whose script follows (`bash -xc "torchrun ..."` runs torchrun).
std::span<const std::string> programWords(const Words& words) {
  size_t i = 0;
  while (i < words.size()) {
    const std::string_view name = baseName(words[i]);
    if (isAssignment(words[i]) || isOneOf(kWrappers, name)) {
      ++i;
    } else if (isOneOf(kShells, name)) {
      for (++i; i < words.size() && words[i].starts_with('-');) ++i;
    } else {
      break;
    }
  }
  return std::span<const std::string>(words).subspan(i);
}

// ---- What one command runs.

// Launchers of distributed training, by the command that starts them, and
// what each is ("PyTorch's distributed launcher").
struct Launcher {
  std::string_view command;
  std::string_view what;
};
// Those that start the ranks of a GPU Pod from within it.
constexpr Launcher kRankLaunchers[] = {
    {"torchrun", "PyTorch's distributed launcher"},
    {"python -m torch.distributed.run", "PyTorch's distributed launcher"},
    {"python -m torch.distributed.launch", "PyTorch's distributed launcher"},
    {"deepspeed", "DeepSpeed's launcher"},
    {"accelerate launch", "Accelerate's launcher"}};
// Those that start the ranks over MPI from a Pod of their own, which asks
// for no GPU (an MPIJob's launcher, a Volcano Job's master).
constexpr Launcher kMpiLaunchers[] = {{"horovodrun", "Horovod's launcher"},
                                      {"mpirun", "an MPI launcher"},
                                      {"mpiexec", "an MPI launcher"}};

const Launcher* launcherIn(std::span<const Launcher> launchers, std::string_view command) {
  for (const Launcher& launcher : launchers) {
    if (launcher.command == command) return &launcher;
  }
  return nullptr;
}

const Launcher* launcherNamed(std::string_view command) {
  const Launcher* launcher = launcherIn(kRankLaunchers, command);
  return launcher != nullptr ? launcher : launcherIn(kMpiLaunchers, command);
}

bool isMpi(const Launcher& launcher) {
  return std::any_of(std::begin(kMpiLaunchers), std::end(kMpiLaunchers),
                     [&](const Launcher& mpi) { return &mpi == &launcher; });
}

constexpr std::string_view kLauncherFlags[] = {"--nnodes", "--nproc_per_node", "--nproc-per-node"};

// CLIs whose `train` subcommand is a training run (`axolotl train cfg.yml`).
constexpr std::string_view kTrainingClis[] = {"axolotl", "llamafactory-cli"};
// Model servers whose names hold none of the words below.
constexpr std::string_view kServers[] = {"vllm", "tritonserver", "ollama"};

// Words of a script's, a module's or a command's name that say training, and
// those that say it is something else: inference, evaluation, a benchmark.
constexpr std::string_view kTrainingWords[] = {"train",      "training", "trainer",     "finetune",
                                               "finetuning", "pretrain", "pretraining", "sft"};
constexpr std::string_view kOtherWorkWords[] = {
    "infer",      "inference",  "inferencing", "predict",    "prediction",  "predictions",
    "generate",   "generation", "chat",        "completion", "completions", "serve",
    "serving",    "server",     "eval",        "evaluate",   "evaluation",  "benchmark",
    "benchmarks", "bench",      "perf"};

// The lower-case runs of letters and digits of a name, with each pair that
// writes one word in two ("fine-tune") joined: "fine-tune-classifier.py" has
// fine, tune, finetune, classifier and py.
std::vector<std::string> nameWords(std::string_view name) {
  std::vector<std::string> words(1);
  for (const char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
      words.back() += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!words.back().empty()) {
      words.emplace_back();
    }
  }
  if (words.back().empty()) words.pop_back();
  const size_t parts = words.size();
  for (size_t i = 0; i + 1 < parts; ++i) words.push_back(words[i] + words[i + 1]);
  return words;
}

template <size_t N>
bool namesAnyOf(std::string_view name, const std::string_view (&vocabulary)[N]) {
  const std::vector<std::string> words = nameWords(name);
  return std::any_of(words.begin(), words.end(),
                     [&](const std::string& word) { return isOneOf(vocabulary, word); });
}

bool isScript(std::string_view word) {
  return word.ends_with(".py") || word.ends_with(".sh");
}

bool isPython(std::string_view command) {
  return command.starts_with("python");
}

// A subcommand: a plain word after the command (`train` of `axolotl train`).
bool isSubcommand(std::string_view word) {
  return !word.empty() && std::isalpha(static_cast<unsigned char>(word.front())) != 0 &&
         std::all_of(word.begin(), word.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
         });
}

struct Run {
  std::string_view command;  // the program's name: "torchrun", "python3", "train.sh"
  const Launcher* launcher = nullptr;
  std::string_view program;     // the script or module it runs: "train.py", "axolotl.cli.train"
  std::string_view subcommand;  // "train" of `axolotl train`
  std::string_view flag;        // a launcher's flag it passes: "--nnodes"
};

std::string_view moduleOf(std::span<const std::string> words) {
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] == "-m") return words[i + 1];
  }
  return {};
}

std::string_view firstScript(std::span<const std::string> words) {
  for (const std::string& word : words) {
    if (word.ends_with(".py")) return word;
  }
  return {};
}

std::string_view launcherFlag(std::span<const std::string> words) {
  for (const std::string& word : words) {
    for (const std::string_view flag : kLauncherFlags) {
      if (word == flag || (word.starts_with(flag) && word[flag.size()] == '=')) return flag;
    }
  }
  return {};
}

const Launcher* launcherOf(std::span<const std::string> words, std::string_view module) {
  const std::string_view command = baseName(words.front());
  if (command == "accelerate" && words.size() > 1 && words[1] == "launch") {
    return launcherNamed("accelerate launch");
  }
  if (isPython(command) && !module.empty()) {
    return launcherNamed("python -m " + std::string(module));
  }
  return launcherNamed(command);
}

// What a command runs: its program, the launcher it is, the script or module
// it starts (a python's, a launcher's; a script run as the command itself).
Run readRun(std::span<const std::string> words) {
  Run run;
  if (words.empty()) return run;
  run.command = baseName(words.front());
  const std::string_view module = moduleOf(words);
  run.launcher = launcherOf(words, module);
  // `python -m torch.distributed.run train.py` starts train.py, not its module.
  const bool moduleLaunches = launcherNamed("python -m " + std::string(module)) != nullptr;
  if (isScript(run.command)) {
    run.program = run.command;
  } else if (isPython(run.command) || run.launcher != nullptr) {
    run.program = firstScript(words);
    if (run.program.empty() && !moduleLaunches) run.program = module;
  }
  if (words.size() > 1 && isSubcommand(words[1])) run.subcommand = words[1];
  run.flag = launcherFlag(words);
  return run;
}

// Whether the command runs something named for inference, evaluation or a
// benchmark: a server, `vllm serve`, infer.py, example_chat_completion.py
// under torchrun, all_reduce_perf under mpirun.
bool runsOtherWork(const Run& run, std::span<const std::string> words) {
  if (isOneOf(kServers, run.command) || namesAnyOf(run.command, kOtherWorkWords)) return true;
  if (namesAnyOf(run.program, kOtherWorkWords) || namesAnyOf(run.subcommand, kOtherWorkWords)) {
    return true;
  }
  return std::any_of(words.begin(), words.end(),
                     [](const std::string& word) { return baseName(word).ends_with("_perf"); });
}

// Whether the command names a training run: its script, module or command
// says train, finetune, pretrain or sft, or a CLI's `train`.
bool namesTraining(const Run& run) {
  if (namesAnyOf(run.program, kTrainingWords)) return true;
  return isOneOf(kTrainingClis, run.command) && run.subcommand == "train";
}

// "train.py" (without its directory), "axolotl.cli.train", or a CLI's
// "axolotl train".
std::string programName(const Run& run) {
  if (isScript(run.program)) return std::string(baseName(run.program));
  if (!run.program.empty()) return std::string(run.program);
  return std::string(run.command) + " " + std::string(run.subcommand);
}

// Commands that only print: their words are text, not programs.
bool onlyPrints(const Run& run) {
  return run.command == "echo" || run.command == "printf";
}

// ---- What one command line shows.

struct CommandLine {
  std::vector<Words> commands;  // owns the words the runs point into
  std::vector<Run> runs;
  bool otherWork = false;  // some command runs inference, evaluation, a benchmark
};

CommandLine readCommandLine(std::string_view text) {
  CommandLine line;
  line.commands = splitCommands(text);
  for (const Words& words : line.commands) {
    const std::span<const std::string> program = programWords(words);
    const Run run = readRun(program);
    if (run.command.empty() || onlyPrints(run)) continue;
    line.otherWork = line.otherWork || runsOtherWork(run, program);
    line.runs.push_back(run);
  }
  return line;
}

// The first sign of training among a command line's runs: a launcher (an MPI
// one only where `mpiAllowed`), a launcher's flag, a training program.
std::optional<std::string> commandSign(const CommandLine& line, bool gpus, bool mpiAllowed) {
  if (line.otherWork) return std::nullopt;
  for (const Run& run : line.runs) {
    if (run.launcher != nullptr && (isMpi(*run.launcher) ? mpiAllowed : gpus)) {
      return "runs " + std::string(run.launcher->command) + " (" + std::string(run.launcher->what) +
             ")";
    }
  }
  for (const Run& run : line.runs) {
    if (gpus && !run.flag.empty()) {
      return "passes " + std::string(run.flag) + " (a distributed launcher's flag)";
    }
  }
  for (const Run& run : line.runs) {
    if (gpus && namesTraining(run)) return "runs " + programName(run) + " (a training program)";
  }
  return std::nullopt;
}

// ---- A container's own signs.

void appendStrings(const JsonValue* list, std::string& text) {
  if (list == nullptr || !list->IsArray()) return;
  for (const JsonValue& item : list->GetArray()) {
    if (!item.IsString()) continue;
    text += ' ';
    text += stringOf(&item);
  }
}

std::string commandText(const PodContainer& container) {
  std::string text;
  appendStrings(member(container.json, "command"), text);
  appendStrings(member(container.json, "args"), text);
  return text;
}

// PyTorch's distributed rendezvous, written into the manifest by hand where
// no operator sets it (a JobSet's, a Job's).
constexpr std::string_view kDistributedEnv[] = {"MASTER_ADDR", "WORLD_SIZE"};

std::optional<std::string> envSign(const PodContainer& container) {
  const JsonValue* env = member(container.json, "env");
  if (env == nullptr || !env->IsArray()) return std::nullopt;
  for (const JsonValue& variable : env->GetArray()) {
    const std::string_view name = stringMember(&variable, "name");
    if (isOneOf(kDistributedEnv, name)) {
      return "sets " + std::string(name) + " (PyTorch's distributed training)";
    }
  }
  return std::nullopt;
}

// Images made for training alone. Generic framework images (pytorch/pytorch,
// nvcr.io/nvidia/pytorch, NeMo's) serve models as often and are no sign.
constexpr std::string_view kTrainingImages[] = {"axolotlai/axolotl", "axolotlai/axolotl-cloud",
                                                "winglian/axolotl", "winglian/axolotl-cloud",
                                                "ghcr.io/kubeflow/trainer/torchtune-trainer"};

// The repository of an image reference, without tag, digest or Docker Hub's
// host: "axolotlai/axolotl" for "docker.io/axolotlai/axolotl:main-latest".
std::string_view imageRepository(std::string_view image) {
  image = image.substr(0, image.find('@'));
  const size_t colon = image.rfind(':');
  if (colon != std::string_view::npos && image.find('/', colon) == std::string_view::npos) {
    image = image.substr(0, colon);
  }
  for (const std::string_view hub : {"docker.io/", "index.docker.io/"}) {
    if (image.starts_with(hub)) image.remove_prefix(hub.size());
  }
  return image;
}

std::optional<std::string> imageSign(const PodContainer& container) {
  const std::string_view repository = imageRepository(stringMember(container.json, "image"));
  if (!isOneOf(kTrainingImages, repository)) return std::nullopt;
  return "runs image " + std::string(repository) + " (made for training)";
}

// "container trainer", "container node of workers" for a custom resource's.
std::string containerName(const PodTemplateView& view, const PodContainer& container) {
  std::string name = "container " + std::string(container.name);
  if (view.isCustomResource()) name += " of " + std::string(view.role());
  return name;
}

// A container's first sign: its command line's, then PyTorch's environment,
// then a training image; none from a container that also runs other work.
// `gpus`: its Pod asks for GPUs; `workloadGpus`: some Pod of the workload does.
std::optional<std::string> containerSign(const PodContainer& container, bool gpus,
                                         bool workloadGpus) {
  if (container.resourcesOnly || container.list != ContainerList::Containers) return std::nullopt;
  const CommandLine line = readCommandLine(commandText(container));
  if (line.otherWork) return std::nullopt;
  if (auto sign = commandSign(line, gpus, workloadGpus)) return sign;
  if (!gpus) return std::nullopt;
  if (auto sign = envSign(container)) return sign;
  return imageSign(container);
}

// ---- Signs of the workload as a whole.

// The command line a kind runs beside its templates (a RayJob's entrypoint
// runs on its cluster, whose templates only start Ray), from the kind's row.
std::optional<std::string> entrypointSign(const PodTemplateView& view) {
  if (view.type == nullptr || view.object == nullptr || view.type->entrypoint.empty()) {
    return std::nullopt;
  }
  const CommandLine line = readCommandLine(stringOf(valueAt(*view.object, view.type->entrypoint)));
  if (auto sign = commandSign(line, true, true)) return "its entrypoint " + *sign;
  return std::nullopt;
}

constexpr std::string_view kCoordinatorWords[] = {"master", "coordinator", "leader", "launcher",
                                                  "chief"};

bool isCoordinator(std::string_view role) {
  const std::string lower = lowercase(role);
  return std::any_of(std::begin(kCoordinatorWords), std::end(kCoordinatorWords),
                     [&](std::string_view word) { return lower.find(word) != std::string::npos; });
}

// Whether a container of the workload runs inference, evaluation or a benchmark.
bool anyOtherWork(std::span<const PodReader> pods) {
  return std::any_of(pods.begin(), pods.end(), [](const PodReader& pod) {
    return std::any_of(
        pod.containers().begin(), pod.containers().end(), [](const PodContainer& container) {
          return !container.resourcesOnly && readCommandLine(commandText(container)).otherWork;
        });
  });
}

// A coordinator template beside GPU templates of more than one Pod, as a
// JobSet's leader and its workers, or a Volcano Job's MPI master and its
// GPU workers: "a coordinator (leader) and 4 GPU Pods (workers)".
std::optional<std::string> coordinatorSign(std::span<const PodTemplateView> templates,
                                           std::span<const PodReader> pods) {
  const auto coordinator = std::find_if(templates.begin(), templates.end(), [](const auto& view) {
    return isCoordinator(view.role());
  });
  if (coordinator == templates.end()) return std::nullopt;
  int64_t gpuPods = 0;
  std::string workers;
  for (size_t i = 0; i < templates.size() && i < pods.size(); ++i) {
    const ResolvedTemplate* place = templates[i].place;
    if (&templates[i] == &*coordinator || !pods[i].asksForGpus() || place == nullptr ||
        !place->replicas) {
      continue;
    }
    gpuPods += *place->replicas;
    workers += (workers.empty() ? "" : ", ") + std::string(templates[i].role());
  }
  if (gpuPods < 2 || anyOtherWork(pods)) return std::nullopt;
  return "a coordinator (" + std::string(coordinator->role()) + ") and " + std::to_string(gpuPods) +
         " GPU Pods (" + workers + ")";
}

bool anyAsksForGpus(std::span<const PodReader> pods) {
  return std::any_of(pods.begin(), pods.end(),
                     [](const PodReader& pod) { return pod.asksForGpus(); });
}

}  // namespace

std::optional<std::string> trainingSign(std::span<const PodTemplateView> templates,
                                        std::span<const PodReader> pods) {
  const bool workloadGpus = anyAsksForGpus(pods);
  for (size_t i = 0; i < templates.size() && i < pods.size(); ++i) {
    const bool gpus = pods[i].asksForGpus();
    for (const PodContainer& container : pods[i].containers()) {
      if (auto sign = containerSign(container, gpus, workloadGpus)) {
        return containerName(templates[i], container) + " " + *sign;
      }
    }
  }
  if (!templates.empty()) {
    if (auto sign = entrypointSign(templates.front())) return sign;
  }
  return coordinatorSign(templates, pods);
}

}  // namespace aiadmit
