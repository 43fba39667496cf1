// Signs of training that a workload shows beyond its kind. A Job, a bare Pod,
// a JobSet, a Volcano Job or a RayJob is batch by its kind, and the kind
// cannot tell a training run from batch inference; what the object runs
// often can. Batch gets the batch profile's priority and, were its class
// declared, a deadline that would end a long run.
//
// The signs are those that public manifests show (docs/rules.md, "Training
// told by what it runs"):
//  - a distributed training launcher in a GPU container's command or args:
//    torchrun, `python -m torch.distributed.run` (or `.launch`), deepspeed,
//    `accelerate launch`; or an MPI launcher (mpirun, mpiexec, horovodrun) in
//    any container of a workload that asks for GPUs (the launcher's own Pod
//    asks for none);
//  - torchrun's flags `--nnodes`, `--nproc_per_node` (`--nproc-per-node`);
//  - a training entry point: a script, a module or a subcommand whose name
//    says train, finetune, pretrain or sft (`train.py`, `axolotl.cli.train`,
//    `fine-tune-classifier.py`, `axolotl train`), in a GPU container or in a
//    RayJob's entrypoint;
//  - PyTorch's distributed environment written into a GPU container
//    (MASTER_ADDR, WORLD_SIZE);
//  - an image made only for training (Axolotl's, Kubeflow Trainer's
//    torchtune trainer); generic framework images (pytorch/pytorch,
//    nvcr.io/nvidia/pytorch, NeMo) run inference too and are no sign alone;
//  - a coordinator (a template whose role says master, coordinator, leader,
//    launcher or chief) beside GPU templates of more than one Pod.
// A container that also runs something named for inference, evaluation or a
// benchmark (infer.py, `vllm serve`, example_chat_completion.py under
// torchrun, nccl-tests' all_reduce_perf under mpirun) gives no sign, and
// neither does a workload such a container is part of for the coordinator's
// sign: torchrun and mpirun launch inference and benchmarks too.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "webhook/model/pod_reader.h"
#include "webhook/model/workload.h"

namespace aiadmit {

// The first sign of training the workload shows, in template order, as a
// phrase for its class's reason ("container trainer runs torchrun, PyTorch's
// distributed launcher"); nullopt when it shows none. `templates` and `pods`
// are the workload's, one reader per template.
std::optional<std::string> trainingSign(std::span<const PodTemplateView> templates,
                                        std::span<const PodReader> pods);

}  // namespace aiadmit
