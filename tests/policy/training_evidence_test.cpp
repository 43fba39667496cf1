// Training told from batch by what the object runs (webhook/policy/
// training_evidence.h): each sign classifies a workload its kind makes batch
// as training, inferred, and its near miss (the same object without the
// sign, or running inference under the same launcher) stays batch.
#include "webhook/policy/training_evidence.h"

#include <gtest/gtest.h>

#include <string>

#include "mutators/mutator.h"
#include "tests/support/classify_harness.h"
#include "tests/support/golden_files.h"
#include "webhook/policy/workload_type_loader.h"

namespace aiadmit {
namespace {

using testing::Classified;
using testing::classifyYaml;

// A GPU Job whose one container has `fields` (YAML lines at the container's
// indentation: image, command, args, env).
std::string gpuJob(const std::string& fields, const std::string& annotations = "{}") {
  return R"(apiVersion: batch/v1
kind: Job
metadata: {name: run, annotations: )" +
         annotations + R"(}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        resources: {limits: {nvidia.com/gpu: 8}}
)" + fields;
}

void expectTraining(const Classified& result, const std::string& because) {
  EXPECT_EQ(className(result.classification().workloadClass), "training");
  EXPECT_EQ(result.classification().basis, ClassBasis::Evidence);
  EXPECT_FALSE(result.classification().declared());
  EXPECT_EQ(result.classification().reason,
            "inferred from what it runs: " + because + "; by its kind alone it would be batch");
}

void expectBatch(const Classified& result) {
  EXPECT_EQ(className(result.classification().workloadClass), "batch")
      << result.classification().reason;
  EXPECT_EQ(result.classification().basis, ClassBasis::Kind);
}

TEST(TrainingEvidence, TorchrunInAGpuContainerIsTraining) {
  expectTraining(classifyYaml(gpuJob("        image: nvcr.io/nvidia/pytorch:24.05-py3\n"
                                     "        command: [torchrun, --standalone, resnet.py]\n")),
                 "container trainer runs torchrun (PyTorch's distributed launcher)");
  // The same image running a script named for nothing in particular.
  expectBatch(
      classifyYaml(gpuJob("        image: nvcr.io/nvidia/pytorch:24.05-py3\n"
                          "        command: [python, resnet.py]\n")));
}

TEST(TrainingEvidence, EachLauncherIsTraining) {
  const std::pair<std::string, std::string> launchers[] = {
      {"[python, -m, torch.distributed.run, --standalone, main.py]",
       "python -m torch.distributed.run (PyTorch's distributed launcher)"},
      {"[python3, -m, torch.distributed.launch, main.py]",
       "python -m torch.distributed.launch (PyTorch's distributed launcher)"},
      {"[deepspeed, --num_gpus, '8', main.py, --deepspeed, ds.json]",
       "deepspeed (DeepSpeed's launcher)"},
      {"[accelerate, launch, --config_file, fsdp.yaml, main.py]",
       "accelerate launch (Accelerate's launcher)"},
      {"[horovodrun, -np, '8', python, main.py]", "horovodrun (Horovod's launcher)"},
      {"[mpirun, -np, '8', python, main.py]", "mpirun (an MPI launcher)"},
  };
  for (const auto& [command, named] : launchers) {
    SCOPED_TRACE(command);
    expectTraining(classifyYaml(gpuJob("        image: x\n        command: " + command + "\n")),
                   "container trainer runs " + named);
  }
}

TEST(TrainingEvidence, ALauncherStartingInferenceOrABenchmarkIsNoSign) {
  // Meta's Llama examples run chat completion under torchrun; nccl-tests run
  // under mpirun; DeepSpeed-Inference under deepspeed.
  for (const char* command :
       {"[torchrun, --nproc_per_node, '1', example_chat_completion.py, --ckpt_dir, llama/]",
        "[mpirun, -np, '8', /opt/nccl-tests/build/all_reduce_perf, -b, 8, -e, 8G]",
        "[deepspeed, --num_gpus, '2', inference.py]", "[accelerate, launch, eval_harness.py]"}) {
    SCOPED_TRACE(command);
    expectBatch(
        classifyYaml(gpuJob("        image: x\n        command: " + std::string(command) + "\n")));
  }
}

TEST(TrainingEvidence, ALauncherInAShellScriptIsFoundAfterItsShellAndWrappers) {
  // JobSet's PyTorch example: bash -xc, then torchrun with its flags.
  expectTraining(classifyYaml(gpuJob("        image: x\n"
                                     "        command: [bash, -xc, 'torchrun --nproc_per_node=1 "
                                     "--nnodes=2 resnet.py']\n")),
                 "container trainer runs torchrun (PyTorch's distributed launcher)");
  expectTraining(classifyYaml(gpuJob("        image: x\n"
                                     "        command: [/bin/sh, -c]\n"
                                     "        args:\n"
                                     "        - |\n"
                                     "          # torchrun needs the rendezvous first\n"
                                     "          pip install -r req.txt && \\\n"
                                     "            NCCL_DEBUG=INFO exec deepspeed main.py\n")),
                 "container trainer runs deepspeed (DeepSpeed's launcher)");
  // Installed, printed or commented, a launcher's name runs nothing.
  expectBatch(
      classifyYaml(gpuJob("        image: x\n"
                          "        command: [sh, -c, 'pip install deepspeed torchrun; "
                          "echo torchrun train.py; python main.py # not torchrun']\n")));
}

TEST(TrainingEvidence, TorchrunsFlagsAreASignInAWrapperScript) {
  expectTraining(
      classifyYaml(gpuJob("        image: x\n        command: [bash, run.sh, --nnodes, '4']\n")),
      "container trainer passes --nnodes (a distributed launcher's flag)");
  expectTraining(classifyYaml(gpuJob("        image: x\n        args: [--nproc-per-node=8]\n")),
                 "container trainer passes --nproc-per-node (a distributed launcher's flag)");
  expectBatch(
      classifyYaml(gpuJob("        image: x\n        command: [bash, run.sh, --n, '4']\n")));
}

TEST(TrainingEvidence, ATrainingProgramIsASign) {
  // The axolotl Job of GKE's samples runs its trainer as a module.
  expectTraining(
      classifyYaml(gpuJob(
          "        image: x\n"
          "        command: [/bin/bash, -c]\n"
          "        args: ['cd /workspace/axolotl && python -m axolotl.cli.train c.yaml']\n")),
      "container trainer runs axolotl.cli.train (a training program)");
  expectTraining(
      classifyYaml(gpuJob("        image: x\n        command: [python3, src/finetune_lora.py]\n")),
      "container trainer runs finetune_lora.py (a training program)");
  expectTraining(classifyYaml(gpuJob("        image: x\n        command: [./pretrain.sh]\n")),
                 "container trainer runs pretrain.sh (a training program)");
  expectTraining(
      classifyYaml(gpuJob("        image: x\n        command: [axolotl, train, c.yml]\n")),
      "container trainer runs axolotl train (a training program)");
  // Batch inference keeps the kind's batch.
  for (const char* command : {"[python, infer.py]", "[python, -m, vllm.entrypoints.cli.main]",
                              "[vllm, serve, meta-llama/Llama-3.1-8B]", "[python, main.py]",
                              "[axolotl, inference, c.yml]", "[python, batch_predict.py]"}) {
    SCOPED_TRACE(command);
    expectBatch(
        classifyYaml(gpuJob("        image: x\n        command: " + std::string(command) + "\n")));
  }
}

TEST(TrainingEvidence, AContainerThatAlsoRunsInferenceGivesNoSign) {
  expectBatch(
      classifyYaml(gpuJob("        image: x\n"
                          "        command: [sh, -c, 'python train.py && python evaluate.py']\n")));
}

TEST(TrainingEvidence, PyTorchsDistributedEnvironmentIsASign) {
  expectTraining(classifyYaml(gpuJob("        image: x\n"
                                     "        command: [python, main.py]\n"
                                     "        env: [{name: MASTER_ADDR, value: job-0.job}]\n")),
                 "container trainer sets MASTER_ADDR (PyTorch's distributed training)");
  expectBatch(
      classifyYaml(gpuJob("        image: x\n"
                          "        command: [python, main.py]\n"
                          "        env: [{name: MODEL, value: llama}]\n")));
  expectBatch(
      classifyYaml(gpuJob("        image: x\n"
                          "        command: [python, infer.py]\n"
                          "        env: [{name: WORLD_SIZE, value: '2'}]\n")));
}

TEST(TrainingEvidence, AnImageMadeForTrainingIsASignAndAFrameworksIsNot) {
  expectTraining(classifyYaml(gpuJob("        image: docker.io/axolotlai/axolotl:main-latest\n")),
                 "container trainer runs image axolotlai/axolotl (made for training)");
  expectTraining(
      classifyYaml(gpuJob("        image: ghcr.io/kubeflow/trainer/torchtune-trainer@sha256:0a\n")),
      "container trainer runs image ghcr.io/kubeflow/trainer/torchtune-trainer (made for "
      "training)");
  // The NVIDIA device plugin's shared PyTorch example: the framework's image
  // running main.py says nothing of what main.py does.
  for (const char* image :
       {"pytorch/pytorch", "nvcr.io/nvidia/pytorch:24.05-py3", "nvcr.io/nvidia/nemo:25.02"}) {
    SCOPED_TRACE(image);
    expectBatch(classifyYaml(
        gpuJob("        image: " + std::string(image) + "\n        command: [python, main.py]\n")));
  }
  expectBatch(
      classifyYaml(gpuJob("        image: axolotlai/axolotl:main-latest\n"
                          "        command: [python, -m, axolotl.cli.inference, c.yml]\n")));
}

// A Volcano Job as Volcano's MindSpore example writes it: an MPI master that
// asks for no GPU and GPU workers.
std::string volcanoMpiJob(const std::string& masterCommand, int workers) {
  return R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: mpi}
spec:
  minAvailable: 3
  schedulerName: volcano
  tasks:
  - replicas: 1
    name: mpimaster
    template:
      spec:
        restartPolicy: OnFailure
        containers:
        - name: mpimaster
          image: x
          command: [/bin/bash, -c, ')" +
         masterCommand + R"(']
  - replicas: )" +
         std::to_string(workers) +
         R"(
    name: mpiworker
    template:
      spec:
        restartPolicy: OnFailure
        containers:
        - name: mpiworker
          image: x
          command: [/bin/bash, -c, 'mkdir -p /var/run/sshd; /usr/sbin/sshd -D;']
          resources: {limits: {nvidia.com/gpu: '1'}}
)";
}

TEST(TrainingEvidence, AnMpiLauncherBesideGpuWorkersIsTraining) {
  expectTraining(classifyYaml(volcanoMpiJob(
                     "sleep 10; mpiexec --host ${MPI_HOST} -np 2 python /tmp/gpu-test.py;", 2)),
                 "container mpimaster of mpimaster runs mpiexec (an MPI launcher)");
  // The same master running nccl-tests: a benchmark. Then the coordinator's
  // sign is withheld too.
  expectBatch(classifyYaml(
      volcanoMpiJob("mpirun -np 2 /opt/nccl-tests/build/all_reduce_perf -b 8 -e 1G", 2)));
}

TEST(TrainingEvidence, ACoordinatorBesideSeveralGpuPodsIsTraining) {
  // Without a launcher in sight, a master and two GPU workers.
  expectTraining(classifyYaml(volcanoMpiJob("sleep 3600", 2)),
                 "a coordinator (mpimaster) and 2 GPU Pods (mpiworker)");
  // One GPU worker is no distributed run.
  expectBatch(classifyYaml(volcanoMpiJob("sleep 3600", 1)));
}

std::string jobSet(const std::string& coordinator, int parallelism) {
  return R"(apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec:
  replicatedJobs:
  - name: )" +
         coordinator +
         R"(
    template:
      spec:
        template:
          spec:
            containers: [{name: main, image: x, command: [sleep, '30']}]
  - name: workers
    template:
      spec:
        parallelism: )" +
         std::to_string(parallelism) + R"(
        completions: )" +
         std::to_string(parallelism) + R"(
        template:
          spec:
            containers:
            - {name: main, image: x, command: [python, main.py],
               resources: {limits: {nvidia.com/gpu: 8}}}
)";
}

TEST(TrainingEvidence, AJobSetsLeaderAndItsGpuWorkersAreTraining) {
  expectTraining(classifyYaml(jobSet("leader", 4)),
                 "a coordinator (leader) and 4 GPU Pods (workers)");
  expectTraining(classifyYaml(jobSet("coordinator", 2)),
                 "a coordinator (coordinator) and 2 GPU Pods (workers)");
  expectBatch(classifyYaml(jobSet("leader", 1)));
  // A driver that hands out shards is no coordinator of ranks.
  expectBatch(classifyYaml(jobSet("driver", 4)));
}

std::string rayJob(const std::string& entrypoint) {
  return R"(apiVersion: ray.io/v1
kind: RayJob
metadata: {name: ray}
spec:
  entrypoint: )" +
         entrypoint +
         R"(
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-head
            image: rayproject/ray-ml:2.46.0-gpu
            resources: {limits: {nvidia.com/gpu: '1'}}
)";
}

TEST(TrainingEvidence, ARayJobsEntrypointIsReadLikeACommand) {
  // KubeRay's PyTorch text-classifier sample.
  expectTraining(classifyYaml(rayJob("python ray-operator/config/samples/pytorch-text-classifier/"
                                     "fine-tune-pytorch-text-classifier.py")),
                 "its entrypoint runs fine-tune-pytorch-text-classifier.py (a training program)");
  expectBatch(classifyYaml(rayJob("python batch_inference.py --model llama")));
  expectBatch(classifyYaml(rayJob("python ray_data_pipeline.py")));
}

// A kind added in the profiles directory names its entrypoint in its row.
TEST(TrainingEvidence, AnAddedKindsEntrypointIsReadFromItsRow) {
  const ProfileLoadResult loaded = loadProfileText(R"(apiVersion: aiadmit.dev/v1
kind: Profile
metadata: {name: batch}
spec: {class: batch}
---
apiVersion: aiadmit.dev/v1
kind: WorkloadType
metadata: {name: runs}
spec:
  group: example.com
  kind: Run
  resource: runs
  class: batch
  entrypoint: /spec/command
  templates:
  - {role: worker, template: /spec/template}
)",
                                                   "runs.yaml", mutationSwitches());
  ASSERT_TRUE(loaded.ok()) << testing::formatLoadErrors(loaded.errors);
  const auto run = [&](const std::string& command) {
    return classifyYaml(
        "apiVersion: example.com/v1\nkind: Run\nmetadata: {name: r}\n"
        "spec:\n  command: " +
            command +
            "\n  template:\n    spec:\n      containers:\n"
            "      - {name: w, image: x, resources: {limits: {nvidia.com/gpu: 1}}}\n",
        false, *loaded.workloadTypes);
  };
  expectTraining(run("python train.py --epochs 3"),
                 "its entrypoint runs train.py (a training program)");
  expectBatch(run("python score.py"));
}

TEST(TrainingEvidence, OnlyTheKindsBatchIsTakenForTraining) {
  // A Deployment that runs torchrun is still the kind's server (AIA002 is
  // the developer's to hear of, on a declared class).
  const Classified deployment = classifyYaml(R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      containers:
      - {name: main, image: x, command: [torchrun, main.py], resources: {limits: {nvidia.com/gpu: 1}}}
)");
  EXPECT_EQ(className(deployment.classification().workloadClass), "realtime");
  // A declared class is the developer's statement, whatever the object runs.
  const Classified declared = classifyYaml(gpuJob(
      "        image: x\n        command: [torchrun, main.py]\n", "{aiadmit.dev/workload: batch}"));
  EXPECT_EQ(className(declared.classification().workloadClass), "batch");
  EXPECT_TRUE(declared.classification().declared());
  // A value that is no class is AIA001's: the kind decides, as before.
  const Classified unknown =
      classifyYaml(gpuJob("        image: x\n        command: [torchrun, main.py]\n",
                          "{aiadmit.dev/workload: trainnig}"));
  EXPECT_EQ(className(unknown.classification().workloadClass), "batch");
  // aiadmit's stamp is its record of the earlier decision.
  const Classified stamped = classifyYaml(gpuJob(
      "        image: x\n        command: [torchrun, main.py]\n", "{aiadmit.dev/class: batch}"));
  EXPECT_EQ(className(stamped.classification().workloadClass), "batch");
  EXPECT_EQ(stamped.classification().basis, ClassBasis::ClassStamp);
}

TEST(TrainingEvidence, AControllersObjectIsItsWorkloadsRole) {
  // A Job a JobSet made is judged by what the JobSet was: no sign is read.
  const Classified child =
      classifyYaml(gpuJob("        image: x\n        command: [torchrun, main.py]\n"), true);
  expectBatch(child);
}

TEST(TrainingEvidence, NoSignWithoutGpus) {
  // The launcher alone asks for no accelerator: no AI workload at all.
  const Classified cpu = classifyYaml(R"(apiVersion: batch/v1
kind: Job
metadata: {name: cpu}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: x, command: [torchrun, main.py]}]
)");
  EXPECT_FALSE(cpu.classification().isAiWorkload());
}

}  // namespace
}  // namespace aiadmit
